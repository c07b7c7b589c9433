"""Messages in the source's own words: a seeking agent's reply is tied, after the call, to the sentences of its own
chunk that support it, and those sentences, not the reply, are what the scratchpad holds.

A small model asked to quote its chunk answers NO INFORMATION (DESIGN §3), so it is asked to write what it found in
its own words and the quoting is done here: the reply's claims (its terms beyond the question's, the messages it was
shown and the prompt's) are matched to the chunk's sentences, best covering first, and the sentences that cover them
become the message. What this keeps and drops, by construction:
- a true extraction is kept whatever it names: the question's entities may be in the reply and not in the chunk;
- an invented claim never reaches the scratchpad: only the chunk's sentences do, and a reply whose claims no sentence
  covers to more than `floor` posts nothing;
- a reply that joins a shown message to its chunk ("X was born in Kettleby, which lies in Rutland") posts the
  chunk's sentence about Rutland: the bridge fact GKS exists for, in the source's words; a wrong join ("..., which
  lies in Westmarch" from a chunk about Marrowby) posts only what the chunk says of Marrowby, which claims no join;
- an echo of the question or of the shown messages has no claim of its own and posts nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .connections import names_the_subject, shares_a_name
from .grounding import STEM, fold, grounding_terms, names
from .words import CJK

_SENTENCE = re.compile(r"[^.!?。！？;；\n]+(?:[.!?。！？;；]+[\"'”’)\]」』]*)?")
_LIST_MARKER = re.compile(r"^[ \t]*(?:\(?\d{1,2}[.)]|[-*\u2022])[ \t]+", re.M)
MOST_SENTENCES = 4  # a message is at most this many sentences of its chunk
MIN_CHARS = 12  # shorter pieces ("Act II.", "MARIA.") are no sentences to quote
MIN_CJK_CHARS = 6  # a Chinese sentence says as much in fewer characters ("落菱垭村隶属河北省。" is 10)


@dataclass
class Anchored:
    sentences: list[str]  # the chunk's sentences that support the reply, in chunk order
    coverage: float  # share of the reply's claims those sentences hold
    claims: int  # how many terms the reply claims beyond the question, the shown messages and the prompt

    @property
    def message(self) -> str:
        return " ".join(self.sentences)


def sentences(chunk: str) -> list[str]:
    """The chunk's sentences (and lines: a play's speech, a list item), each stripped; a sentence of a paragraph
    under a heading line (an encyclopedia article's title) carries the heading unless it names it already, so that
    "The zoo now is home to 5,000 animals" is still about the Fort Worth Zoo on the scratchpad."""
    out = []
    for paragraph in re.split(r"\n\s*\n", chunk):
        lines = paragraph.strip().split("\n", 1)
        heading = lines[0].strip() if len(lines) == 2 and _is_heading(lines[0]) else ""
        for sentence in _SENTENCE.findall(lines[1] if heading else paragraph):
            sentence = sentence.strip()
            if len(sentence) >= (MIN_CJK_CHARS if CJK.search(sentence) else MIN_CHARS):
                out.append(f"{heading}: {sentence}" if heading and heading not in sentence else sentence)
    return out


def _is_heading(line: str) -> bool:
    """A short line without a sentence's end: a title over the paragraph below it."""
    line = line.strip()
    return 0 < len(line) <= 80 and not re.search(r"[.!?。！？:：]$", line)


def _terms(text: str) -> set[str]:
    """Content words, names and numbers; Chinese as pairs of characters (extlib.grounding.grounding_terms)."""
    return grounding_terms(text)


def _names(text: str) -> set[str]:
    """The English names and numbers among a text's terms (Chinese marks none)."""
    return {n for n in names(text) if not CJK.search(n)}


def _covers(sentence_terms: set[str], claim: str) -> bool:
    """Whether a sentence holds a claimed term (a longer word by its first STEM letters: Nietzche ~ Nietzsche)."""
    return claim in sentence_terms or len(claim) > STEM and any(t[:STEM] == claim[:STEM] for t in sentence_terms)


def anchor(reply: str, chunk: str, shown: list[str], question: str, template: frozenset[str] = frozenset(),
           floor: float = 0.5) -> Anchored:
    """The sentences of `chunk` that support `reply`: greedily the sentence covering most of the claims not yet
    covered (ties: the one sharing more of the question's terms, then the shorter), while one adds a claim, at most
    MOST_SENTENCES; none when they cover no more than `floor` of the claims (or of the English names claimed), or the
    reply claims nothing."""
    reply = fold(_LIST_MARKER.sub("", reply))
    asked = _terms(fold(question))
    known = _terms(fold(" ".join(shown))) | asked | set(template)
    claims = _terms(reply) - known
    named = _names(reply) & claims  # a reply that names things must be anchored by the sentences naming them
    if not claims:
        return Anchored([], 0.0, 0)
    candidates = [(s, _terms(fold(s))) for s in sentences(chunk)]
    chosen: list[int] = []
    left = set(claims)
    while left and len(chosen) < MOST_SENTENCES:
        best = max((k for k in range(len(candidates)) if k not in chosen),
                   key=lambda k: (sum(_covers(candidates[k][1], c) for c in left), len(candidates[k][1] & asked),
                                  -len(candidates[k][0])), default=None)
        if best is None:
            break
        covered = {c for c in left if _covers(candidates[best][1], c)}
        if not covered:
            break
        chosen.append(best)
        left -= covered
    coverage = 1 - len(left) / len(claims)
    if coverage <= floor or named and len(named - left) <= floor * len(named):
        return Anchored([], coverage, len(claims))
    return Anchored([candidates[k][0] for k in sorted(chosen)], coverage, len(claims))


def about_the_subject(reply: str, chunk: str, question: str, shown: list[str]) -> list[str]:
    """The chunk's sentences about what the reply is about, when that is the question's subject
    (extlib.connections.names_the_subject) or a name of the messages shown to the agent: what the chunk says of the
    question's person even when the reply states something else of them (a 1.5B model asked for a province invents
    one for the person its chunk places in a village), and what it says of the first hop's village when the reply
    names that village but not the chunk's sentence."""
    asked, said = names(fold(question)), names(fold(reply))
    followed = said & names(fold(" ".join(shown))) - asked  # the shown messages' names the reply takes up
    if not names_the_subject(said, question) and not followed:
        return []
    return [s for s in sentences(chunk) if names_the_subject(names(fold(s)), question)
            or followed and shares_a_name(names(fold(s)), followed)][:MOST_SENTENCES]
