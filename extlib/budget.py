"""The context window as a token budget: whether a prompt fits (else PromptTooLong), and packing texts
into what is left, best first, in three ways the methods need."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from .errors import UserError

T = TypeVar("T")

# Chat templates add a system prompt and role markers around our text (~30 tokens for Qwen2.5).
CHAT_OVERHEAD_TOKENS = 64


class PromptTooLong(UserError):
    """The fixed part of a prompt (question, chunk, template) cannot fit the context window."""


def require_fit(needed: int, window: int, what: str,
                fix: str = "lower --chunk-tokens or raise --context-window") -> None:
    """Raise PromptTooLong unless `needed` tokens (`what` names them) fit a `window`-token context."""
    if needed > window:
        raise PromptTooLong(f"{what} need {needed:,} tokens, more than the {window:,}-token window; {fix}")


def greedy_within(ranked: list[T], size: Callable[[T], int], budget: int) -> list[T]:
    """As many items as the budget allows, best first. An item too long for what is left is skipped
    rather than ending the selection, so one long item cannot cut everyone off (for ExtAgents' messages
    this greedy pass approximates eq. 6's argmax of the summed scores under the budget)."""
    chosen, used = [], 0
    for item in ranked:
        n = size(item)
        if used + n <= budget:
            chosen.append(item)
            used += n
    return chosen


def prefix_within(items: list[T], total_size: Callable[[list[T]], int], budget: int) -> list[T]:
    """The longest leading run of items whose combined block (`total_size` measures the whole block, with
    its separators) fits the budget: the first item that does not fit ends it."""
    kept: list[T] = []
    for item in items:
        if total_size(kept + [item]) > budget:
            break
        kept.append(item)
    return kept


def consecutive_groups(items: list[T], size: Callable[[T], int], budget: int) -> list[list[T]]:
    """Consecutive items packed into groups of at most `budget` tokens (an item larger than the budget gets
    a group of its own)."""
    groups: list[list[T]] = [[]]
    used = 0
    for item in items:
        n = size(item)
        if groups[-1] and used + n > budget:
            groups.append([])
            used = 0
        groups[-1].append(item)
        used += n
    return groups
