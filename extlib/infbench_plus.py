"""∞Bench+ construction (paper §3.3): keep only samples no single segment answers.

For each sample the LLM reads every `segment_tokens` piece of the document with the question and the
reference answer and says whether that piece alone gives the answer; a sample any piece answers is
dropped. The paper used gpt-4o-mini and 8k-token segments; its prompt is not published, so this one is
ours. With `verify` (the default) a Yes counts only when the sentence it quotes is the segment's own text
and holds the answer: the bundled 1.5B model, shown the reference answer, says Yes to nearly every segment
(it "quoted" Shakespeare as the source of "1970s and 1980s"), which would drop every sample.

Per-sample verdicts are appended to a JSONL log as they finish, so an interrupted run resumes; a sample
whose calls failed is recorded as failed (neither kept nor dropped) and retried on the next run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .budget import CHAT_OVERHEAD_TOKENS, require_fit
from .calls import call
from .chunking import encode_long, fixed_chunks
from .errors import UserError
from .fan_out import fan_out, progress_bar
from .grounding import grounding
from .jsonl import append, open_for_append, read_jsonl
from .llm import LLMClient
from .metrics import normalize_answer
from .trace import Task
from .words import content_words

PROMPTS = {
    "en": ("Here is one segment of a long document.\n\n{segment}\n\nQuestion: {question}\nReference answer: "
           "{answer}\n\nCould a reader get the reference answer to the question from this segment alone, without "
           "the rest of the document? Reply Yes or No on the first line. If Yes, quote the sentence that gives "
           "it on the second line."),
    "zh": ("以下是一部长文档中的一个片段。\n\n{segment}\n\n问题：{question}\n参考答案：{answer}\n\n"
           "仅凭这个片段（不看文档其余部分），读者能否得出参考答案？第一行只回答“是”或“否”。如果是，第二行引用给出答案的句子。"),
}
VERDICT_TOKENS = 96


def says_yes(reply: str) -> bool:
    first = reply.strip().splitlines()[0].strip().lower() if reply.strip() else ""
    return first.startswith(("yes", "是", "能", "可以"))


def quote_supports(reply: str, segment: str, answers: list[str], min_grounding: float = 0.8) -> bool:
    """The quote (the reply after its Yes line) is the segment's own text (most of its words occur there)
    and contains all words of a gold answer; a yes/no answer needs only the grounded quote."""
    quote = " ".join(reply.strip().splitlines()[1:])
    spans = [a or b for a, b in re.findall(r'"([^"]{20,})"|“([^”]{20,})”', quote)]
    if spans:  # 'The answer is given in the sentence: "..."': only the quoted sentence is evidence
        quote = max(spans, key=len)
    words = content_words(quote)
    if not words or grounding(words, segment) < min_grounding:
        return False
    for answer in answers:
        if normalize_answer(answer) in ("yes", "no"):
            return True
        needed = content_words(answer) or set(normalize_answer(answer).split())
        if needed and needed <= words:
            return True
    return False


async def judge_sample(task: Task, llm: LLMClient, segment_tokens: int, context_window: int,
                       verify: bool = True) -> dict[str, Any]:
    template = PROMPTS[task.lang]
    fixed = llm.count_tokens(template.format(segment="", question=task.question, answer=" / ".join(task.answers)))
    require_fit(fixed + segment_tokens + VERDICT_TOKENS + CHAT_OVERHEAD_TOKENS, context_window,
                f"a {segment_tokens}-token segment, the prompt ({fixed} tokens) and the verdict",
                fix="use smaller segments or a larger window")
    segments = fixed_chunks(llm.tokenizer, encode_long(llm.tokenizer, task.knowledge), segment_tokens)
    prompts = [template.format(segment=s, question=task.question, answer=" / ".join(task.answers))
               for s in segments]
    replies = await fan_out([call(llm, p, VERDICT_TOKENS, "judge", 1, i) for i, p in enumerate(prompts)],
                            f"{task.id}: segments")
    failed = [f"segment {i}: {record.error}" for i, (text, record) in enumerate(replies) if text is None]
    yes = [{"segment": i, "reply": text.strip(),
            "verified": quote_supports(text, segments[i], task.answers) if verify else None}
           for i, (text, _) in enumerate(replies) if text is not None and says_yes(text)]
    answering = [y for y in yes if y["verified"] is not False]
    verdict = "dropped" if answering else "failed" if failed else "kept"
    return {"id": task.id, "verdict": verdict, "segments": len(segments), "answering_segments": answering,
            "unverified_yes": [y for y in yes if y["verified"] is False], "errors": failed}


def build(tasks: list[Task], llm: LLMClient, out: str | Path, segment_tokens: int = 8192,
          context_window: int = 131_072, verify: bool = True, progress: bool = True) -> dict[str, Any]:
    """Run the filter over `tasks`, resuming from `out`'s log; write and return the kept ids with evidence."""
    from .methods.base import run_sync

    out = Path(out)
    if segment_tokens <= 0:
        raise UserError(f"segment_tokens must be positive, got {segment_tokens}")
    log = out.with_suffix(".log.jsonl")
    settings = {"segment_tokens": segment_tokens, "model": llm.model, "verify": verify}
    done = {record["id"]: record for record in read_jsonl(log)  # verdicts made with other settings do not count
            if record["verdict"] != "failed" and record.get("settings") == settings}
    todo = [t for t in tasks if t.id not in done]
    with open_for_append(log) as sink:
        for task in progress_bar(progress, iterable=todo, desc="∞Bench+ filter", unit="sample"):
            record = {**run_sync(judge_sample(task, llm, segment_tokens, context_window, verify)),
                      "settings": settings}
            append(sink, record)
            if record["verdict"] != "failed":
                done[task.id] = record
    records = [done.get(t.id) or {"id": t.id, "verdict": "failed"} for t in tasks]
    result = {"kept": [r["id"] for r in records if r["verdict"] == "kept"],
              "dropped": [{"id": r["id"], "evidence": r["answering_segments"]} for r in records
                          if r["verdict"] == "dropped"],
              "failed": [r["id"] for r in records if r["verdict"] == "failed"],
              "settings": {**settings, "samples": len(tasks)}}
    out.write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    return result
