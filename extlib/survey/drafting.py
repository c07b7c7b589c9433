"""What a section writer is given and what it returns, and the settings both writers share.

A section's sources are the ones retrieved for it, best first, shown to the writers as [1] ... [K]; a writer's
draft cites those numbers, and the finished survey renumbers them (extlib.survey.citations)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..budget import CHAT_OVERHEAD_TOKENS, require_fit
from ..chunking import decode_span, encode_long
from ..methods.base import MethodConfig, knob
from ..tokenizer import Tokenizer
from ..trace import CallRecord
from .citations import CITATION, check_citations
from .outline import Outline, Section
from .sources import Source


@dataclass
class SurveyConfig(MethodConfig):
    """Settings of a survey run; both systems get the same window, sources and generation length."""

    context_window: int = knob(2048, "L, the model's context window in tokens: every call of both systems fits it")
    sections: int = knob(3, "sections of the outline")
    topic_sources: int = knob(60, "sources retrieved for the topic (most of its words first, then BM25): the outline "
                              "is planned from the best of them and each section takes its own from them, so a "
                              "section's words cannot pull in off-topic sources")
    outline_sources: int = knob(30, "titles of the best-ranked sources the outline is planned from")
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
            raise ValueError(f"outline_sources ({self.outline_sources}) and sources_per_section "
                             f"({self.sources_per_section}) are taken from topic_sources ({self.topic_sources}): "
                             "raise topic_sources or lower them")
        if self.chunk_tokens + self.seek_max_tokens >= self.context_window:
            raise ValueError(f"chunk_tokens ({self.chunk_tokens}) + seek_max_tokens ({self.seek_max_tokens}) must "
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
