"""The bundled server's prompt-state cache (extlib.llama_server) keeps one state per agent across rounds."""

import numpy as np
import pytest

llama_cpp = pytest.importorskip("llama_cpp")  # the [local] extra

from extlib.llama_server import PromptStateCache, drop_superseded  # noqa: E402

INSTRUCTIONS = list(range(1000, 1020))


def state(tokens: list[int]) -> "llama_cpp.LlamaState":
    ids = np.full(64, -1, dtype=np.intc)
    ids[:len(tokens)] = tokens
    return llama_cpp.LlamaState(input_ids=ids, scores=np.zeros((0, 8), np.single), n_tokens=len(tokens),
                                llama_state=b"x" * 100, llama_state_size=100, seed=0)


def agent_prompt(agent: int, round_: int) -> list[int]:
    """Instructions, then the agent's chunk, then what changes per round (chunk-first)."""
    return INSTRUCTIONS + [agent * 100 + i for i in range(30)] + [round_] * 4


def test_three_agents_three_rounds_under_a_bound_of_four_states_every_later_round_hits():
    """Without dropping the state a round started from, the LRU order would evict the next agent's state in
    round 2 (the cyclic pattern that makes every agent of the round miss); with it the cache holds one per agent."""
    cache = PromptStateCache(capacity_bytes=4 * (100 + 64 * 4))
    hits = []
    for round_ in (1, 2, 3):
        for agent in range(3):
            prompt = agent_prompt(agent, round_)
            loaded = None
            try:
                found = cache[prompt]
                if llama_cpp.Llama.longest_token_prefix(found.input_ids.tolist(), prompt) > len(INSTRUCTIONS):
                    loaded = found
            except KeyError:
                pass
            hits.append(loaded is not None)
            tokens = np.array(prompt + [7, 7], dtype=np.intc)  # prompt and reply
            drop_superseded(cache, loaded, tokens)
            cache[tuple(tokens.tolist())] = state(tokens.tolist())
    assert hits == [False] * 3 + [True] * 6
    assert len(cache.cache_state) == 3 and cache.cache_size <= cache.capacity_bytes


def test_a_state_sharing_only_the_instructions_is_kept():
    cache = PromptStateCache(capacity_bytes=10_000)
    other = state(agent_prompt(1, 1))
    cache[tuple(agent_prompt(1, 1))] = other
    drop_superseded(cache, other, np.array(agent_prompt(2, 1), dtype=np.intc))  # agent 2 started from agent 1's
    assert list(cache.cache_state.values()) == [other]
    drop_superseded(cache, other, np.array(agent_prompt(1, 2), dtype=np.intc))  # agent 1's next round
    assert not cache.cache_state
