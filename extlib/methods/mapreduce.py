"""LLM×MapReduce (Zhou et al., 2024): map every chunk to a structured record (extracted information,
rationale, answer, confidence), drop chunks with no information, collapse groups of records until they fit
one window, and reduce them to an answer, settling conflicts by confidence.

Deviations: the paper's prompts use in-context examples to calibrate confidence; here the 0-5 scale is
described in words. The final answer is asked for on a last `Answer:` line (the small bundled models answer
the question's bridge entity otherwise, see extlib.prompts). When the reducing call abstains although
records carry answers (the bundled 1.5B does so on records that agree), or ends without its `Answer:` line,
the answer is the confidence-weighted vote of the records' answers, and `answer_by_vote` says so.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from ..budget import CHAT_OVERHEAD_TOKENS, consecutive_groups, greedy_within, require_fit
from ..calls import call
from ..chunking import chunk_text
from ..fan_out import fan_out
from ..llm import LLMClient
from ..metrics import normalize_answer
from ..parsing import parse_answer
from ..trace import CallRecord, Prediction, Task
from .base import ChunkedConfig, Method, knob

PROTOCOL = """Reply in exactly this format:
Extracted Information: <the facts in the text that bear on the question, or [NO INFORMATION]>
Rationale: <how these facts answer the question>
Answer: <the answer they support, or [NO INFORMATION]>
Confidence Score: <0 to 5; 5 = the text states the answer outright, 0 = it says nothing about it>"""
MAP = "Read this part of a long document.\n\n{chunk}\n\nQuestion: {question}\n\n" + PROTOCOL
COLLAPSE = ("Below are records extracted from consecutive parts of a long document for one question.\n\n"
            "{records}\n\nQuestion: {question}\n\nMerge them into one record. Keep every fact that bears on the "
            "question; where records conflict, prefer the one with the higher confidence score.\n\n" + PROTOCOL)
REDUCE = ("Below are records extracted from all parts of a long document for one question.\n\n{records}\n\n"
          "Question: {question}\n\nCombine the records to answer the question. Where they conflict, trust "
          "the records with higher confidence scores. Reason in one or two sentences, then write a last line "
          "`Answer: <short phrase>` (or `Answer: NO ANSWER` if the records do not give it).")
# The prompts are English; without this the 1.5B model answered Chinese questions in English ("Jiangsu"), which
# the Chinese metric scores 0.
ANSWER_LANGUAGE = {"zh": "（请用中文回答。）"}
_FIELD = re.compile(r"^(Extracted Information|Rationale|Answer|Confidence Score)\s*[:：]\s*(.*)$",
                    re.IGNORECASE | re.MULTILINE)


def parse_record(text: str) -> dict[str, str]:
    """The protocol's fields (lower-case keys); a field the model left out is empty."""
    found = {key.lower(): value.strip() for key, value in _FIELD.findall(text)}
    return {k: found.get(k, "") for k in ("extracted information", "rationale", "answer", "confidence score")}


def has_information(record: dict[str, str]) -> bool:
    info = record["extracted information"]
    return bool(info) and "NO INFORMATION" not in info.upper()


def confidence(record: dict[str, str]) -> float:
    match = re.search(r"\d+(?:\.\d+)?", record["confidence score"])
    return min(5.0, float(match.group())) if match else 0.0


def format_record(record: dict[str, str]) -> str:
    return (f"Extracted Information: {record['extracted information']}\nRationale: {record['rationale']}\n"
            f"Answer: {record['answer']}\nConfidence Score: {record['confidence score'] or '0'}")


@dataclass
class MapReduceConfig(ChunkedConfig):
    map_max_tokens: int = knob(256, "tokens of each mapped (or collapsed) record")
    reduce_max_tokens: int = knob(128, "tokens of the reducing answer")
    max_collapse_levels: int = knob(4, "collapse rounds before the most confident records that fit are kept")


class LLMxMapReduce(Method):
    name = "mapreduce"
    version = 2  # 2: answers a Chinese question in Chinese (version 1 often answered in English, scoring 0)

    config_class = MapReduceConfig

    async def arun(self, task: Task, llm: LLMClient, reasoning_llm: LLMClient | None = None) -> Prediction:
        cfg = self.config
        question = task.question + ANSWER_LANGUAGE.get(task.lang, "")
        chunks = chunk_text(task.knowledge, llm.tokenizer, cfg.chunk_tokens, cfg.input_tokens, cfg.truncate,
                            cfg.paragraphs)
        overhead = CHAT_OVERHEAD_TOKENS + llm.count_tokens(MAP.format(chunk="", question=question))
        require_fit(overhead + cfg.chunk_tokens + cfg.map_max_tokens, cfg.context_window,
                    f"a {cfg.chunk_tokens}-token chunk, the question, the map prompt and its record")
        calls: list[CallRecord] = []
        results = await fan_out([call(llm, MAP.format(chunk=c, question=question), cfg.map_max_tokens, "map",
                                      1, i) for i, c in enumerate(chunks)], f"{task.id}: map", progress=self.progress)
        calls += [record for _, record in results]
        if all(text is None for text, _ in results):
            return Prediction(task.id, "", 1, calls, error=f"all {len(results)} map calls failed")
        parsed = [(parse_record(text), trace) for text, trace in results if text is not None]
        for record, trace in parsed:
            trace.score = confidence(record)
        records = [record for record, _ in parsed if has_information(record)]  # drop [NO INFORMATION]
        room = cfg.context_window - CHAT_OVERHEAD_TOKENS - cfg.reduce_max_tokens - llm.count_tokens(
            REDUCE.format(records="", question=question))
        level = 1
        while True:
            sizes = [llm.count_tokens(format_record(r)) + 2 for r in records]
            if sum(sizes) <= room:
                break
            if level > cfg.max_collapse_levels:  # keep the most confident records that fit
                best_first = sorted(range(len(records)), key=lambda i: confidence(records[i]), reverse=True)
                records = [records[i] for i in greedy_within(best_first, sizes.__getitem__, room)]
                break
            level += 1
            groups = [[records[i] for i in group] for group in
                      consecutive_groups(list(range(len(records))), sizes.__getitem__, room - cfg.map_max_tokens)]
            collapsed = await fan_out([call(
                llm, COLLAPSE.format(records="\n\n".join(map(format_record, g)), question=question),
                cfg.map_max_tokens, "collapse", level, gi) for gi, g in enumerate(groups)],
                f"{task.id}: collapse level {level}", progress=self.progress)
            calls += [record for _, record in collapsed]
            records = [parse_record(text) if text is not None else max(g, key=confidence)
                       for (text, _), g in zip(collapsed, groups)]
            records = [r for r in records if has_information(r)]
        text, record = await call(reasoning_llm or llm, REDUCE.format(
            records="\n\n".join(map(format_record, records)) or "(no part of the document had information)",
            question=question), cfg.reduce_max_tokens, "reduce", level + 1)
        calls.append(record)
        if text is None:
            return Prediction(task.id, "", level + 1, calls, error=f"reduce failed: {record.error}")
        answer = parse_answer(text, answer_line=True)
        voted = answer is None and (answer := confidence_vote(records)) is not None  # abstained, or no answer line
        return Prediction(task.id, answer or "", level + 1, calls,
                          extra={"map_records_kept": len(records), "collapse_levels": level - 1,
                                 "answer_by_vote": int(voted)})


def confidence_vote(records: list[dict[str, str]]) -> str | None:
    """The records' answer with the largest summed confidence (the paper's conflict rule without the LLM):
    the most confident wording of it, or None when no record answers."""
    totals: dict[str, float] = defaultdict(float)
    best: dict[str, tuple[float, str]] = {}
    for record in records:
        answer = record["answer"].strip()
        if not answer or "NO INFORMATION" in answer.upper():
            continue
        key = normalize_answer(answer)
        totals[key] += confidence(record)
        best[key] = max(best.get(key, (-1.0, answer)), (confidence(record), answer))
    return best[max(totals, key=totals.get)][1] if totals else None
