"""The baseline: AutoSurvey's section writing (Wang et al., 2024), as the paper ran it, without AutoSurvey's
reflection (citation check) and refinement (coherence rewrite) steps. Each section is written in one call from
the section's retrieved sources, best first, as many as the window holds with room for the generation."""

from __future__ import annotations

import re

from ..budget import greedy_within
from ..calls import call
from ..llm import LLMClient
from .drafting import SectionDraft, SectionJob, SurveyConfig, room, source_block
from .prompts import AUTOSURVEY_WRITE

_REFERENCES = re.compile(r"^\W*(references|bibliography|sources)\W*$", re.IGNORECASE | re.MULTILINE)


def clean_section(text: str, title: str) -> str:
    """The reply without a repeated section title line, format tags, or a reference list of its own (the survey
    has one)."""
    text = text.replace("<format>", "").replace("</format>", "")
    text = text[:match.start()] if (match := _REFERENCES.search(text)) else text
    lines = text.strip().splitlines()
    while lines and (not lines[0].strip() or (title.lower() in lines[0].lower() and len(lines[0]) < len(title) + 12)):
        lines.pop(0)
    return "\n".join(lines).strip()


class AutoSurveyWriter:
    version = 1
    uses_previous = False  # sections are written independently, as AutoSurvey writes its subsections

    def __init__(self, config: SurveyConfig, progress: bool = False) -> None:
        self.config, self.progress = config, progress

    async def write(self, job: SectionJob, llm: LLMClient, reasoner: LLMClient | None = None) -> SectionDraft:
        cfg, section, tokenizer = self.config, job.section, llm.tokenizer
        fields = dict(topic=job.topic, outline=job.outline.contents(), number=job.number, title=section.title,
                      description=section.description, words=cfg.words, example=1)
        space = room(cfg.context_window, llm.count_tokens(AUTOSURVEY_WRITE.format(sources="", **fields)),
                     cfg.write_max_tokens, "the baseline's writing prompt (topic, outline, instructions)")
        blocks = {k: source_block(k, s, tokenizer, space) for k, s in enumerate(job.sources, 1)}
        shown = greedy_within(list(blocks), lambda k: llm.count_tokens(blocks[k]) + 1, space)
        prompt = AUTOSURVEY_WRITE.format(sources="\n".join(blocks[k] for k in shown), **fields)
        text, record = await call(llm, prompt, cfg.write_max_tokens, "write", 1,
                                  frequency_penalty=cfg.frequency_penalty)
        draft = SectionDraft(job.number, section.title, "", [s.id for s in job.sources], shown, calls=[record])
        if text is None:
            draft.error = f"the writing call failed: {record.error}"
            return draft
        draft.text = draft.cite(clean_section(text, section.title), {k: blocks[k] for k in shown})
        return draft
