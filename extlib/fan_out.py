"""One helper that runs a method's independent agent calls: all at once (the LLM client bounds how many are
in flight), or one after another (the official release's behaviour, and a debugging aid), with a progress
bar on request (`progress_bar`, which every long loop of the library uses). Results come back in the order of
the jobs."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

from tqdm import tqdm

T = TypeVar("T")


def progress_bar(progress: bool, **options: Any) -> tqdm:
    """A tqdm bar (`options` as tqdm takes them), off unless `progress`. When on, tqdm's own defaults stand, so
    TQDM_DISABLE=1 in the environment turns it off too: the notebooks that presets execute headless save no bars,
    while the terminal that runs them keeps its own."""
    return tqdm(**options) if progress else tqdm(**options, disable=True)


async def fan_out(jobs: list[Awaitable[T]], desc: str = "agent calls", sequential: bool = False,
                  progress: bool = False) -> list[T]:
    """Await every job and return their results in job order. Agent calls report a failure in their result
    (extlib.calls.call), so one failed call never cancels the others."""
    with progress_bar(progress, total=len(jobs), desc=desc, unit="call", leave=False) as bar:
        async def tick(job: Awaitable[T]) -> T:
            result = await job
            bar.update(1)
            return result

        if sequential:
            return [await tick(job) for job in jobs]
        return list(await asyncio.gather(*map(tick, jobs)))
