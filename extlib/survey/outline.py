"""The survey's outline (paper §4.3, the drafting method of AutoSurvey): written first, from the topic and the titles
of the best-ranked sources (or, the small model's default, from the topic alone), and then shared by both systems,
which fill its sections."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from ..calls import call
from ..errors import UserError
from ..llm import LLMClient
from ..prompts import ordinal
from ..trace import CallRecord
from .prompts import OUTLINE, OUTLINE_FROM_TOPIC, OUTLINE_SLOT
from .sources import Source

_TITLE = re.compile(r"^\s*[#*]*\s*(?:section\s*)?(\d+)(?!\.\d)\s*[.:)\-]\s*(.+?)\s*[*]*\s*$", re.IGNORECASE)
_DESCRIPTION = re.compile(r"^\s*[-*]*\s*description\s*[:\-]\s*(.+?)\s*$", re.IGNORECASE)


TOKENS_PER_SECTION = 96  # a title and a one-sentence description
VERSION = 2  # of the outline prompt and parser: a folder holding an outline of another version is refused
# (2: no section titled as the topic itself; the 1.5B model made "History of mathematics" a section of it; the
# outline from the topic alone when no source titles are given)


class OutlineError(UserError):
    """The model's outline reply has no section the parser can read."""


@dataclass
class Section:
    title: str
    description: str = ""

    def query(self, topic: str) -> str:
        """What the section's sources are retrieved with."""
        return f"{topic} {self.title} {self.description}"


@dataclass
class Outline:
    topic: str
    sections: list[Section]
    calls: list[CallRecord] = field(default_factory=list)

    def contents(self) -> str:
        return "\n".join(f"{n}. {s.title}" for n, s in enumerate(self.sections, 1))

    def to_dict(self) -> dict:
        return {"topic": self.topic, "sections": [asdict(s) for s in self.sections],
                "calls": [asdict(c) for c in self.calls]}

    @classmethod
    def from_dict(cls, row: dict) -> Outline:
        return cls(row["topic"], [Section(**s) for s in row["sections"]], [CallRecord(**c) for c in row["calls"]])


def _plain(text: str) -> str:
    """A title's words in lower case, without articles, each cut to five letters: "The History of Astronomy" is the
    topic "history of astronomy", "Volcano" the topic "volcanoes"."""
    return " ".join(w[:5] for w in re.findall(r"\w+", text.lower()) if w not in {"the", "a", "an"})


def parse_outline(text: str, limit: int) -> list[Section]:
    """Numbered section lines, each with the description line that follows it; at most `limit`, repeats and
    sub-sections ("1.1 ...") dropped."""
    sections: list[Section] = []
    for line in text.splitlines():
        if (match := _DESCRIPTION.match(line)) and sections and not sections[-1].description:
            sections[-1].description = match.group(1)
        elif match := _TITLE.match(line):
            title = match.group(2).strip().strip('"*').strip()
            if title and title.lower() not in {s.title.lower() for s in sections}:
                sections.append(Section(title))
    return sections[:limit]


async def draft_outline(llm: LLMClient, topic: str, sources: list[Source], sections: int) -> Outline:
    """The outline from the topic and the titles of its best-ranked sources (none: from the topic alone): numbered
    slots the model fills in (a 1.5B model asked for "exactly 3 sections" wrote one; given three slots it fills
    three). A section about the whole topic is no section of its survey: such titles are not offered, one slot
    more is asked for, and a section titled as the topic is left out (the 1.5B model wrote "History of
    Mathematics" first in any case)."""
    titles = "\n".join(f"- {s.title}" for s in sources if _plain(s.title) != _plain(topic))
    slots = "\n".join(OUTLINE_SLOT.format(number=k, ordinal=ordinal(k)) for k in range(1, sections + 2))
    prompt = (OUTLINE if titles else OUTLINE_FROM_TOPIC).format(topic=topic, titles=titles, sections=sections + 1,
                                                                 slots=slots)
    text, record = await call(llm, prompt, TOKENS_PER_SECTION * (sections + 1), "outline", 0)
    if text is None:
        raise OutlineError(f"the outline call failed: {record.error}")
    parsed = [s for s in parse_outline(text, sections + 1) if _plain(s.title) != _plain(topic)][:sections]
    if not parsed:
        raise OutlineError(f"the model's outline has no line like 'Section 1: <title>'; it wrote: {text[:300]!r}")
    return Outline(topic, parsed, [record])
