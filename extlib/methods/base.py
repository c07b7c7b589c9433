"""What every method shares: `await method.arun(task, llm)` -> Prediction, and a sync `run` that also
works inside Jupyter (whose event loop is already running)."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from typing import Any, TypeVar

from ..llm import LLMClient
from ..trace import Prediction, Task

T = TypeVar("T")

# Chat templates add a system prompt and role markers around our text (~30 tokens for Qwen2.5).
CHAT_OVERHEAD_TOKENS = 64


class PromptTooLong(ValueError):
    """The fixed part of a prompt (question, chunk, template) cannot fit the context window."""


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


class Method:
    name = "method"

    async def arun(self, task: Task, llm: LLMClient, reasoning_llm: LLMClient | None = None) -> Prediction:
        raise NotImplementedError

    def run(self, task: Task, llm: LLMClient, reasoning_llm: LLMClient | None = None) -> Prediction:
        return run_sync(self.arun(task, llm, reasoning_llm))
