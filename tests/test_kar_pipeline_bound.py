"""benchmarks/kar_pipeline.py's critical-path bound: the most an interleaved KAR could save on a plain run."""

import importlib.util
from pathlib import Path

from extlib.trace import CallRecord, Prediction

SCRIPT = Path(__file__).parents[1] / "benchmarks" / "kar_pipeline.py"
spec = importlib.util.spec_from_file_location("kar_pipeline", SCRIPT)
kar_pipeline = importlib.util.module_from_spec(spec)
spec.loader.exec_module(kar_pipeline)


def record(role: str, round_: int, start: float, end: float, chunk: int | None = None,
           step: int | None = None) -> CallRecord:
    return CallRecord(role=role, round=round_, chunk=chunk, step=step, prompt_tokens=10, completion_tokens=2,
                      cached_tokens=0, start=start, end=end, output="")


def plain_run(steps: list[tuple[int, float, float]], ranking: tuple[int, ...] = (0, 1, 2, 3)) -> Prediction:
    """Four agents replying at 1, 2, 3 and 4 s (those in `ranking` with a message, in order), then KAR's steps
    (messages read, start, end) after the round."""
    seeks = [record("seek", 1, 0.0, float(i + 1), chunk=i) for i in range(4)]
    reasons = [record("reason", 1, start, end, step=size) for size, start, end in steps]
    return Prediction("q", "Ann", 1, seeks + reasons, extra={"ranking": [list(ranking)]})


def test_every_step_of_the_round_counts_not_only_the_answering_one():
    # step 1 (agent 0's message) could run at 1-2 s, step 2 (agents 0-1) at 2-3 s: 3 s saved of the plain 6 s
    plain = plain_run([(1, 4.0, 5.0), (2, 5.0, 6.0)])
    assert kar_pipeline.critical_path_gain(plain, rounds_allowed=5) == 3.0


def test_the_forced_step_of_the_last_round_never_starts_early():
    # agents 0 and 1 wrote messages; step 2 reads both, all there are
    plain = plain_run([(1, 4.0, 5.0), (2, 5.0, 6.0)], ranking=(0, 1))
    assert kar_pipeline.critical_path_gain(plain, rounds_allowed=1) == 1.0  # forced: it waits for the round's end
    assert kar_pipeline.critical_path_gain(plain, rounds_allowed=5) == 3.0  # unforced: from 2 s, as agent 1 replied


def test_a_failed_run_has_no_bound():
    failed = Prediction("q", "", 1, [], error="all 4 seeking calls failed in round 1")
    assert kar_pipeline.critical_path_gain(failed, rounds_allowed=5) is None
