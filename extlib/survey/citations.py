"""Numbered citations: the writers cite the sources they were shown as [3] or [1, 4]; a number the writer was not
shown is removed (and counted); the finished survey numbers its references in order of first citation; and the
paper's citation measures (Appendix E.1) are counted on the finished text."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from ..words import content_words

# [3], [1, 4], [2; 5], [1-3] or [2–4] (a range cites each number in it); not [1990] (a year, four digits) and not
# a Markdown link [2](...)
_NUMBER = r"\d{1,3}(?:\s*[-–]\s*\d{1,3})?"
_NUMBERS = rf"{_NUMBER}(?:\s*[,;]\s*{_NUMBER})*"  # what a citation's brackets hold
CITATION = re.compile(rf"\[\s*({_NUMBERS})\s*\](?!\()")
MAX_RANGE = 20  # a longer "range" is not a citation of every number in it
# the space between two sentences; a sentence ends after its citation: "... in 1609 [3]." or "... in 1609. [3]"
_SENTENCE_GAP = re.compile(r"(?<=[.!?])\s+(?=[^\[\s])|(?<=\])\s+(?=[A-Z0-9\"'(])")
# a line that opens with its citation, after an optional bullet: "- [3] Euclid was ..." or "[3]: Euclid was ..."
_LEADING = re.compile(rf"^(\s*(?:[-*•]|\d{{1,2}}[.)])?\s*)\[\s*({_NUMBERS})\s*\]\s*:?\s*")


def _numbers(group: str) -> list[int]:
    out = []
    for part in re.split(r"[,;]", group):
        first, _, last = part.replace("–", "-").partition("-")
        start, end = int(first), int(last) if last.strip() else int(first)
        out += list(range(start, end + 1)) if 0 <= end - start <= MAX_RANGE else [start, end]
    return out


def cited_numbers(text: str) -> list[int]:
    """Every cited number, in order, a bracket of several (or a range) counting each."""
    return [n for match in CITATION.finditer(text) for n in _numbers(match.group(1))]


def _rewrite(text: str, number: Callable[[int], int | None]) -> str:
    """Each citation's numbers mapped by `number` (None drops one; a bracket left empty goes, with the space before
    it)."""
    def one(match: re.Match) -> str:
        kept = list(dict.fromkeys(n for n in map(number, _numbers(match.group(1))) if n is not None))
        return f"[{', '.join(map(str, kept))}]" if kept else "\x00"

    return re.sub(r"[ \t]*\x00", "", CITATION.sub(one, text))


def keep_citations(text: str, allowed: Collection[int]) -> tuple[str, int]:
    """`text` without the cited numbers outside `allowed` (sources the writer was not shown), and how many went."""
    dropped = sum(1 for n in cited_numbers(text) if n not in allowed)
    return (_rewrite(text, lambda n: n if n in allowed else None), dropped) if dropped else (text, 0)


def sentences(text: str) -> list[tuple[str, str]]:
    """`text` as (sentence, the whitespace after it) pairs, a sentence's citation counted in it; joined, they give
    `text` back."""
    out, start = [], 0
    for gap in _SENTENCE_GAP.finditer(text):
        out.append((text[start:gap.start()], gap.group()))
        start = gap.end()
    return [*out, (text[start:], "")]


def citations_at_end(text: str) -> str:
    """Each line that opens with a citation ("[3] Euclid was a Greek mathematician. He wrote ...", as a small model
    copies the way sources are shown to it) with that citation at the end of each of its sentences instead
    ("Euclid was a Greek mathematician [3]. He wrote ... [3]"), where a reader, the measures and `reattribute`
    look for it. A sentence that cites something itself keeps its own citation."""
    def fix(line: str) -> str:
        if not (match := _LEADING.match(line)) or not line[match.end():].strip():
            return line
        mark = f"[{match.group(2)}]"
        return match.group(1) + "".join(
            (sentence if CITATION.search(sentence) else
             re.sub(r"\s*([.!?]?)\s*$", lambda end: f" {mark}{end.group(1)}", sentence, count=1)) + gap
            for sentence, gap in sentences(line[match.end():]))

    return "\n".join(fix(line) for line in text.split("\n"))


def reattribute(text: str, sources: Mapping[int, str], margin: float = 0.2) -> tuple[str, int]:
    """Each cited sentence's citation moved to the source it overlaps most, when that source holds clearly more of its
    content words (by `margin`) than the one it cites: a small model copies the example number of its instructions
    more than the number of the source it read. Returns the text and how many citations moved."""
    moved = 0

    def fix(sentence: str) -> str:
        nonlocal moved
        cited = [n for n in cited_numbers(sentence) if n in sources]
        words = content_words(CITATION.sub(" ", sentence))
        if not cited or not words:
            return sentence
        share = {n: len(words & vocabulary[n]) / len(words) for n in sources}
        best = max(share, key=lambda n: (share[n], -n))
        if share[best] > max(share[n] for n in cited) + margin:
            moved += 1
            return _rewrite(sentence, lambda n: best)
        return sentence

    vocabulary = {n: content_words(source) for n, source in sources.items()}
    fixed = "".join(fix(sentence) + gap for sentence, gap in sentences(text))
    return (fixed if moved else text), moved


def check_citations(text: str, shown: Mapping[int, str]) -> tuple[str, int, int]:
    """What every citing call's reply goes through: a line's opening citation put at its sentences' ends, citations
    of numbers not `shown` ({number: source text}) removed, then each cited sentence moved to the shown source it
    clearly comes from. Returns the text and the counts of citations removed and moved."""
    text, removed = keep_citations(citations_at_end(text), set(shown))
    text, moved = reattribute(text, shown)
    return text, removed, moved


def _end_citation(sentence: str) -> tuple[frozenset[int], str | None] | None:
    """The numbers of a sentence's citation when it is the sentence's only one and ends it ("... oil [6]." or
    "... oil. [6]"), with the sentence without it (None when the citation stands in for the end mark: "... oil [6]");
    None for a sentence that cites nothing, more than once, or elsewhere ("As [6] shows, ...")."""
    matches = list(CITATION.finditer(sentence))
    if len(matches) != 1:
        return None
    before, after = sentence[:matches[0].start()], sentence[matches[0].end():]
    numbers = frozenset(_numbers(matches[0].group(1)))
    if re.fullmatch(r"\s*[.!?]\s*", after):
        return numbers, before.rstrip() + after.strip()
    if after.strip():
        return None
    return numbers, (before.rstrip() if re.search(r"[.!?][\"')]?\s*$", before) else None)


def merge_citation_runs(text: str) -> tuple[str, int]:
    """Within a line, a run of consecutive sentences ending with the same citation cites it once, after its last
    sentence ("A [6]. B [6]. C [6]." -> "A. B. C [6]."), the usual way a paragraph drawn from one source cites
    it: the 1.5B seeking agents copy a source's sentences one by one, each cited, and a section built from them
    repeated one citation after every sentence. Only a sentence's one citation at its end is merged (a citation
    inside a sentence stays), and one that stands in for the end mark stays. Returns the text and how many citation
    marks went."""
    merged = 0

    def merge(line: str) -> str:
        nonlocal merged
        parts = sentences(line)
        ends = [_end_citation(sentence) for sentence, _ in parts]
        out = []
        for k, (sentence, gap) in enumerate(parts):
            this, following = ends[k], ends[k + 1] if k + 1 < len(parts) else None
            if this and following and this[0] == following[0] and this[1] is not None:
                merged += len(cited_numbers(sentence))
                sentence = this[1]
            out.append(sentence + gap)
        return "".join(out)

    fixed = "\n".join(merge(line) for line in text.split("\n"))
    return (fixed if merged else text), merged


def renumber(text: str, local_ids: Mapping[int, str], numbering: dict[str, int]) -> str:
    """Section-local numbers -> the survey's reference numbers, giving each newly cited source the next number
    (`numbering`, source id -> number, grows in order of first citation)."""
    def number(n: int) -> int | None:
        source_id = local_ids.get(n)
        if source_id is None:
            return None
        return numbering.setdefault(source_id, len(numbering) + 1)
    return _rewrite(text, number)


@dataclass(frozen=True)
class CitationStats:
    """The paper's survey measures (Table 4, Appendix E.1), counted on the survey's text without its reference list."""

    citations: int  # distinct sources cited: the size of the reference list
    citation_marks: int  # every cited number, a bracket of several counting each
    tokens: int
    duplicate_marks: int  # marks that cite a source already cited earlier in the survey

    @property
    def density(self) -> float:
        """Citations per 1,000 tokens of survey text."""
        return 1000 * self.citation_marks / self.tokens if self.tokens else 0.0

    @property
    def duplication_rate(self) -> float:
        """Duplicate citations over all citations, in percent."""
        return 100 * self.duplicate_marks / self.citation_marks if self.citation_marks else 0.0

    def as_row(self) -> dict[str, float]:
        return {"citations": self.citations, "citation marks": self.citation_marks, "tokens": self.tokens,
                "citation density": round(self.density, 2), "duplication rate %": round(self.duplication_rate, 2)}


def citation_stats(text: str, count_tokens: Callable[[str], int]) -> CitationStats:
    marks = cited_numbers(text)
    return CitationStats(len(set(marks)), len(marks), count_tokens(text), len(marks) - len(set(marks)))
