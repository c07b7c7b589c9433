"""The latency schedule and the call-cost model, on calls with known costs."""

import math

import pandas as pd
import pytest

from extlib.latency import CallCostModel, makespan, schedule_seconds


def test_makespan_schedules_longest_first():
    assert makespan([3, 3, 2, 2, 2], 2) == 7  # longest first: (3, 2, 2) and (3, 2); as a greedy queue would
    assert makespan([4, 3, 3], 2) == 6
    assert makespan([5, 1, 1], math.inf) == 5 and makespan([5, 1, 1], 1) == 7 and makespan([], 4) == 0


def calls() -> pd.DataFrame:
    # round 1: four seeking calls of 10 s, one rating of 1 s, two reasoning steps of 2 s
    rows = [{"round": 1, "role": "seek", "prompt_tokens": 1000, "completion_tokens": 0}] * 4
    rows.append({"round": 1, "role": "rate", "prompt_tokens": 100, "completion_tokens": 0})
    rows += [{"round": 1, "role": "reason", "prompt_tokens": 200, "completion_tokens": 0}] * 2
    frame = pd.DataFrame(rows)
    frame["start"] = 0.0
    frame["end"] = frame.prompt_tokens / 100  # 100 tokens a second, nothing else
    frame["error"], frame["cache_hit"] = None, False
    return frame


def test_the_schedule_runs_seeking_calls_side_by_side_and_reasoning_in_turn():
    frame = calls()
    seconds = frame.end - frame.start
    assert schedule_seconds(frame, seconds, 1) == pytest.approx(40 + 1 + 4)
    assert schedule_seconds(frame, seconds, 2) == pytest.approx(20 + 1 + 4)
    assert schedule_seconds(frame, seconds, math.inf) == pytest.approx(10 + 1 + 4)  # the critical path


def test_the_cost_model_recovers_prefill_and_generation_rates():
    frame = pd.DataFrame({"prompt_tokens": [100, 500, 1000, 200, 800], "completion_tokens": [10, 50, 5, 100, 20]})
    frame["start"] = 0.0
    frame["end"] = 0.3 + frame.prompt_tokens / 85 + frame.completion_tokens / 28
    frame["error"], frame["cache_hit"] = None, False
    model = CallCostModel(frame)
    assert model.per_prompt_token == pytest.approx(1 / 85, rel=1e-6) and model.r2 > 0.999
    assert model.per_completion_token == pytest.approx(1 / 28, rel=1e-6)
    assert model.predict(frame).round(6).tolist() == (frame.end - frame.start).round(6).tolist()
    with pytest.raises(ValueError, match="at least 3 measured calls"):
        CallCostModel(frame.head(2))
