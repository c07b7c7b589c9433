"""ExtAgents drafting a survey section (paper §4.3, Appendix E.1): the section's retrieved sources are split into
chunks, one seeking agent each; the agents collect cited facts for the section's task query over synchronization
rounds with the best-ranked facts broadcast to all (GKS, eq. 6-7, ranked by retrieval order as for HotpotQA); the
reasoning agent then drafts the section as knowledge accumulates (KAR, eq. 8): its first step writes the opening
from the top-ranked facts, each later step continues the draft with the facts ranked next (top 1, 2, 4, ...).

Choices the paper leaves open, made here: the task query carries the end of the previous section (not all of it,
so a seeking prompt keeps its room for facts); a fact's citations must name sources of the agent's own chunk (others
are removed, and a reply left with none is not shared); a KAR step writes one paragraph instead of rewriting the
whole draft, so the section can grow past one call's generation length, and its sentences that repeat the draft
are removed (the baseline's repeats are removed the same way).
"""

from __future__ import annotations

import re

from ..budget import consecutive_groups, greedy_within
from ..calls import call
from ..grounding import grounding_terms
from ..llm import LLMClient
from ..methods.extagents import Scratchpad, kar_schedule
from ..methods.synchronization import rounds
from ..parsing import is_no_information
from ..trace import CallRecord
from .citations import cited_numbers
from .drafting import (
    SectionDraft,
    SectionJob,
    SurveyConfig,
    clean_section,
    ending,
    room,
    source_block,
    without_citations,
    without_repeats,
)
from .prompts import PREVIOUS, SEEK_FIRST, SEEK_NEXT, TASK, WRITE_FIRST, WRITE_NEXT

DRAFT_SHOWN = 100  # tokens of the draft so far that a continuing KAR step sees (its end): enough to follow on


def format_facts(facts: list[str]) -> str:
    return "\n".join(f"- {f.strip()}" for f in facts) if facts else "(none were found)"


class ExtAgentsWriter:
    version = 3  # 2: facts one a line; opening citations moved to sentence ends; repeated sentences removed; 3: the
    #              first round's agents write NO INFORMATION only when no source says anything of the subject

    def __init__(self, config: SurveyConfig, progress: bool = False) -> None:
        self.config, self.progress = config, progress

    @property
    def uses_previous(self) -> bool:
        """Whether a section's task query carries the previous section (then a rewritten one redoes the next)."""
        return self.config.carry_previous > 0

    async def write(self, job: SectionJob, llm: LLMClient, reasoner: LLMClient | None = None) -> SectionDraft:
        cfg, section, tokenizer = self.config, job.section, llm.tokenizer
        task = TASK.format(number=job.number, title=section.title, topic=job.topic, description=section.description)
        previous = PREVIOUS.format(previous=ending(without_citations(job.previous), tokenizer, cfg.carry_previous)) \
            if job.previous and cfg.carry_previous else ""
        blocks = {k: source_block(k, s, tokenizer, cfg.chunk_tokens) for k, s in enumerate(job.sources, 1)}
        chunks = consecutive_groups(list(blocks), lambda k: llm.count_tokens(blocks[k]) + 1, cfg.chunk_tokens)
        fixed = llm.count_tokens(SEEK_NEXT.format(task=task, previous=previous, messages="", sources="", example=1))
        seek_room = room(cfg.context_window, fixed + cfg.chunk_tokens, cfg.seek_max_tokens,
                         "a seeking prompt (the task query, the previous section's end and a chunk)")
        pad = Scratchpad(llm, task)
        draft = SectionDraft(job.number, section.title, "", [s.id for s in job.sources], list(blocks),
                             extra={"agents": len(chunks), "rounds": 0})

        def seek(i: int, shown: list[str], t: int):  # eq. 7, with the facts of Top_k(M_{t-1}) from round 2 on
            prompt = (SEEK_FIRST if t == 1 else SEEK_NEXT).format(
                task=task, previous=previous, messages=format_facts(shown), example=chunks[i][0],
                sources="\n".join(blocks[k] for k in chunks[i]))
            return call(llm, prompt, cfg.seek_max_tokens, "seek", t, i)

        def admission(t: int, shown: dict[int, list[str]]):
            return lambda i, reply: self._admit(pad, i, reply, {k: blocks[k] for k in chunks[i]}, draft)

        async for r in rounds(pad, list(range(len(chunks))), cfg.rounds, seek_room, seek, admission,
                              progress=self.progress, label=f"section {job.number} "):  # GKS, eq. 6-7
            draft.calls += [record for _, record in r.replies.values()]
            draft.extra["rounds"] = r.t
            pad.scores.update({i: -float(i) for i in pad.notes})  # retrieval order: the best sources' agent first
            if not r.changed:
                break  # nothing new: a further round would see the same facts
        failed = [record for record in draft.calls if record.error]
        if failed:  # the section is written again when rerun (its other calls then come from the response cache)
            draft.error = f"{len(failed)} seeking call(s) failed after retries; first error: {failed[0].error}"
            return draft
        if pad.notes:  # else no source gave a fact for the section: it stays empty rather than invented
            await self._write(job, task, previous, pad.texts(pad.ranked()), blocks, reasoner or llm, draft)
        return draft

    @staticmethod
    def _admit(pad: Scratchpad, i: int, reply: tuple[str | None, CallRecord], shown: dict[int, str],
               draft: SectionDraft) -> bool:
        """Agent i's reply joins its message (m_{i,t} = m_{i,t-1} + the reply) unless it failed, found nothing,
        cites none of the agent's sources (`shown`, by number), or adds no word beyond the facts already collected.
        Its citations of other numbers are removed, and each is moved to the source its sentence comes from."""
        text, record = reply
        if text is None:
            return False
        # "[1] NO INFORMATION" lines, how a small model answers for a source it skips, and a last line its token
        # limit cut short ("Series ( [22]" once its citation is moved) are no facts
        lines = [line for line in text.strip().splitlines()
                 if not is_no_information(without_citations(line).lstrip("-*•: "))]
        if lines and not re.search(r"[.!?\]\")'”]\s*$", lines[-1]):
            lines.pop()
        text = "\n".join(lines)
        if is_no_information(text):
            return False
        text = draft.cite(text, shown)
        if not cited_numbers(text):
            record.dropped = "cites none of its sources"
            return False
        if not grounding_terms(text) - grounding_terms(" ".join(pad.notes.values())):
            record.dropped = "adds nothing to the collected facts"
            return False
        pad.notes[i] = f"{pad.notes[i]}\n{text}" if i in pad.notes else text
        return True

    async def _write(self, job: SectionJob, task: str, previous: str, facts: list[str], sources: dict[int, str],
                     llm: LLMClient, draft: SectionDraft) -> None:
        """KAR for writing (eq. 8): step s writes a paragraph from the facts ranked (2^(s-2), 2^(s-1)], continuing
        the draft; facts a step's room cannot hold wait for the next step, and steps go on until every fact that
        fits a prompt is written (without KAR: one call over the facts that fit). A paragraph may cite the sources its
        facts cite; each cited sentence moves to the one of those it clearly comes from (`sources`: by number)."""
        cfg, tokenizer = self.config, llm.tokenizer
        sizes = kar_schedule(len(facts)) if cfg.kar else [len(facts)]
        batches = [facts[a:b] for a, b in zip([0, *sizes], sizes)]  # the facts each step adds
        first = llm.count_tokens(WRITE_FIRST.format(task=task, previous=previous, messages="", example=1))
        later = llm.count_tokens(WRITE_NEXT.format(task=task, draft="", messages="", example=1)) + DRAFT_SHOWN
        paragraphs: list[str] = []
        waiting: list[str] = []
        while batches or waiting:
            waiting += batches.pop(0) if batches else []
            space = room(cfg.context_window, later if paragraphs else first, cfg.write_max_tokens,
                         "a writing prompt (the task query, the draft's end)")
            given = greedy_within(waiting, lambda f: llm.count_tokens(f) + 2, space)
            if not given:
                if batches:
                    continue
                break  # what waits is longer than any prompt holds
            waiting = [f for f in waiting if f not in given]
            step = len(paragraphs) + 1
            prompt = WRITE_NEXT.format(task=task, draft=ending("\n\n".join(paragraphs), tokenizer, DRAFT_SHOWN),
                                       messages=format_facts(given), example=_example(given)) if paragraphs else \
                WRITE_FIRST.format(task=task, previous=previous, messages=format_facts(given), example=_example(given))
            text, record = await call(llm, prompt, cfg.write_max_tokens, "write", draft.extra["rounds"], None, step,
                                      frequency_penalty=cfg.frequency_penalty)
            draft.calls.append(record)
            if text is None:
                draft.error = f"writing step {step} failed after retries: {record.error}"
                return
            cited = {n for f in given for n in cited_numbers(f)}
            paragraph = draft.cite(clean_section(text, job.section.title), {n: sources[n] for n in cited})
            paragraphs.append(without_repeats(paragraph, earlier="\n\n".join(paragraphs)))
            if not cfg.kar:
                break
        draft.text = "\n\n".join(p for p in paragraphs if p)
        draft.extra.update(facts=len(facts), facts_unused=len(waiting) + sum(map(len, batches)),
                           steps=len(paragraphs))


def _example(facts: list[str]) -> int:
    return next(iter(n for f in facts for n in cited_numbers(f)), 1)
