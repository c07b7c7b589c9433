"""What a section writer is given and what it returns, and the settings both writers share.

A section's sources are the ones retrieved for it, best first, shown to the writers as [1] ... [K]; a writer's
draft cites those numbers, and the finished survey renumbers them (extlib.survey.citations)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from ..budget import CHAT_OVERHEAD_TOKENS, require_fit
from ..chunking import decode_span, encode_long
from ..errors import UserError
from ..methods.base import MethodConfig, knob
from ..tokenizer import Tokenizer
from ..trace import CallRecord
from ..words import content_words
from .citations import CITATION, check_citations, sentences
from .outline import Outline, Section
from .sources import Source

_REFERENCES = re.compile(r"^\W*(references|bibliography|sources)\W*$", re.IGNORECASE | re.MULTILINE)
# a writer that goes on to copy its prompt's next heading ("More facts collected from the sources ...")
_PROMPT_ECHO = re.compile(r"^\W*(more facts collected|facts collected from|the section so far|other readers have "
                          r"already|sources:)", re.IGNORECASE | re.MULTILINE)
REPEAT_SHARE = 0.8  # a sentence whose content words are this share of an earlier sentence's is a repeat


@dataclass
class SurveyConfig(MethodConfig):
    """Settings of a survey run; both systems get the same window, sources and generation length."""

    context_window: int = knob(2048, "L, the model's context window in tokens: every call of both systems fits it")
    sections: int = knob(3, "sections of the outline")
    topic_sources: int = knob(60, "sources retrieved for the topic (most of its words first, then BM25): the outline "
                              "is planned from the best of them and each section takes its own from them, so a "
                              "section's words cannot pull in off-topic sources")
    outline_sources: int = knob(0, "titles of the best-ranked sources the outline is planned from (AutoSurvey plans "
                                "from its papers); 0: from the topic alone, as the bundled 1.5B model plans best: "
                                "shown 30 titles, it made sections of the first few in retrieval order", low=0)
    sources_per_section: int = knob(24, "sources of the topic's ranked again for each section, best first (AutoSurvey: "
                                    "60 papers): ExtAgents' seeking agents read them all, the baseline what its "
                                    "window holds")
    chunk_tokens: int = knob(768, "|d_i|, the tokens of sources each seeking agent reads (whole sources)")
    rounds: int = knob(2, "T, ExtAgents' synchronization rounds per section (fewer when a round adds nothing)")
    kar: bool = knob(True, "ExtAgents drafts a section from the top 1, 2, 4, ... facts, one paragraph a step "
                     "(eq. 8); off: one writing call over the facts that fit")
    carry_previous: int = knob(150, "tokens of the previous section's end in ExtAgents' task query (§4.3); 0: none",
                               low=0)
    seek_max_tokens: int = knob(200, "tokens of each seeking agent's reply")
    write_max_tokens: int = knob(400, "tokens of each writing call (both systems)")
    words: int = knob(250, "the length the baseline is asked to write, in words (AutoSurvey: 700)")
    frequency_penalty: float = knob(0.5, "OpenAI's frequency penalty on every writing call of both systems (0: "
                                    "none): greedy decoding of a 1.5B model repeated one sentence to the end of a "
                                    "400-token section", low=0.0, high=2.0)

    def check(self) -> None:
        if max(self.outline_sources, self.sources_per_section) > self.topic_sources:
            raise UserError(f"outline_sources ({self.outline_sources}) and sources_per_section "
                            f"({self.sources_per_section}) are taken from topic_sources ({self.topic_sources}): "
                            "raise topic_sources or lower them")
        if self.chunk_tokens + self.seek_max_tokens >= self.context_window:
            raise UserError(f"chunk_tokens ({self.chunk_tokens}) + seek_max_tokens ({self.seek_max_tokens}) must "
                            f"be below context_window ({self.context_window}) to leave room for the instructions")


@dataclass
class SectionJob:
    topic: str
    outline: Outline
    number: int  # 1-based place in the outline
    sources: list[Source]  # retrieved for this section, best first: [1] ... [K]
    previous: str = ""  # the previous section's text ("" for the first); a writer that uses it drops its citations

    @property
    def section(self) -> Section:
        return self.outline.sections[self.number - 1]


@dataclass
class SectionDraft:
    number: int
    title: str
    text: str  # cites the section's sources by their numbers [k]
    sources: list[str]  # the section's source ids: [k] is sources[k - 1]
    read: list[int]  # the numbers of the sources some call of the writer read
    invalid_citations: int = 0  # cited numbers the citing call was not shown, removed
    moved_citations: int = 0  # citations moved to the shown source a sentence overlaps clearly more (citations.py)
    calls: list[CallRecord] = field(default_factory=list)
    extra: dict = field(default_factory=dict)  # writer-specific facts (ExtAgents: rounds, dropped replies)
    error: str | None = None  # a failed call that left the section unwritten: rerunning writes it again

    def cite(self, text: str, shown: dict[int, str]) -> str:
        """`text` with its citations checked against the sources its call was shown (citations.check_citations),
        the citations removed and moved counted on this draft."""
        text, removed, moved = check_citations(text, shown)
        self.invalid_citations += removed
        self.moved_citations += moved
        return text

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, row: dict) -> SectionDraft:
        return cls(**{**row, "calls": [CallRecord(**c) for c in row["calls"]]})


def source_block(number: int, source: Source, tokenizer: Tokenizer, max_tokens: int) -> str:
    """One source as a writer sees it, cut to `max_tokens`."""
    text = f"[{number}] {source.title}: {source.text}"
    ids = encode_long(tokenizer, text)
    return text if len(ids) <= max_tokens else decode_span(tokenizer, ids, 0, max_tokens) + " ..."


def without_citations(text: str) -> str:
    return " ".join(CITATION.sub("", text).split())


def ending(text: str, tokenizer: Tokenizer, max_tokens: int) -> str:
    """The last `max_tokens` tokens of `text` (all of it when shorter)."""
    ids = encode_long(tokenizer, text)
    return text if len(ids) <= max_tokens else "... " + decode_span(tokenizer, ids, len(ids) - max_tokens, len(ids))


def room(window: int, fixed_tokens: int, max_tokens: int, what: str) -> int:
    """Tokens left in the window for variable content (sources, facts) after the fixed text and the generation."""
    needed = CHAT_OVERHEAD_TOKENS + fixed_tokens + max_tokens
    require_fit(needed + 32, window, what, "raise --context-window or lower --write-max-tokens")
    return window - needed


def clean_section(text: str, title: str) -> str:
    """A writing call's reply without a repeated section title line, format tags, its own reference list (the
    survey has one) or whatever follows a copy of the prompt's headings."""
    text = text.replace("<format>", "").replace("</format>", "")
    for end in (_REFERENCES, _PROMPT_ECHO):
        text = text[:match.start()] if (match := end.search(text)) else text
    lines = text.strip().splitlines()
    while lines and (not lines[0].strip() or (title.lower() in lines[0].lower() and len(lines[0]) < len(title) + 12)):
        lines.pop(0)
    return "\n".join(lines).strip()


def without_repeats(text: str, earlier: str = "") -> str:
    """`text` without the sentences that repeat one before them, in `earlier` or in `text` (REPEAT_SHARE of their
    content words, citations aside): greedy decoding of a 1.5B model restates whole sentences of the draft it
    continues, and both systems' sections lose their repeats the same way."""
    seen = [words for sentence, _ in sentences(earlier) if (words := content_words(CITATION.sub(" ", sentence)))]
    kept = []
    for sentence, gap in sentences(text):
        words = content_words(CITATION.sub(" ", sentence))
        if len(words) >= 4 and any(len(words & other) >= REPEAT_SHARE * len(words) for other in seen):
            if "\n" in gap and kept:  # the paragraph break it ended stays
                kept[-1] = kept[-1].rstrip() + gap
            continue
        seen.append(words)
        kept.append(sentence + gap)
    return "".join(kept).strip()
