"""How messages connect to a question through the names they share: the chain a multi-hop answer stands on.

A message is one link from the question when it names the question's subject (the first hop names the question's
person: two of the question's English names, so that a first name alone is no link, or two runs of its Chinese),
two links when it shares a name beyond the question's with a message one link away (the second hop names the first
hop's village), and so on; a message that reaches the question by no chain of shared names is unconnected, whatever
it says. English names are capitalized words and numbers, matched by their first letters (Nietzche ~ Nietzsche);
Chinese marks no names, so two texts share a name when they share two runs of three characters (one run, such as a
three-character title two people share, is too little to tell them apart).
"""

from __future__ import annotations

from .grounding import STEM, fold, names
from .words import CJK


def _split(found: set[str]) -> tuple[set[str], set[str]]:
    cjk = {n for n in found if CJK.search(n)}
    return found - cjk, cjk


def shares_a_name(a: set[str], b: set[str]) -> bool:
    """Whether two sets of names (extlib.grounding.names) share a name, as the module docstring says."""
    latin_a, cjk_a = _split(a)
    latin_b, cjk_b = _split(b)
    stems_b = {n[:STEM] for n in latin_b if len(n) > STEM}
    if latin_a & latin_b or any(len(n) > STEM and n[:STEM] in stems_b for n in latin_a):
        return True
    return len(cjk_a & cjk_b) >= 2


def names_the_subject(found: set[str], asked: set[str]) -> bool:
    """Whether a text's names (`found`) name the question's subject (`asked`, the question's names): two of its
    English names (a first name alone, "Edmund", is shared by too many people) or all when it has one, or two runs of
    three characters of its Chinese."""
    latin, cjk = _split(found)
    latin_asked, cjk_asked = _split(asked)
    if latin_asked and len(latin & latin_asked) >= min(2, len(latin_asked)):
        return True
    return len(cjk & cjk_asked) >= 2


def links_from_question(question: str, notes: dict[int, str]) -> dict[int, int | None]:
    """Per message, how many links from the question (1: it shares a name with the question; None: no chain)."""
    asked = names(fold(question))
    own = {i: names(fold(text)) for i, text in notes.items()}
    level: dict[int, int | None] = {i: 1 if names_the_subject(own[i], asked) else None for i in notes}
    frontier = [i for i, lv in level.items() if lv == 1]
    while frontier:
        reached = []
        for i in (j for j in notes if level[j] is None):
            if any(shares_a_name(own[i] - asked, own[f] - asked) for f in frontier):
                level[i] = level[frontier[0]] + 1
                reached.append(i)
        frontier = reached
    return level


def on_a_chain(question: str, shown: list[str], sentences: list[str]) -> list[str]:
    """The `sentences` that a chain of names joins to the question, through the messages `shown` and each other: what
    an agent can tie to the question from what it was given (a second hop joins through the first hop shown to it)."""
    notes = dict(enumerate([*shown, *sentences]))
    level = links_from_question(question, notes)
    return [s for k, s in enumerate(sentences, start=len(shown)) if level[k] is not None]
