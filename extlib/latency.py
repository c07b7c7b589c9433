"""How long a question takes when the agents' calls run side by side: the schedule ExtAgents allows, measured
call costs, and a fitted model of them.

Within a round the seeking calls are independent, and so are the rating calls; the reasoning steps (KAR) run one
after another. With `processes` workers serving calls at once, a round's seeking calls take the makespan of a
longest-first schedule on that many workers; with unlimited workers they take as long as the slowest one (the
critical path). The per-call cost is fitted as seconds = a + b x prompt tokens + c x completion tokens (prefill and
generation), from calls measured one at a time, so a schedule can be predicted for more workers than the machine
has: what the paper's Table 5 does for 16 processes.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable

import numpy as np
import pandas as pd
from sklearn.linear_model import LinearRegression

from .errors import UserError

PARALLEL_ROLES = ("seek", "rate")  # independent within a round; every other role runs in turn


def makespan(durations: Iterable[float], processes: int | float) -> float:
    """Finish time of independent jobs on `processes` workers, longest first (LPT); math.inf workers: the
    longest job."""
    jobs = sorted(durations, reverse=True)
    if not jobs:
        return 0.0
    if math.isinf(processes) or processes >= len(jobs):
        return jobs[0]
    workers = [0.0] * int(processes)
    for job in jobs:
        heapq.heappush(workers, heapq.heappop(workers) + job)
    return max(workers)


def schedule_seconds(calls: pd.DataFrame, seconds: pd.Series, processes: int | float) -> float:
    """A question's latency when its calls take `seconds` and `processes` of them run at once: per round, the
    makespan of the seeking calls, then of the rating calls, then every other call in turn."""
    total = 0.0
    for _, round_calls in calls.groupby("round", sort=True):
        for role in PARALLEL_ROLES:
            total += makespan(seconds[round_calls.index[round_calls.role == role]], processes)
        total += float(seconds[round_calls.index[~round_calls.role.isin(PARALLEL_ROLES)]].sum())
    return total


class CallCostModel:
    """seconds = a + b x prompt tokens + c x completion tokens, fitted to calls measured one at a time."""

    def __init__(self, calls: pd.DataFrame) -> None:
        served = calls[(calls.error.isna()) & (~calls.cache_hit)]
        if len(served) < 3:
            raise UserError(f"need at least 3 measured calls to fit a cost model, got {len(served)}")
        self.fit = LinearRegression(positive=True).fit(served[["prompt_tokens", "completion_tokens"]],
                                                       served.end - served.start)
        self.r2 = float(self.fit.score(served[["prompt_tokens", "completion_tokens"]], served.end - served.start))

    @property
    def per_prompt_token(self) -> float:
        return float(self.fit.coef_[0])

    @property
    def per_completion_token(self) -> float:
        return float(self.fit.coef_[1])

    def predict(self, calls: pd.DataFrame) -> pd.Series:
        return pd.Series(np.maximum(self.fit.predict(calls[["prompt_tokens", "completion_tokens"]]), 0.0),
                         index=calls.index)
