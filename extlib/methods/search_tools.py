"""What the search agents share: reading their tagged output and showing them retrieved passages."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..budget import CHAT_OVERHEAD_TOKENS, prefix_within
from ..llm import LLMClient
from .base import WindowConfig, knob

FORCE = "Give the answer now inside <answer> and </answer>."
SEARCH_FIRST = ("Do not answer yet: you have not searched. Search the knowledge source first and answer from what "
                "it returns.")


@dataclass
class SearchConfig(WindowConfig):
    """The knobs every search agent has."""

    passage_tokens: int = knob(256, "piece size when the task has no passages of its own")
    top_k: int = knob(3, "passages retrieved per query")
    max_tokens: int = knob(256, "tokens of each agent turn")
    min_searches: int = knob(1, "searches before an answer counts (an earlier one is sent back once); 0 = the "
                             "papers' protocol as is", low=0)


def send_back_to_search(messages: list[dict], reply: str) -> None:
    """A reply that answered (or stalled) before any search goes back with its reasoning, not its answer:
    a trained search agent searches first, a prompted small model answers from memory."""
    messages += [{"role": "assistant", "content": reply.split("<answer>")[0].strip() or reply.strip()},
                 {"role": "user", "content": SEARCH_FIRST}]


def conversation_tokens(llm: LLMClient, messages: list[dict]) -> int:
    """What a chat of these messages costs in prompt tokens, role markers included."""
    return sum(llm.count_tokens(m["content"]) for m in messages) + CHAT_OVERHEAD_TOKENS * len(messages)


def last_tag(text: str, name: str) -> str | None:
    """The content of the last <name>...</name> in text (an unclosed last tag counts: stop strings cut
    the closing tag off), or None."""
    found = re.findall(rf"<{name}>(.*?)(?:</{name}>|$)", text, re.DOTALL | re.IGNORECASE)
    return found[-1].strip() if found and found[-1].strip() else None


def all_tags(text: str, name: str) -> list[str]:
    return [t.strip() for t in re.findall(rf"<{name}>(.*?)</{name}>", text, re.DOTALL | re.IGNORECASE) if t.strip()]


def results_block(passages: list[str]) -> str:
    return "\n".join(f"Doc {i + 1}: {p.strip()}" for i, p in enumerate(passages))


def fitting_results(llm: LLMClient, passages: list[str], room: int) -> list[str]:
    """The leading passages whose <information> block fits in `room` prompt tokens: a block past the window
    would make every later call fail, and forcing the answer cannot shrink it."""
    return prefix_within(passages, lambda kept: llm.count_tokens(f"<information>{results_block(kept)}</information>"),
                         room)


def without_tags(text: str) -> str:
    """The reply with its <think> reasoning and any stray tags removed (for an answer given untagged)."""
    text = re.sub(r"<think>.*?(?:</think>|$)", " ", text, flags=re.DOTALL | re.IGNORECASE)
    return re.sub(r"</?\w+>?", " ", text).strip()
