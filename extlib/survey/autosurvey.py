"""The baseline: AutoSurvey's section writing (Wang et al., 2024), as the paper ran it, without AutoSurvey's
reflection (citation check) and refinement (coherence rewrite) steps. Each section is written in one call from
the section's retrieved sources, best first, as many as the window holds with room for the generation."""

from __future__ import annotations

from ..budget import greedy_within
from ..calls import call
from ..llm import LLMClient
from .drafting import SectionDraft, SectionJob, SurveyConfig, clean_section, room, source_block, without_repeats
from .prompts import AUTOSURVEY_WRITE


class AutoSurveyWriter:
    version = 2  # 2: a line's opening citation moved to its sentences' ends, repeated sentences removed
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
        draft.text = without_repeats(draft.cite(clean_section(text, section.title), {k: blocks[k] for k in shown}))
        return draft
