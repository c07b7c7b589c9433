"""How messages connect to a question through the names they share: the chain a multi-hop answer stands on.

A message is one link from the question when it names the question's subject (the first hop names the question's
person: all the names of one of its English entities, so that a first name alone is no link, or two runs of its
Chinese),
two links when it shares a name beyond the question's with a message one link away (the second hop names the first
hop's village), and so on; a message that reaches the question by no chain of shared names is unconnected, whatever
it says. English names are capitalized words and numbers, matched by their first letters (Nietzche ~ Nietzsche);
Chinese marks no names, so two texts share a name when they share two runs of three characters (one run, such as a
three-character title two people share, is too little to tell them apart).
"""

from __future__ import annotations

import re
from functools import lru_cache

from .grounding import STEM, fold, names
from .words import CJK

_ENTITY = re.compile(r"\b[A-Z0-9][\w'-]*(?:\s+[A-Z0-9][\w'-]*)*")


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


@lru_cache(maxsize=256)
def entities(question: str) -> tuple[frozenset[str], ...]:
    """The question's English named entities, each as the set of its names: capitalized words and numbers in a row
    ("the prompter Amos Dimmock": {amos, dimmock}; "Pueraria or Pleiospilos": {pueraria}, {pleiospilos}). Cached:
    every sentence of every chunk is checked against the same question."""
    groups = (frozenset(names(run)) for run in _ENTITY.findall(CJK.sub(" ", fold(question))))
    return tuple(group for group in groups if group)


@lru_cache(maxsize=256)
def _question_runs(question: str) -> frozenset[str]:
    return frozenset(_split(names(fold(question)))[1])


def names_the_subject(found: set[str], question: str) -> bool:
    """Whether a text's names (`found`, extlib.grounding.names) name the question's subject: all the names of one of
    its English entities (a first name alone, "Edmund", is shared by too many people; the longer words matched by
    their first letters), or two runs of three characters of its Chinese."""
    latin, cjk = _split(found)
    stems = {n[:STEM] for n in latin if len(n) > STEM}
    if any(all(n in latin or len(n) > STEM and n[:STEM] in stems for n in entity) for entity in entities(question)):
        return True
    return len(cjk & _question_runs(question)) >= 2


def links_from_question(question: str, notes: dict[int, str]) -> dict[int, int | None]:
    """Per message, how many links from the question (1: it shares a name with the question; None: no chain)."""
    asked = names(fold(question))
    own = {i: names(fold(text)) for i, text in notes.items()}
    level: dict[int, int | None] = {i: 1 if names_the_subject(own[i], question) else None for i in notes}
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
