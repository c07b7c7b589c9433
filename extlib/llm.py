"""One LLM client for every OpenAI-compatible endpoint: llama.cpp, vLLM, the OpenAI API.

Bounded concurrency, bounded retries with backoff (then a typed LLMError, never an endless loop),
a persistent response cache, and per-call usage and timing for the trace.
"""

from __future__ import annotations

import asyncio
import copy
import os
import random
import time
import weakref
from dataclasses import dataclass
from typing import Any

import openai

from .cache import ResponseCache, cache_key
from .errors import ModelCallRefused, UserError
from .tokenizer import Tokenizer

RETRYABLE = (openai.APIConnectionError, openai.APITimeoutError, openai.RateLimitError,
             openai.InternalServerError)


# The openai clients opened on each event loop, closed by `close_connections` before the loop ends (an httpx pool
# left to the garbage collector tries to close itself on a loop that is gone and prints a traceback).
_OPENED: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[Any]] = weakref.WeakKeyDictionary()


async def close_connections() -> None:
    """Close the openai clients opened on the running event loop (`run_sync` calls this as its loop ends)."""
    for client in _OPENED.pop(asyncio.get_running_loop(), []):
        await client.close()


class LLMError(Exception):
    """A call that failed for good: `kind` is retries-exhausted, bad-request, not-found, auth, ..."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind


@dataclass
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int  # prompt tokens the server served from its prefix cache
    start: float  # time.time() at send, end at receipt
    end: float
    cache_hit: bool  # answered from our response cache: no server time was spent
    attempts: int
    # the server's own split of the call's time, when it reports one (the bundled server does, as llama.cpp's
    # `timings`); None elsewhere (the OpenAI API, vLLM) and for answers from the response cache
    prefill_seconds: float | None = None
    generation_seconds: float | None = None
    cache_seconds: float | None = None  # the server copying prompt states in and out of its cache (bundled server)


class LLMClient:
    """`await llm.complete("prompt", max_tokens=64)` -> Completion; messages lists also accepted."""

    def __init__(self, base_url: str | None = None, model: str = "gpt-4o-mini", *, model_id: str | None = None,
                 model_sha256: str | None = None,
                 api_key: str | None = None, tokenizer: Tokenizer | None = None, concurrency: int = 4,
                 max_retries: int = 4, timeout_s: float = 600.0, temperature: float = 0.0,
                 cache: ResponseCache | None = None, extra_body: dict[str, Any] | None = None,
                 backoff_s: float = 1.0, offline: bool = False) -> None:
        if concurrency < 1:
            raise UserError(f"concurrency must be >= 1, got {concurrency}")
        if max_retries < 0:
            raise UserError(f"max_retries must be >= 0, got {max_retries}")
        self.base_url = base_url
        self.model = model
        self.model_id = model_id or f"{model}@{base_url or 'openai'}"
        self.model_sha256 = model_sha256  # of the weights, when known (bundled models): recorded in every row
        self.tokenizer = tokenizer
        self.concurrency = concurrency
        self.max_retries = max_retries
        self.temperature = temperature
        self.cache = cache
        self.extra_body = extra_body or {}
        self.backoff_s = backoff_s
        self.offline = offline  # a client that only names the model and counts tokens: every call is refused
        # The key comes from the argument or OPENAI_API_KEY and is handed only to the openai client.
        key = api_key or os.environ.get("OPENAI_API_KEY") or ("none" if base_url else None)
        if key is None:
            raise UserError("no API key: set OPENAI_API_KEY, or pass --base-url for a local server")
        self._connect = lambda: openai.AsyncOpenAI(base_url=base_url, api_key=key, max_retries=0,
                                                   timeout=timeout_s)
        self._client: Any = None  # a fixed backend (tests); otherwise one openai client per event loop
        self._loops: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def with_concurrency(self, concurrency: int) -> LLMClient:
        """The same endpoint, model, cache and tokenizer with another bound on calls in flight."""
        if concurrency < 1:
            raise UserError(f"concurrency must be >= 1, got {concurrency}")
        clone = copy.copy(self)
        clone.concurrency = concurrency
        clone._loops = weakref.WeakKeyDictionary()
        return clone

    def __repr__(self) -> str:  # never shows the key
        return f"LLMClient(model={self.model!r}, base_url={self.base_url!r})"

    def _connection(self) -> tuple[Any, asyncio.Semaphore]:
        """The openai client and the concurrency bound of the running event loop: every `run` (and each
        notebook cell) brings its own loop, and an httpx connection pool must not outlive its loop."""
        loop = asyncio.get_running_loop()
        if loop not in self._loops:
            client = self._client
            if client is None:
                client = self._connect()
                _OPENED.setdefault(loop, []).append(client)
            self._loops[loop] = (client, asyncio.Semaphore(self.concurrency))
        return self._loops[loop]

    async def list_models(self) -> list[str]:
        refuse_offline(self.offline)
        client, _ = self._connection()
        return [m.id async for m in client.models.list()]

    async def reachable(self) -> bool:
        """Whether the endpoint answers at all (a server that died refuses the connection); any answer counts,
        even an error status, since only a dead endpoint makes every later question fail the same way."""
        try:
            await self.list_models()
        except openai.APIConnectionError:
            return False
        except Exception:  # an answer of any kind: the server is there
            return True
        return True

    async def complete(self, prompt: str | list[dict], max_tokens: int = 256,
                       temperature: float | None = None, stop: list[str] | None = None,
                       seed: int | None = None, frequency_penalty: float | None = None) -> Completion:
        """`stop`: generation ends before any of these strings (search agents stop after `</search>`); `seed`: the
        server's sampling seed, so repeated samples of one prompt differ from each other (and are cached apart);
        `frequency_penalty`: the OpenAI parameter against repeating tokens (long writing with a small model)."""
        refuse_offline(self.offline)
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
        params = {"max_tokens": max_tokens,
                  "temperature": self.temperature if temperature is None else temperature,
                  **({"stop": list(stop)} if stop else {}), **({"seed": seed} if seed is not None else {}),
                  **({"frequency_penalty": frequency_penalty} if frequency_penalty else {}),
                  **self.extra_body}
        key = cache_key(self.model_id, messages, params) if self.cache is not None else None
        if key and (hit := self.cache.get(key)):
            now = time.time()
            return Completion(hit["text"], hit["prompt_tokens"], hit["completion_tokens"],
                              hit["cached_tokens"], now, now, cache_hit=True, attempts=0)
        client, semaphore = self._connection()
        async with semaphore:
            completion = await self._call_with_retries(client, messages, params)
        if key:
            self.cache.put(key, {"text": completion.text, "prompt_tokens": completion.prompt_tokens,
                                 "completion_tokens": completion.completion_tokens,
                                 "cached_tokens": completion.cached_tokens})
        return completion

    async def _call_with_retries(self, client: Any, messages: list[dict], params: dict[str, Any]) -> Completion:
        body = dict(params)
        standard = {k: body.pop(k) for k in ("max_tokens", "temperature", "stop", "seed", "frequency_penalty")
                    if k in body}
        for attempt in range(1, self.max_retries + 2):
            start = time.time()
            try:
                response = await client.chat.completions.create(
                    model=self.model, messages=messages, extra_body=body or None, **standard)
            except RETRYABLE as exc:
                if attempt > self.max_retries:
                    raise LLMError("retries-exhausted", f"{type(exc).__name__} after {attempt} attempts: "
                                   f"{_short(exc)}") from exc
                await asyncio.sleep(self.backoff_s * 2 ** (attempt - 1) * (0.5 + random.random()))
                continue
            except openai.NotFoundError as exc:
                raise LLMError("not-found", f"model {self.model!r} or endpoint not found at "
                               f"{self.base_url or 'the OpenAI API'}: {_short(exc)}") from exc
            except openai.AuthenticationError as exc:
                raise LLMError("auth", "the server rejected the API key (check OPENAI_API_KEY)") from exc
            except openai.BadRequestError as exc:
                raise LLMError("bad-request", _short(exc)) from exc
            except openai.APIStatusError as exc:
                raise LLMError(f"http-{exc.status_code}", _short(exc)) from exc
            except openai.APIError as exc:  # e.g. a response that does not parse as a completion
                raise LLMError("bad-response", _short(exc)) from exc
            end = time.time()
            if not response.choices:
                raise LLMError("empty-response", "the server returned no choices")
            usage = response.usage
            details = getattr(usage, "prompt_tokens_details", None) if usage else None
            timings = getattr(usage, "timings", None) if usage else None
            timings = timings if isinstance(timings, dict) else {}
            return Completion(
                text=response.choices[0].message.content or "",
                prompt_tokens=usage.prompt_tokens if usage else 0,
                completion_tokens=usage.completion_tokens if usage else 0,
                cached_tokens=(getattr(details, "cached_tokens", 0) or 0) if details else 0,
                start=start, end=end, cache_hit=False, attempts=attempt,
                prefill_seconds=_seconds(timings.get("prompt_ms")),
                generation_seconds=_seconds(timings.get("predicted_ms")),
                cache_seconds=_seconds(timings.get("cache_ms")))
        raise AssertionError("unreachable")

    def count_tokens(self, text: str) -> int:
        if self.tokenizer is None:
            raise ValueError(f"{self!r} has no tokenizer; pass tokenizer=... (see extlib.tokenizer)")
        return len(self.tokenizer.encode(text))


def offline_requested() -> bool:
    """Whether EXTAGENTS_OFFLINE is set (to anything but "" or "0"): `extagents figures` sets it while it draws a
    committed study, so that no notebook can call a model or start a server, whatever its code does."""
    return os.environ.get("EXTAGENTS_OFFLINE", "") not in ("", "0")


def refuse_offline(offline: bool = False) -> None:
    """Raise ModelCallRefused when this client is offline or EXTAGENTS_OFFLINE is set."""
    if offline or offline_requested():
        raise ModelCallRefused("a model call was asked for while drawing committed rows (no model call may happen "
                               "then); computing is explicit: `extagents figures --preset <preset> --compute` or "
                               "`make study`")


def _seconds(milliseconds: Any) -> float | None:
    return round(milliseconds / 1000, 4) if isinstance(milliseconds, int | float) else None


def _short(exc: Exception) -> str:
    text = str(exc)
    return text if len(text) < 400 else text[:400] + "..."
