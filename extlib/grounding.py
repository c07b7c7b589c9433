"""Checks against invented facts: is a reply made of its own text's words, is an answer stated at all."""

from __future__ import annotations

from .words import content_words


def grounding(words: set[str], chunk: str) -> float:
    """Share of a message's words (beyond those its agent was shown) that occur in the agent's own chunk.
    A small model asked about a person its chunk never mentions tends to invent a fact ("X was born in
    London"); such a message has words its chunk lacks, while an extracted fact is made of the chunk's own
    words and of the messages the agent was given."""
    return len(words & content_words(chunk)) / len(words) if words else 1.0


def answer_is_stated(answer: str, messages: list[str]) -> bool:
    """Whether the answer's words occur in the messages (yes/no answers always pass). A small model whose
    messages hold only the first hop of a question tends to invent the second; its answer then names
    something no message mentions."""
    words = content_words(answer)
    if not words or answer.strip().lower().rstrip(".") in ("yes", "no"):
        return True
    return len(words & content_words(" ".join(messages))) >= len(words) / 2
