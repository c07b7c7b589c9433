"""Where the LLM calls go: the bundled model served locally for the length of a run, or any OpenAI-compatible
endpoint (vLLM, the OpenAI API), checked before the first question; optionally a second endpoint or bundled
model for the reasoning agent; the persistent response cache."""

from __future__ import annotations

import atexit
import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import Any

from .cache import ResponseCache
from .errors import UserError
from .llm import LLMClient, offline_requested
from .methods.base import WindowConfig, run_sync
from .models import DEFAULT_MODEL, MODELS, cache_dir, ensure_model, get_spec
from .serve import LocalServer
from .tokenizer import GGUFTokenizer, Tokenizer, load_tokenizer

DEFAULT_WINDOW = next(f.default for f in fields(WindowConfig) if f.name == "context_window")


class EndpointError(UserError):
    """An endpoint that cannot serve the run: unreachable, a rejected key, an unknown model."""


@dataclass
class EngineSettings:
    base_url: str | None = None  # an OpenAI-compatible endpoint; None: the bundled local model
    model: str | None = None  # the model name there; a bundled model's name without base_url serves it
    reasoning_base_url: str | None = None  # the reasoning agent's endpoint (default: base_url)
    reasoning_model: str | None = None  # the reasoning agent's model (default: model)
    local_model: str = DEFAULT_MODEL  # bundled model served when no base_url is given
    tokenizer: str | None = None  # gguf:PATH, hf:PATH/tokenizer.json or tiktoken:NAME for token budgets
    temperature: float = 0.0
    cache: bool = True  # the persistent response cache (off when times are measured)
    concurrency: int = 4  # LLM calls in flight at once
    context_window: int = DEFAULT_WINDOW  # the local server's n_ctx
    prompt_cache_mb: int = 512  # the local server's prompt-state cache (extlib.llama_server), so that a later
    # round's chunk-first prompt reuses the agent's round-1 reading (about 15 MB a 512-token state); 0: off
    offline: bool = False  # draw from rows on disk: no server is started and every model call is refused

    @classmethod
    def from_flags(cls, flags: Any) -> EngineSettings:
        """The settings of the command line's engine flags (an argparse namespace; no reasoning flags: None)."""
        return cls(base_url=flags.base_url, model=flags.model,
                   reasoning_base_url=getattr(flags, "reasoning_base_url", None),
                   reasoning_model=getattr(flags, "reasoning_model", None), local_model=flags.local_model,
                   tokenizer=flags.tokenizer, temperature=flags.temperature, cache=not flags.no_cache,
                   concurrency=flags.concurrency, context_window=flags.context_window or DEFAULT_WINDOW,
                   prompt_cache_mb=flags.prompt_cache_mb)


@contextlib.contextmanager
def clients(settings: EngineSettings) -> Iterator[tuple[LLMClient, LLMClient | None]]:
    """(the main client, the reasoning agent's own client or None), with any local server started for
    them stopped on the way out."""
    if settings.offline or offline_requested():
        yield _offline_client(settings), None
        return
    cache = ResponseCache(cache_dir() / "responses.sqlite") if settings.cache else None
    with contextlib.ExitStack() as stack:
        llm = _main_client(settings, stack, cache)
        reasoner = None
        if settings.reasoning_model in MODELS and not settings.reasoning_base_url:  # a second bundled model
            second = stack.enter_context(LocalServer(settings.reasoning_model, context_window=settings.context_window,
                                                     prompt_cache_mb=settings.prompt_cache_mb))
            reasoner = second.client(concurrency=settings.concurrency, temperature=settings.temperature, cache=cache)
        elif settings.reasoning_base_url or settings.reasoning_model:
            reasoner = _remote_client(settings.reasoning_base_url or settings.base_url,
                                      settings.reasoning_model or settings.model, settings, llm.tokenizer, cache)
        yield llm, reasoner


def _main_client(settings: EngineSettings, stack: contextlib.ExitStack, cache: ResponseCache | None) -> LLMClient:
    """The endpoint named by base_url/model, or a bundled model served for the length of `stack`."""
    if settings.base_url or (settings.model and settings.model not in MODELS):
        llm = _remote_client(settings.base_url, settings.model, settings, None, cache)
        llm.tokenizer = load_tokenizer(settings.tokenizer) if settings.tokenizer else _bundled_tokenizer(settings)
        return llm
    local = settings.model if settings.model in MODELS else settings.local_model
    server = stack.enter_context(LocalServer(local, context_window=settings.context_window,
                                             prompt_cache_mb=settings.prompt_cache_mb))
    llm = server.client(concurrency=settings.concurrency, temperature=settings.temperature, cache=cache)
    if settings.tokenizer:
        llm.tokenizer = load_tokenizer(settings.tokenizer)
    return llm


def _offline_client(settings: EngineSettings) -> LLMClient:
    """A client that names the model the rows were made with and counts tokens with its vocabulary (the draws of
    questions need it), and refuses every call: what a committed study is drawn with."""
    name = settings.model or settings.local_model
    bundled = name in MODELS and not settings.base_url
    tokenizer = (load_tokenizer(settings.tokenizer) if settings.tokenizer else
                 GGUFTokenizer(ensure_model(name if bundled else settings.local_model)))
    return LLMClient(settings.base_url or "http://offline.invalid/v1", name, api_key="offline", tokenizer=tokenizer,
                     model_id=f"{name}@{get_spec(name).sha256[:16]}" if bundled else None,
                     model_sha256=get_spec(name).sha256 if bundled else None, offline=True)


def _remote_client(base_url: str | None, model: str | None, settings: EngineSettings, tokenizer: Tokenizer | None,
                   cache: ResponseCache | None) -> LLMClient:
    if not model:
        raise EndpointError("--model is required with --base-url (the name the server serves)")
    llm = LLMClient(base_url, model, tokenizer=tokenizer, concurrency=settings.concurrency,
                    temperature=settings.temperature, cache=cache)
    run_sync(check_endpoint(llm))
    return llm


async def check_endpoint(llm: LLMClient) -> None:
    """Fail fast with a clear message instead of retrying an unreachable server or an unknown model."""
    import openai

    try:
        served = await llm.list_models()
    except openai.APIConnectionError as exc:
        raise EndpointError(f"cannot reach {llm.base_url or 'the OpenAI API'}: {exc}; is the server running?") from exc
    except openai.AuthenticationError as exc:
        raise EndpointError("the endpoint rejected the API key; set OPENAI_API_KEY") from exc
    except openai.APIStatusError:
        return  # some servers do not list models; the first call will tell
    if served and llm.model not in served:
        raise EndpointError(f"model {llm.model!r} is not served at {llm.base_url}; it serves: {', '.join(served)}")


def _bundled_tokenizer(settings: EngineSettings) -> GGUFTokenizer:
    print(f"note: counting tokens with the bundled {settings.local_model} vocabulary; pass --tokenizer for the "
          "serving model's own", file=sys.stderr)
    return GGUFTokenizer(ensure_model(settings.local_model))


_KEPT = contextlib.ExitStack()  # clients a notebook keeps for the life of its kernel
atexit.register(_KEPT.close)


def connect(settings: EngineSettings) -> tuple[LLMClient, LLMClient | None]:
    """`clients(settings)` kept open until the process exits (for notebooks, whose cells cannot share a
    `with` block); a local server started here stops with the kernel."""
    return _KEPT.enter_context(clients(settings))
