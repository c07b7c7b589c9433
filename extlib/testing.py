"""A scripted in-process backend for unit tests and the overhead benchmark: never a result.

It stands in for the openai client inside a real LLMClient, so retries, caching, concurrency and
accounting run exactly as they do against a server; only the HTTP round trip and the model are fake.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import SimpleNamespace

from .llm import LLMClient


class ByteTokenizer:
    """One token per UTF-8 byte: exact, dependency-free, and it splits Chinese characters across tokens
    the way byte-level BPE can."""

    name = "bytes"

    def encode(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))

    def decode_bytes(self, ids: list[int]) -> bytes:
        return bytes(ids)


class ScriptedBackend:
    """`responder(prompt) -> str` answers each call; it may raise (e.g. openai.APIConnectionError). `delay_s`: the
    time each call takes, or `delay_s(prompt)` for calls of different lengths."""

    def __init__(self, responder: Callable[[str], str], delay_s: float | Callable[[str], float] = 0.0) -> None:
        self.responder = responder
        self.delay_s = delay_s
        self.prompts: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))
        self.models = SimpleNamespace(list=self._list)

    async def _create(self, model: str, messages: list[dict], **_: object) -> SimpleNamespace:
        prompt = messages[-1]["content"]
        self.prompts.append(prompt)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            delay = self.delay_s(prompt) if callable(self.delay_s) else self.delay_s
            if delay:
                await asyncio.sleep(delay)
            text = self.responder(prompt)
        finally:
            self.in_flight -= 1
        usage = SimpleNamespace(prompt_tokens=len(prompt.split()), completion_tokens=len(text.split()),
                                prompt_tokens_details=None)
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=text))], usage=usage)

    async def _list(self):
        yield SimpleNamespace(id="scripted")


def scripted_client(responder: Callable[[str], str], delay_s: float | Callable[[str], float] = 0.0,
                    **options) -> LLMClient:
    options.setdefault("tokenizer", ByteTokenizer())
    options.setdefault("backoff_s", 0.0)
    options.setdefault("api_key", "test")
    llm = LLMClient("http://scripted.invalid/v1", "scripted", **options)
    llm._client = ScriptedBackend(responder, delay_s)
    return llm
