"""What every method shares: a declared configuration checked in one place, `await method.arun(task, llm)`
-> Prediction, and a sync `run` that also works inside Jupyter (whose event loop is already running).

A configuration is a dataclass of `knob(...)` fields. Each knob says what it means (`help`, shown by the
CLI) and what values it takes: ints are positive unless `low` says otherwise, `int | None` is a positive
int or None, `choices` and `low`/`high` bound the rest. `MethodConfig.__post_init__` checks them all, then
the config's own `check()` for rules between fields.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import typing
from collections.abc import Coroutine
from typing import Any, TypeVar

from ..chunking import TRUNCATE_SIDES
from ..errors import UserError
from ..llm import LLMClient, close_connections
from ..trace import Prediction, Task

T = TypeVar("T")


class UnknownKnob(TypeError, UserError):
    """A knob no configuration in play has: a misspelling, never silently dropped."""


def knob(default: Any, help: str, *, choices: tuple | None = None, low: float | None = None,
         high: float | None = None, **field_options: Any) -> Any:
    """A configuration field that documents and bounds itself (see the module docstring)."""
    meta = {"help": help, "choices": choices, "low": low, "high": high}
    if isinstance(default, list):
        return dataclasses.field(default_factory=lambda: list(default), metadata=meta, **field_options)
    return dataclasses.field(default=default, metadata=meta, **field_options)


def knob_types(config_class: type) -> dict[str, Any]:
    """Field name -> its declared type (the annotations are strings under `from __future__ import annotations`)."""
    return typing.get_type_hints(config_class)


def _check_value(name: str, value: Any, kind: Any, meta: dict) -> None:
    optional = type(None) in typing.get_args(kind)
    if value is None and optional:
        return
    base = next((t for t in typing.get_args(kind) if t is not type(None)), kind) if optional else kind
    choices, low, high = meta.get("choices"), meta.get("low"), meta.get("high")
    if choices is not None:
        if value not in choices:
            raise UserError(f"{name} must be one of {tuple(choices)}, got {value!r}")
        return
    if base is bool:
        if not isinstance(value, bool):
            raise UserError(f"{name} must be true or false, got {value!r}")
    elif base is int:
        low = 1 if low is None else low
        what = "a positive integer" if low == 1 else f"an integer >= {low:g}"
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise UserError(f"{name} must be {what}{' or None' if optional else ''}, got {value!r}")
    elif base is float:
        if not isinstance(value, (int, float)) or isinstance(value, bool) or \
                (low is not None and value < low) or (high is not None and value > high):
            bounds = f"between {low:g} and {high:g}" if low is not None and high is not None else "a number"
            raise UserError(f"{name} must be {bounds}{' or None' if optional else ''}, got {value!r}")
    elif base is str and not isinstance(value, str):
        raise UserError(f"{name} must be a string, got {value!r}")


@dataclasses.dataclass
class MethodConfig:
    """Base of every method's configuration."""

    def __post_init__(self) -> None:
        kinds = knob_types(type(self))
        for f in dataclasses.fields(self):
            _check_value(f.name, getattr(self, f.name), kinds[f.name], f.metadata)
        self.check()

    def check(self) -> None:
        """Rules between fields; a config with some overrides this."""


@dataclasses.dataclass
class WindowConfig(MethodConfig):
    context_window: int = knob(8192, "L, the model's context window in tokens (also the local server's n_ctx)")
    input_tokens: int | None = knob(None, "cut the knowledge to this many tokens first (None: all of it)")


@dataclasses.dataclass
class TruncatedConfig(WindowConfig):
    truncate: str = knob("middle", "which tokens a cut keeps: front (retrieval order, best first) or middle "
                         "(both ends, InfiniteBench's rule for books)", choices=TRUNCATE_SIDES)


@dataclasses.dataclass
class ChunkedConfig(TruncatedConfig):
    chunk_tokens: int = knob(2048, "|d_i|, the tokens of knowledge each agent reads")
    paragraphs: bool = knob(False, "pack whole paragraphs into chunks instead of cutting fixed-size pieces (a "
                            "passage that fits a chunk is never split between two agents)")

    def check(self) -> None:
        if self.chunk_tokens >= self.context_window:
            raise UserError(f"chunk_tokens ({self.chunk_tokens}) must be below context_window "
                            f"({self.context_window}) to leave room for the question and messages")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to the end on a loop of its own (in a thread when the caller already runs one, as a notebook does),
    closing the connections it opened before the loop ends."""
    async def closing() -> T:
        try:
            return await coro
        finally:
            await close_connections()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(closing())
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, closing()).result()


class Method:
    """`config_class` holds the knobs: `Method(config)` or `Method(**knobs)`; an unknown knob is an error
    that lists the valid ones. `progress` shows a bar for each fan-out of agent calls (not a setting of
    the method, so not part of a run's identity)."""

    name = "method"
    version = 1  # of its behaviour, bumped when answers change (tests/test_method_versions.py): rows of
    #              another version are stale, recomputed and never mixed into a table
    config_class: type[MethodConfig] = MethodConfig

    def __init__(self, config: MethodConfig | None = None, *, progress: bool = False, **knobs: Any) -> None:
        if config is not None and knobs:
            raise TypeError(f"{type(self).__name__}: give a config or knobs, not both")
        if config is None:
            valid = [f.name for f in dataclasses.fields(self.config_class)]
            unknown = sorted(set(knobs) - set(valid))
            if unknown:
                raise UnknownKnob(f"unknown {type(self).__name__} option(s): {', '.join(unknown)}; "
                                  f"valid: {', '.join(valid)}")
            config = self.config_class(**knobs)
        elif not isinstance(config, self.config_class):
            raise TypeError(f"{type(self).__name__} takes a {self.config_class.__name__}, got {type(config).__name__}")
        self.config = config
        self.progress = progress

    async def arun(self, task: Task, llm: LLMClient, reasoning_llm: LLMClient | None = None) -> Prediction:
        raise NotImplementedError

    def run(self, task: Task, llm: LLMClient, reasoning_llm: LLMClient | None = None) -> Prediction:
        return run_sync(self.arun(task, llm, reasoning_llm))
