"""The paper's supplementary LLM-judged score (HELMET's long-QA judge, `eval_gpt4_longqa.py`): the judge
rates fluency 0/1 and correctness 0-3 against the gold answers; a row scores fluency x correctness (0-3).

The prompt is HELMET's verbatim; as there, the last {...} in the judge's reply is parsed. Unlike HELMET, a
reply without a score is not silently left out: it is counted as `unparsed` and scores 0 in `mean_all`.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from typing import Any

from .llm import LLMClient, LLMError

JUDGE_PROMPT = """Please act as an impartial judge and evaluate the quality of the provided answer which attempts to answer the provided question based on a provided context.
Although you are not given the context, you will be given a set of correct answers that achieves full scores on all metrics, and you need to assess the provided answers using the correct answers.

Below is your grading rubric:

Fluency:
- Score 0 (incoherent, repetitive, or incomplete): Incoherent sentences, repetitive sentences (even if not by exact words), incomplete answers, or gibberish. Note that even if the answer is coherent, if it is repetitive or incomplete, it should be given a score of 0.
- Score 1 (coherent, non-repetitive answer): Coherent, non-repetitive, fluent, grammatically correct answers.

Correctness:
- Score 0 (Incorrect): The answer does not agree with the provided correct answers at all.
- Score 1 (partly correct): Partly agree with one of the provided correct answers (for example, the question asks for a date and a person; the answer gets the date right but the person wrong).
- Score 2 (correct but not fully relevant): Fully agrees with one of the provided correct answers but mentions other completely irrelevant information. Note that extra details provided in the answer, even if not mentioned in the correct answers, should NOT be seen as irrelevant as long as they are relevant to the question to a reasonable extend.
- Score 3 (correct and relevant): Fully agrees with one of the provided correct answers and only provides information relevant to the question. Note that if the answer is longer than the correct answer, as long as everything in the answer is relevant to the question, it should still be given score 3. For example, if the correct answer is "the North Pole" and the answer is "They are headed for the North Pole", it should still be given a score of 3.

Now, read the following question, answer, and correct answers. First think step-by-step and provide your reasoning and assessment on the answer. Then output your score in the following json format: {{"fluency": 0, "correctness": 1}}.

Question: {question}
Correct answers: {correct_answers}
Answer: {parsed_output}
"""  # noqa: E501  (verbatim)


def parse_judgement(text: str) -> dict[str, int] | None:
    """HELMET's rule: the last {...} block as JSON, with both keys; None when there is none."""
    matches = re.findall(r"\{.*?\}", text, re.DOTALL)
    if not matches:
        return None
    try:
        scores = json.loads(matches[-1])
    except json.JSONDecodeError:
        return None
    if not isinstance(scores, dict) or not {"fluency", "correctness"} <= scores.keys():
        return None
    try:
        fluency, correctness = int(scores["fluency"]), int(scores["correctness"])
    except (TypeError, ValueError):
        return None
    if fluency not in (0, 1) or correctness not in (0, 1, 2, 3):
        return None
    return {"fluency": fluency, "correctness": correctness, "score": fluency * correctness}


async def judge(llm: LLMClient, question: str, answer: str, golds: list[str], max_tokens: int = 512) -> dict:
    # HELMET fills the gold list's Python repr and puts the answer on one line
    prompt = JUDGE_PROMPT.format(question=question, correct_answers=golds, parsed_output=" ".join(answer.split()))
    try:
        reply = await llm.complete(prompt, max_tokens=max_tokens)
    except LLMError as exc:
        return {"score": None, "error": str(exc)}
    parsed = parse_judgement(reply.text)
    return {**(parsed or {"score": None}), "reply": reply.text}


def judge_rows(llm: LLMClient, questions: Mapping[str, str], predictions: Mapping[str, str | None],
               golds: Mapping[str, list[str]]) -> dict[str, Any]:
    """Judge every gold row by id; a missing prediction scores 0 without a call and is counted as missing."""
    from .methods.base import run_sync

    async def all_rows() -> list[dict]:
        async def one(task_id: str) -> dict:
            answer = predictions.get(task_id)
            if answer is None:
                return {"score": 0, "missing": True}
            return await judge(llm, questions[task_id], answer, golds[task_id])
        return await asyncio.gather(*(one(t) for t in golds))

    rows = dict(zip(golds, run_sync(all_rows())))
    scored = [r["score"] for r in rows.values() if r["score"] is not None]
    n = len(rows)
    return {"n": n, "missing": sum(bool(r.get("missing")) for r in rows.values()),
            "unparsed": sum(r["score"] is None for r in rows.values()),
            "mean_all": sum(scored) / n if n else 0.0, "rows": rows}
