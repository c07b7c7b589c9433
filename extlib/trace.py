"""The data that flows through every method: Task in, Prediction (answer + full trace + usage) out."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .errors import UserError

LANGS = ("en", "zh")


@dataclass
class Task:
    id: str
    question: str
    knowledge: str
    answers: list[str] = field(default_factory=list)
    lang: str = "en"
    metric: str = ""  # hotpotqa | en | zh (extlib.metrics); empty = the language's InfiniteBench rule
    passages: list[str] = field(default_factory=list)  # the knowledge as retrieved passages, when it is that
    meta: dict[str, Any] = field(default_factory=dict)  # dataset facts: gold evidence positions, source, length

    def __post_init__(self) -> None:
        if not isinstance(self.question, str) or not self.question.strip():
            raise UserError(f"task {self.id!r}: the question is empty")
        if not isinstance(self.knowledge, str) or not self.knowledge.strip():
            raise UserError(f"task {self.id!r}: the knowledge text is empty")
        if self.lang not in LANGS:
            raise UserError(f"task {self.id!r}: lang must be one of {LANGS}, got {self.lang!r}")
        self.metric = self.metric or self.lang


@dataclass
class CallRecord:
    """One agent call, as written to traces."""

    role: str  # seek | rate | reason | answer
    round: int
    chunk: int | None  # the seeking agent's chunk index; None for the reasoning agent
    step: int | None  # KAR step: number of messages given to the reasoning agent
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    start: float
    end: float
    output: str
    score: float | None = None
    cache_hit: bool = False
    attempts: int = 1
    error: str | None = None
    dropped: str | None = None  # why a seeking reply was kept off the scratchpad, or a reasoning answer not taken
    posted: str | None = None  # what a kept seeking reply put on the scratchpad, when not the reply itself
    prefill_seconds: float | None = None  # the server's time reading the prompt's computed (not cached) tokens
    generation_seconds: float | None = None  # and writing the reply (None: the endpoint does not say)
    cache_seconds: float | None = None  # and copying prompt states in and out of its prompt-state cache

    def absorb(self, follow_up: CallRecord) -> None:
        """Count a follow-up turn of the same conversation as part of this call: its tokens, its server times and
        its end (the reply stays this call's; the caller adds what it needs of the follow-up's)."""
        self.prompt_tokens += follow_up.prompt_tokens
        self.completion_tokens += follow_up.completion_tokens
        self.cached_tokens += follow_up.cached_tokens
        self.end = follow_up.end
        for name in ("prefill_seconds", "generation_seconds", "cache_seconds"):
            if getattr(follow_up, name) is not None:
                setattr(self, name, (getattr(self, name) or 0.0) + getattr(follow_up, name))


@dataclass
class Prediction:
    task_id: str
    answer: str
    rounds: int
    calls: list[CallRecord]
    error: str | None = None  # set when the question failed; the row is still kept
    extra: dict[str, Any] = field(default_factory=dict)  # method-specific measures (e.g. search turns)

    @property
    def usage(self) -> dict[str, Any]:
        served = [c for c in self.calls if not c.cache_hit and c.error is None]
        wall = (max(c.end for c in self.calls) - min(c.start for c in self.calls)) if self.calls else 0.0
        return {
            "calls": len(self.calls),
            "prompt_tokens": sum(c.prompt_tokens for c in self.calls),
            "completion_tokens": sum(c.completion_tokens for c in self.calls),
            "cached_tokens": sum(c.cached_tokens for c in self.calls),  # prompt tokens the server reused
            "cache_hits": sum(c.cache_hit for c in self.calls),
            "failed_calls": sum(c.error is not None for c in self.calls),
            # summed call latencies, queueing at the server included: concurrent calls overlap, so this
            # exceeds wall_seconds whenever calls run (or wait) side by side
            "call_seconds": round(sum(c.end - c.start for c in served), 3),
            "wall_seconds": round(wall, 3),
            # the server's own prefill / generation time, summed over the calls that report it (None: none does)
            "prefill_seconds": _total([c.prefill_seconds for c in served]),
            "generation_seconds": _total([c.generation_seconds for c in served]),
            "cache_seconds": _total([c.cache_seconds for c in served]),
        }

    def summary(self, name: str) -> str:
        """A few lines for a person: the answer, an error if any, and what it cost."""
        u = self.usage
        status = f"  error: {self.error}\n" if self.error else ""
        return (f"[{name}] answer: {self.answer or '(none)'}\n{status}"
                f"  rounds: {self.rounds}  calls: {u['calls']}  prompt tokens: {u['prompt_tokens']}  "
                f"completion tokens: {u['completion_tokens']}  cache hits: {u['cache_hits']}  "
                f"wall: {u['wall_seconds']:.1f}s")

    def to_dict(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "answer": self.answer, "rounds": self.rounds, "error": self.error,
                "usage": self.usage, "extra": self.extra, "calls": [asdict(c) for c in self.calls]}


def _total(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(sum(known), 3) if known else None


def write_trace(path: Path, task: Task, document: str, llm: Any, predictions: dict[str, Prediction]) -> None:
    """Every agent call of each method's answer to `task`, with the document's name and the model, as JSON."""
    record = {"question": task.question, "document": document, "model": llm.model, "base_url": llm.base_url,
              "predictions": {name: p.to_dict() for name, p in predictions.items()}}
    path.write_text(json.dumps(record, ensure_ascii=False, indent=1))
