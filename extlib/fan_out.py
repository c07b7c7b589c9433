"""One helper that runs a method's independent agent calls: all at once (the LLM client bounds how many are
in flight), or one after another (the official release's behaviour, and a debugging aid), with a progress
bar on request. Results come back in the order of the jobs."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from tqdm import tqdm

T = TypeVar("T")


async def fan_out(jobs: list[Awaitable[T]], desc: str = "agent calls", sequential: bool = False,
                  progress: bool = False) -> list[T]:
    """Await every job and return their results in job order. Agent calls report a failure in their result
    (extlib.calls.call), so one failed call never cancels the others."""
    with tqdm(total=len(jobs), desc=desc, unit="call", leave=False, disable=not progress) as bar:
        async def tick(job: Awaitable[T]) -> T:
            result = await job
            bar.update(1)
            return result

        if sequential:
            return [await tick(job) for job in jobs]
        return list(await asyncio.gather(*map(tick, jobs)))
