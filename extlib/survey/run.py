"""One survey, resumably: the outline (shared by every system of a topic), then each section retrieved and written
in outline order and saved as it is finished, then the Markdown survey with its numbered references and a JSON
record of every agent call. Assembling the sections, both systems alike, removes a sentence that repeats one of an
earlier section and merges a run of sentences citing the same sources into one citation. A rerun skips what is
saved; a section whose call failed is written again.

    out/<topic>/outline.json
    out/<topic>/<system>/sections/01.json ...   the finished sections
    out/<topic>/<system>/survey.md               the survey
    out/<topic>/<system>/record.json             settings, outline, every call, citation measures
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..budget import PromptTooLong
from ..errors import UserError
from ..fan_out import progress_bar
from ..llm import LLMClient
from .autosurvey import AutoSurveyWriter
from .citations import CitationStats, citation_stats, merge_citation_runs, renumber, sentences
from .drafting import SectionDraft, SectionJob, SurveyConfig, without_repeats
from .extagents_writer import ExtAgentsWriter
from .judge import judge_pair, read_judgement, summarize
from .outline import VERSION as OUTLINE_VERSION
from .outline import Outline, draft_outline
from .sources import Source, SourceCollection

WRITERS = {"extagents": ExtAgentsWriter, "autosurvey": AutoSurveyWriter}


class SurveyError(UserError):
    """A survey that cannot be written as asked; the message says why and what to change."""


@dataclass
class Survey:
    topic: str
    system: str
    markdown: str
    body: str  # the survey without its reference list: what the citation measures and the judge read
    path: Path  # survey.md
    stats: CitationStats
    sections: list[SectionDraft]
    assembly: dict[str, int]  # what assembling the sections took out (run.py's _finish), counted
    note: str = ""  # read back from a record of another writer version than the code's: which (read_survey)

    @property
    def failed(self) -> list[int]:
        return [d.number for d in self.sections if d.error]

    def row(self) -> dict[str, Any]:
        calls = [c for d in self.sections for c in d.calls]
        return {"topic": self.topic, "system": self.system, **self.stats.as_row(),
                "sources read": sum(len(d.read) for d in self.sections),
                "invalid citations removed": sum(d.invalid_citations for d in self.sections),
                "citations moved to their source": sum(d.moved_citations for d in self.sections),
                **self.assembly,
                "LLM calls": len(calls), "prompt tokens": sum(c.prompt_tokens for c in calls),
                "completion tokens": sum(c.completion_tokens for c in calls),
                "failed sections": len(self.failed)}


def topic_folder(out: Path, topic: str) -> Path:
    slug = re.sub(r"[^a-z0-9]+", "-", topic.lower()).strip("-")[:60]
    if not slug:
        raise SurveyError(f"topic {topic!r} has no letters or digits to name its folder by")
    return Path(out) / slug


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def _same_settings(path: Path, settings: dict[str, Any], folder: Path) -> dict | None:
    """The saved file's content, None when there is none; an error when it was written with other settings."""
    if not path.exists():
        return None
    saved = json.loads(path.read_text(encoding="utf-8"))
    if saved.get("settings") != settings:
        changed = sorted(k for k in {**settings, **saved.get("settings", {})}
                         if saved.get("settings", {}).get(k) != settings.get(k))
        raise SurveyError(f"{path} was written with other settings ({', '.join(changed)} differ); give another "
                          f"--out folder, or delete {folder} to start that survey over")
    return saved


async def outline_for(topic: str, collection: SourceCollection, pool: list[Source], llm: LLMClient,
                      config: SurveyConfig, folder: Path) -> Outline:
    """The topic's saved outline, or a new one (saved), planned from the titles of the topic's best sources."""
    settings = {"topic": topic, "sources": collection.name, "sources_sha256": collection.fingerprint,
                "model": llm.model_id, "temperature": llm.temperature, "sections": config.sections,
                "outline_sources": config.outline_sources, "topic_sources": config.topic_sources,
                "version": OUTLINE_VERSION}
    path = folder / "outline.json"
    if saved := _same_settings(path, settings, folder):
        return Outline.from_dict(saved["outline"])
    outline = await draft_outline(llm, topic, pool[:config.outline_sources], config.sections)
    _write_json(path, {"settings": settings, "outline": outline.to_dict()})
    return outline


async def write_survey(topic: str, collection: SourceCollection, system: str, llm: LLMClient, config: SurveyConfig,
                       out: Path, reasoner: LLMClient | None = None, progress: bool = True) -> Survey:
    """Write (or finish) the survey on `topic` from `collection` with `system` (extagents or autosurvey)."""
    if system not in WRITERS:
        raise SurveyError(f"unknown survey system {system!r}; choose from: {', '.join(WRITERS)}")
    if not isinstance(topic, str) or not topic.strip():
        raise SurveyError("the topic is empty")
    topic = " ".join(topic.split())
    folder = topic_folder(out, topic)
    pool = collection.about(topic, config.topic_sources)  # the topic's sources, best first
    if not pool:
        raise SurveyError(f"no source in {collection.name} shares a word with the topic {topic!r}: pick a topic the "
                          "collection covers, or other sources")
    writer = WRITERS[system](config, progress)
    outline = await outline_for(topic, collection, pool, llm, config, folder)
    settings = {"system": system, "version": writer.version, "config": asdict(config), "model": llm.model_id,
                "reasoning_model": reasoner.model_id if reasoner else None, "temperature": llm.temperature,
                "sources": collection.name, "sources_sha256": collection.fingerprint}
    sections: list[SectionDraft] = []
    for number, section in progress_bar(progress, iterable=list(enumerate(outline.sections, 1)),
                                        desc=f"{folder.name}: {system} sections", unit="section"):
        path = folder / system / "sections" / f"{number:02d}.json"
        previous = sections[-1].text if sections else ""
        # a section written after the previous one: redone when that one changed (e.g. was written by a rerun)
        identity = {**settings, "previous_sha256": hashlib.sha256(previous.encode()).hexdigest()} \
            if writer.uses_previous else settings
        if saved := _same_settings(path, identity, folder / system):
            sections.append(SectionDraft.from_dict(saved["section"]))
            continue
        job = SectionJob(topic, outline, number,
                         collection.search(section.query(topic), config.sources_per_section, among=pool), previous)
        if not job.sources:
            draft = SectionDraft(number, section.title, "", [], [], error="no source shares a word with this section")
        else:
            draft = await writer.write(job, llm, reasoner)
        sections.append(draft)
        if not draft.error:  # a failed section is recorded in the survey and the record, and written again next run
            _write_json(path, {"settings": identity, "section": draft.to_dict()})
    return _finish(topic, system, collection, outline, sections, settings, folder / system, llm)


def _finish(topic: str, system: str, collection: SourceCollection, outline: Outline, sections: list[SectionDraft],
            settings: dict[str, Any], folder: Path, llm: LLMClient) -> Survey:
    numbering: dict[str, int] = {}
    parts, written, assembly = [f"# {topic}\n"], [], {"sentences repeating an earlier section": 0,
                                                      "citation marks merged": 0}
    for draft in sections:
        if draft.error:
            text = f"*(This section was not written: {draft.error}. Rerunning the same command writes it.)*"
        elif not draft.text:
            text = "*(No source gave facts for this section.)*"
        else:  # both systems' sections are assembled alike: repeats of earlier sections out, citation runs merged
            text = without_repeats(draft.text, earlier="\n\n".join(written))
            assembly["sentences repeating an earlier section"] += len(sentences(draft.text)) - (
                len(sentences(text)) if text else 0)
            text, merged = merge_citation_runs(text)
            assembly["citation marks merged"] += merged
            written.append(draft.text)
            text = renumber(text, dict(enumerate(draft.sources, 1)), numbering) if text else \
                "*(Every sentence of this section repeated one of an earlier section.)*"
        parts.append(f"## {draft.number}. {draft.title}\n\n{text}\n")
    body = "\n".join(parts).rstrip()
    references = [f"[{n}] {collection[source_id].title}" + (f" ({source_id})" if source_id != collection[
        source_id].title else "") for source_id, n in sorted(numbering.items(), key=lambda item: item[1])]
    markdown = f"{body}\n\n## References\n\n" + ("\n".join(references) if references else "(none cited)") + "\n"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "survey.md").write_text(markdown, encoding="utf-8")
    survey = Survey(topic, system, markdown, body, folder / "survey.md", citation_stats(body, llm.count_tokens),
                    sections, assembly)
    _write_json(folder / "record.json", {"settings": settings, "outline": outline.to_dict(), "row": survey.row(),
                                         "references": {n: source_id for source_id, n in numbering.items()},
                                         "sections": [d.to_dict() for d in sections]})
    return survey


def read_survey(topic: str, system: str, out: Path, llm: LLMClient) -> Survey:
    """The survey `write_survey` saved, read back without a model call (a committed study is drawn from it)."""
    folder = topic_folder(out, " ".join(topic.split())) / system
    if not (folder / "record.json").exists():
        raise SurveyError(f"no saved {system} survey on {topic!r} in {folder}: write it first (compute=True)")
    record = json.loads((folder / "record.json").read_text(encoding="utf-8"))
    markdown = (folder / "survey.md").read_text(encoding="utf-8")
    body = markdown.split("\n\n## References\n\n")[0]
    assembly = {k: record["row"][k] for k in ("sentences repeating an earlier section", "citation marks merged")}
    written, code = record["settings"]["version"], WRITERS[system].version
    return Survey(record["row"]["topic"], system, markdown, body, folder / "survey.md",
                  citation_stats(body, llm.count_tokens), [SectionDraft.from_dict(d) for d in record["sections"]],
                  assembly, note=f"v{written}, code v{code}" if written != code else "")


def read_judged(out: Path, topic: str) -> dict[str, dict]:
    """The judge's summary per system that `judge_surveys` saved for `topic`, read back without a model call."""
    path = topic_folder(out, " ".join(topic.split())) / "judge.json"
    if not path.exists():
        raise SurveyError(f"no saved judgement of the surveys on {topic!r} at {path}: judge them first (compute=True)")
    return json.loads(path.read_text(encoding="utf-8"))["summary"]


async def judge_surveys(llm: LLMClient, first: Survey, second: Survey, out: Path, samples: int,
                        temperature: float = 1.0, window: int = 8192) -> dict[str, dict]:
    """The pairwise judge of two systems' surveys on one topic (extlib.survey.judge), its judgements saved beside
    them (out/<topic>/judge.json) and read back by a rerun with the same surveys, judge model and settings (no model
    call; the scores read again from the saved replies); returns the summary per system. Surveys with unwritten
    sections, or too long for the judge's window, are not judged: each system's summary then says why (`skipped`)."""
    path, systems = topic_folder(out, first.topic) / "judge.json", (first.system, second.system)
    reason = f"sections {first.failed or second.failed} were not written" if first.failed or second.failed else None
    identity = {"model": llm.model_id, "samples": samples, "temperature": temperature, "window": window,
                "surveys_sha256": {s.system: hashlib.sha256(s.body.encode()).hexdigest() for s in (first, second)}}
    saved = json.loads(path.read_text()) if path.exists() else {}
    judgements: list = []
    if reason is None and saved.get("identity") == identity and saved["judgements"]:  # judged already, alike
        judgements = [read_judgement(j) for j in saved["judgements"]]
    elif reason is None:
        try:
            judgements = await judge_pair(llm, first.topic, {first.system: first.body, second.system: second.body},
                                          samples, temperature, window)
        except PromptTooLong as exc:
            reason = str(exc)
    summary = summarize(judgements) if reason is None else {
        s: {"mean score": None, "win rate": None, "skipped": reason} for s in systems}
    _write_json(path, {"identity": identity, "summary": summary, "judgements": [asdict(j) for j in judgements]})
    return summary

