"""One agent call: a prompt in, (text, trace record) out. A failed call is (None, a record with its error);
the method decides what that means for the question."""

from __future__ import annotations

import time

from .llm import LLMClient, LLMError
from .trace import CallRecord


async def call(llm: LLMClient, prompt: str | list[dict], max_tokens: int, role: str, round_: int,
               chunk: int | None = None, step: int | None = None,
               stop: list[str] | None = None, temperature: float | None = None, seed: int | None = None,
               frequency_penalty: float | None = None) -> tuple[str | None, CallRecord]:
    """`chunk`: the calling agent's chunk index; `step`: the KAR step (messages given to the reasoner);
    `temperature` (default: the client's) and `seed` for sampled calls such as a judge's; `frequency_penalty` for
    long writing."""
    start = time.time()
    try:
        done = await llm.complete(prompt, max_tokens=max_tokens, stop=stop, temperature=temperature, seed=seed,
                                  frequency_penalty=frequency_penalty)
    except LLMError as exc:
        return None, CallRecord(role=role, round=round_, chunk=chunk, step=step, prompt_tokens=0,
                                completion_tokens=0, cached_tokens=0, start=start, end=time.time(), output="",
                                error=str(exc))
    return done.text, CallRecord(role=role, round=round_, chunk=chunk, step=step, prompt_tokens=done.prompt_tokens,
                                 completion_tokens=done.completion_tokens, cached_tokens=done.cached_tokens,
                                 start=done.start, end=done.end, output=done.text, cache_hit=done.cache_hit,
                                 attempts=done.attempts, prefill_seconds=done.prefill_seconds,
                                 generation_seconds=done.generation_seconds, cache_seconds=done.cache_seconds)
