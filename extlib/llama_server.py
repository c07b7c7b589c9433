"""The bundled llama.cpp server, reporting per call what it computed and what it took from its caches.

llama-cpp-python's OpenAI server answers with token counts only. vLLM and the OpenAI API also report how many
prompt tokens came from a prefix cache (`usage.prompt_tokens_details.cached_tokens`); issue 14 needs that
number, and the split of a call's time into prefill and generation, to show where ExtAgents' time goes. This
entry point (`python -m extlib.llama_server --config_file ...`, what extlib.serve starts) runs the same server
with three methods of `llama_cpp.Llama` wrapped:

- `generate`: the first `eval` of a generation is the prompt suffix the engine computes (llama.cpp keeps the
  longest prefix shared with its current KV state, and with `cache` on first loads the saved state of the
  longest matching earlier prompt); everything before it in the prompt was reused.
- `load_state` / `save_state`: the prompt-state cache's copies, timed separately since they are its price.
- `save_state` / `load_state` and `LlamaRAMCache`: the prompt-state cache (`cache: true` in the server config)
  keeps a copy of llama.cpp's KV state per prompt, so round t+1 of an agent whose chunk leads its prompt computes
  only the new suffix; the state a round started from is dropped when the round's own is saved, so the cache holds
  one state per agent (a question's chunks) and its bound is agents x state size. As shipped, every saved state
  also copies up to n_batch rows of logits (512 x 151,936 floats = 311 MB for Qwen, about 0.2 s a call) which its
  size bound does not count. A loaded state is always evaluated again from at least its last token before anything
  is sampled, so those logits are never read: here states keep none, their copies are timed, and the bound counts
  every byte a state holds.
- `create_completion`: adds `prompt_tokens_details.cached_tokens` and `timings` to the usage, named as
  llama.cpp's own C++ server names them (prompt_n, prompt_ms, predicted_n, predicted_ms) plus cache_ms.

Answers are unchanged: the wrappers only count and time.
"""

from __future__ import annotations

import ctypes
import time
from typing import Any

import llama_cpp
import numpy as np
from pydantic import ConfigDict


class PromptStateCache(llama_cpp.LlamaRAMCache):
    """llama-cpp-python's RAM cache of prompt states, least recently used out first, bounded in bytes for real."""

    @property
    def cache_size(self) -> int:
        return sum(state.llama_state_size + state.scores.nbytes + state.input_ids.nbytes
                   for state in self.cache_state.values())


def drop_superseded(cache: llama_cpp.LlamaRAMCache, loaded: llama_cpp.LlamaState | None,
                    tokens: np.ndarray) -> None:
    """Drop `loaded`, the state a completion started from, when the state about to be saved for `tokens` (its
    prompt and reply) shares most of it: an agent's earlier round, whose chunk leads both prompts. The cache then
    holds one state per agent. Without this, once the bound is reached, least-recently-used eviction drops exactly
    the state the round's next agent needs (every lookup moves the state it finds to the end, so the oldest is
    always the next agent's), and every later agent of the round misses. A state that shares only the instructions
    (another agent's, loaded for a prompt that had none of its own) stays."""
    if loaded is None or cache is None:
        return
    shared = llama_cpp.Llama.longest_token_prefix(loaded.input_ids[:loaded.n_tokens].tolist(), tokens.tolist())
    if 2 * shared >= loaded.n_tokens:
        for key in [k for k, state in cache.cache_state.items() if state is loaded]:
            del cache.cache_state[key]


def _save_state(self) -> llama_cpp.LlamaState:
    """The KV state without logits (see the module docstring); the state it supersedes leaves the cache."""
    start = time.perf_counter()
    drop_superseded(self.cache, getattr(self, "_loaded_state", None), self.input_ids[:self.n_tokens])
    self._loaded_state = None
    size = llama_cpp.llama_state_get_size(self._ctx.ctx)
    buffer = (ctypes.c_uint8 * size)()
    written = llama_cpp.llama_state_get_data(self._ctx.ctx, buffer, size)
    if written > size:
        raise RuntimeError("llama.cpp wrote more state than it announced")
    input_ids = self.input_ids.copy()
    input_ids[self.n_tokens:] = -1  # the cache matches prefixes on the whole array: no stale token past the state
    state = llama_cpp.LlamaState(input_ids=input_ids, scores=np.zeros((0, self._n_vocab), np.single),
                                 n_tokens=self.n_tokens, llama_state=ctypes.string_at(buffer, written),
                                 llama_state_size=written, seed=self._seed)
    _add_cache_time(self, start)
    return state


def _load_state(self, state: llama_cpp.LlamaState) -> None:
    start = time.perf_counter()
    self._loaded_state = state  # superseded by the state saved after this completion (drop_superseded)
    self.input_ids = state.input_ids.copy()
    self.n_tokens = state.n_tokens
    self._requires_eval = True  # the next generate evaluates at least the last token again, refreshing logits
    self._seed = state.seed
    buffer = (ctypes.c_uint8 * state.llama_state_size).from_buffer_copy(state.llama_state)
    if llama_cpp.llama_state_set_data(self._ctx.ctx, buffer, state.llama_state_size) != state.llama_state_size:
        raise RuntimeError("llama.cpp could not load a saved prompt state")
    _add_cache_time(self, start)


def _add_cache_time(llama, start: float) -> None:
    if stats := getattr(llama, "_extagents", None):
        stats["cache_s"] += time.perf_counter() - start


def _install() -> None:
    Llama = llama_cpp.Llama
    original_generate, original_eval = Llama.generate, Llama.eval
    original_completion = Llama.create_completion

    def generate(self, tokens, *args, **kwargs):
        if stats := getattr(self, "_extagents", None):
            stats["prompt_pending"] = True
        yield from original_generate(self, tokens, *args, **kwargs)

    def eval(self, tokens):
        stats = getattr(self, "_extagents", None)
        if not stats or not stats["prompt_pending"]:
            return original_eval(self, tokens)
        stats["prompt_pending"] = False
        start = time.perf_counter()
        try:
            return original_eval(self, tokens)
        finally:
            stats["prompt_n"] = len(tokens)
            stats["prompt_s"] = time.perf_counter() - start

    def create_completion(self, *args, **kwargs):
        self._extagents = {"prompt_pending": False, "prompt_n": 0, "prompt_s": 0.0, "cache_s": 0.0}
        start = time.perf_counter()
        result = original_completion(self, *args, **kwargs)
        if not isinstance(result, dict):  # streamed: no usage to annotate
            return result
        stats, total = self._extagents, time.perf_counter() - start
        usage: dict[str, Any] = result.setdefault("usage", {})
        computed = min(stats["prompt_n"], usage.get("prompt_tokens", 0))
        usage["prompt_tokens_details"] = {"cached_tokens": usage.get("prompt_tokens", 0) - computed}
        usage["timings"] = {
            "cache_n": usage.get("prompt_tokens", 0) - computed,
            "prompt_n": computed,
            "prompt_ms": round(stats["prompt_s"] * 1000, 1),
            "predicted_n": usage.get("completion_tokens", 0),
            "predicted_ms": round((total - stats["prompt_s"] - stats["cache_s"]) * 1000, 1),
            "cache_ms": round(stats["cache_s"] * 1000, 1),
        }
        return result

    Llama.generate, Llama.eval, Llama.create_completion = generate, eval, create_completion
    llama_cpp.LlamaRAMCache = PromptStateCache  # what the server builds for `cache_type: ram`
    Llama.save_state, Llama.load_state = _save_state, _load_state
    # The server validates responses against llama-cpp-python's TypedDicts, which would drop the added keys.
    llama_cpp.llama_types.CompletionUsage.__pydantic_config__ = ConfigDict(extra="allow")


def main() -> None:
    _install()
    from llama_cpp.server.__main__ import main as serve  # imported after _install: it builds the response models

    serve()


if __name__ == "__main__":
    main()
