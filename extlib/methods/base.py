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


def check_config(config: Any, positive: tuple[str, ...], chunked: bool = False) -> None:
    """Every named field a positive integer; with `chunked`, a chunk below the window and a known truncation."""
    from ..chunking import TRUNCATE_SIDES

    def ok(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value > 0

    bad = [f"{n}={getattr(config, n)!r}" for n in positive if not ok(getattr(config, n))]
    if bad:
        raise ValueError(f"{type(config).__name__}: these must be positive integers: {', '.join(bad)}")
    if config.input_tokens is not None and (not isinstance(config.input_tokens, int) or config.input_tokens <= 0):
        raise ValueError(f"input_tokens must be a positive integer or None, got {config.input_tokens!r}")
    if chunked:
        if config.chunk_tokens >= config.context_window:
            raise ValueError(f"chunk_tokens ({config.chunk_tokens}) must be below context_window "
                             f"({config.context_window})")
        if config.truncate not in TRUNCATE_SIDES:
            raise ValueError(f"truncate must be one of {TRUNCATE_SIDES}, got {config.truncate!r}")


class Method:
    """`config_class` holds the knobs; `Method(config)` or `Method(**knobs)`."""

    name = "method"
    config_class: type = object

    def __init__(self, config: Any = None, **knobs: Any) -> None:
        self.config = config or self.config_class(**knobs)

    async def arun(self, task: Task, llm: LLMClient, reasoning_llm: LLMClient | None = None) -> Prediction:
        raise NotImplementedError

    def run(self, task: Task, llm: LLMClient, reasoning_llm: LLMClient | None = None) -> Prediction:
        return run_sync(self.arun(task, llm, reasoning_llm))
