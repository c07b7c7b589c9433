"""Checks against invented facts and empty echoes: may a seeking reply enter the scratchpad, is an answer an answer.

On 237 labeled replies of the bundled 1.5B model (tests/data/seeker_replies.jsonl, benchmarks/grounding.py), a
small model's seeking replies fail in three ways: it makes up a fact about an entity
its chunk never mentions ("X was born in London"), it restates the question's relation onto whatever entity its
chunk names ("<film> was started as a religious Utopian group ..."), and in later rounds it writes the facts it was
shown back in other words. An extracted fact is made of its own chunk's words, plus the words it was shown.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from .words import CJK, STOPWORDS, content_words

_CJK_RUN = re.compile(f"{CJK.pattern}+")
_NUMBER = re.compile(r"\d+")
_NAME = re.compile(r"\b[A-Z][\w'-]*")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+")
_LIST_MARKER = re.compile(r"^[ \t]*(?:\(?\d{1,2}[.)]|[-*\u2022])[ \t]+", re.M)  # "1. ", "2) ", "(3) ", "- ", "• "
PASSAGE_WORDS = 120  # a fact is stated within a paragraph; a long one is read in windows of this many words
TOGETHER = 0.75  # least share of a sentence's names that one passage of the chunk must hold
STEM = 5  # a longer word is in a chunk with one that starts with its first five: Nietzche's ~ Nietzsche, Peter's
# Capitalized only because they start a sentence: never names.
FUNCTION_WORDS = STOPWORDS | set("""a an as at be by do he if in is it me my no of on or so to up us we its our
these those what when where while how however during although because since both each all some many most yes
answer question""".split())
ECHO = "echoes the question or the messages it was shown"  # why a reply stays off the scratchpad (extlib.lesson)
UNRELATED = "unrelated to the question and to the messages it was shown"
# Chinese characters that carry grammar, not content: a pair of characters with one of them ("所以", "的出")
# says nothing a chunk must hold.
ZH_FUNCTION = set("的是了在于为之其和与及也就都而所以这那个被将把从对向由因此即则并或但却又还很更最")


def fold(text: str) -> str:
    """Text without accents (Miklós Rózsa ~ Miklos Rozsa): small models drop them when they copy names."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def _latin_names(latin: str) -> set[str]:
    return set(_NUMBER.findall(latin)) | {n.lower() for n in _NAME.findall(latin)
                                          if len(n) >= 2 and n.lower() not in FUNCTION_WORDS}


def grounding_terms(text: str) -> set[str]:
    """The terms a grounding check compares: English content words plus every number and name however short
    ("22", "UK"); for Chinese, each pair of adjacent characters (single characters such as 的, 是, 出 occur in
    almost any Chinese text, so they would ground anything), leaving out pairs with a grammatical character."""
    text = fold(text)
    latin = CJK.sub(" ", text)
    found = content_words(latin) | _latin_names(latin)
    for run in _CJK_RUN.findall(text):
        pairs = {run[k:k + 2] for k in range(len(run) - 1)} if len(run) > 1 else {run}
        found |= {p for p in pairs if not ZH_FUNCTION & set(p)}
    return found


def names(text: str) -> set[str]:
    """What names an entity: numbers and capitalized words that are not function words ("The", "However"),
    lower-cased; for Chinese, which marks no names, each run of three adjacent characters (rarely shared by
    chance, unlike pairs)."""
    text = fold(text)
    found = _latin_names(CJK.sub(" ", text))
    for run in _CJK_RUN.findall(text):
        found |= {run[k:k + 3] for k in range(len(run) - 2)}
    return found


_NAME_RUN = re.compile(r"\b[A-Z][\w'-]*(?:\s+(?:of\s+|de\s+|von\s+)?[A-Z][\w'-]*)*")


def new_names(messages: list[str], question: str, most: int = 4) -> list[str]:
    """The names the messages add to the question, in the order they first appear, at most `most`: what the facts
    found so far tell the other agents to look for. English: runs of capitalized words, without those the question
    names and words capitalized only for starting a sentence; Chinese, which marks no names: the runs of two or
    more characters left when the question's characters and the grammatical ones are taken out ("韩墨出生在青石村"
    asked "韩墨出生在哪个省" leaves 青石村)."""
    asked, asked_chars = names(question), set(question)
    found: list[str] = []
    for message in messages:
        text = fold(message)
        for run in _NAME_RUN.findall(CJK.sub(" ", text)):
            words = run.split()
            while words and words[0].lower() in FUNCTION_WORDS:  # "The", "In": capitalized for starting a sentence
                words.pop(0)
            if words and not _latin_names(" ".join(words)) <= asked:
                found.append(" ".join(words))
        for run in _CJK_RUN.findall(text):
            found += [part for part in re.split(f"[{re.escape(''.join(asked_chars | ZH_FUNCTION))}]", run)
                      if len(part) >= 2]
    return list(dict.fromkeys(found))[:most]


def grounding(words: set[str], chunk: str) -> float:
    """Share of a reply's words that occur in its own chunk (PARSER's check of its subagents' evidence)."""
    return len(words & content_words(chunk)) / len(words) if words else 1.0


def _finder(text: str) -> Callable[[str], bool]:
    """`found(term)`: whether `text` has the term, or for a word of more than STEM letters one with its first STEM."""
    terms = grounding_terms(text) | names(text)
    stems = {t[:STEM] for t in terms if len(t) >= STEM}
    return lambda term: term in terms or len(term) > STEM and term[:STEM] in stems


def passages(chunk: str, words: int = PASSAGE_WORDS) -> list[str]:
    """The chunk's paragraphs, a long one cut into overlapping windows of `words` words."""
    out = []
    for paragraph in re.split(r"\n\s*\n", chunk):
        tokens = paragraph.split()
        out += [" ".join(tokens[k:k + words]) for k in range(0, max(len(tokens) - words // 2, 1), words // 2)]
    return out


def admission(reply: str, chunk: str, shown: list[str], question: str, min_support: float,
              template: frozenset[str] = frozenset()) -> str | None:
    """None if a seeking reply may enter the scratchpad, else why not (English names are capitalized words and
    numbers; Chinese marks none, so `unnamed` and `joined` do not apply to it, and `unlinked` compares runs of
    three characters):
    - echo: it has no term beyond the question, the messages it was shown and its instructions;
    - unrelated (later rounds): it shares no term with the question or the shown messages, so it neither continues
      nor completes them (a bare name from a play: "Ferdinand.");
    - unnamed: a name it states (beyond the shown messages) is not in its chunk. Most invented replies state the
      question's relation about the question's entity, which the chunk never mentions;
    - joined: one of its sentences joins names that no passage of the chunk holds together (an entity merged
      with another's facts: "Duffy Jackson was born in Doohamlet", where Doohamlet is Patrick Duffy's);
    - unlinked: it names entities of the shown messages while its chunk mentions none of them beyond the
      question's (it attributes its chunk's words to someone else's entity); a chunk that holds a bridge fact
      names the shown entity it continues (Marrowby), even when the reply jumps to the conclusion;
    - ungrounded: fewer than `min_support` of its terms beyond the shown messages and the instructions occur in
      its chunk. The question's terms count: a relation the reply states (born in, run by) must be in the chunk."""
    reply = _LIST_MARKER.sub("", reply)  # a numbered list's 1, 2, 3 are no numbers the chunk must hold
    words = grounding_terms(reply) - template
    seen, seen_names = grounding_terms(" ".join(shown)), names(" ".join(shown))
    if not words - seen - grounding_terms(question):
        return ECHO
    if shown and not content_words(reply) & content_words(" ".join([question, *shown])):
        return UNRELATED
    found = _finder(chunk)
    missing = sorted(n for n in _latin_names(CJK.sub(" ", fold(reply))) - seen_names if not found(n))
    if missing:
        return f"names what its chunk does not: {', '.join(missing[:3])}"
    finders = [_finder(p) for p in passages(chunk)]
    for sentence in _SENTENCE.split(reply):
        stated = _latin_names(CJK.sub(" ", fold(sentence))) - seen_names
        if len(stated) > 1 and not any(sum(map(f, stated)) >= TOGETHER * len(stated) for f in finders):
            return f"joins names no passage of its chunk holds together: {', '.join(sorted(stated)[:4])}"
    if names(reply) & seen_names and not any(map(found, seen_names - names(question))):
        return "links the shown messages to nothing in its chunk"
    claimed = words - seen
    support = sum(map(found, claimed)) / len(claimed) if claimed else 1.0
    if support < min_support:
        return f"ungrounded: {support:.2f} of its words are in the chunk"
    return None


_AUXILIARIES = frozenset("is are was were do does did can could has have had will would shall should may might "
                         "must".split())


def asks_yes_or_no(question: str) -> bool:
    """Whether a question is answered yes or no: English that opens with an auxiliary verb ("Were both ...?"),
    Chinese that asks with 吗, 是否, 是不是 or 有没有."""
    first = question.strip().split(maxsplit=1)[0].lower() if question.strip() else ""
    return first in _AUXILIARIES or any(mark in question for mark in ("吗", "是否", "是不是", "有没有"))


def answer_is_stated(answer: str, messages: list[str], question: str = "") -> bool:
    """Whether an answer says something the messages state. Yes/no answers pass, unless the question asks for
    something else (asked "哪个省", the 1.5B model's answer line once read "Answer: YES"). Its terms beyond the
    question's must mostly occur in the messages: a small model whose messages hold only the first hop of a
    question tends to invent the second, and its answer then names something no message mentions. An answer
    with no term beyond the question's is an answer only when it picks a few of them (one of the options the
    question names); repeating most of the question ("the keeper of X is the keeper of X") is none."""
    words = grounding_terms(answer)
    if answer.strip().lower().rstrip(".") in ("yes", "no"):
        return not question or asks_yes_or_no(question)
    if not words:
        return True
    asked = grounding_terms(question)
    new = words - asked
    if not new:
        return len(words) <= len(asked) / 2
    return len(new & grounding_terms(" ".join(messages))) >= len(new) / 2
