"""The two agent profiles of paper §4.1: seeking agents (with optional rating) and the reasoning agent."""

from __future__ import annotations

from collections.abc import Callable

from .calls import call
from .llm import LLMClient
from .parsing import answer_in_prose, parse_answer, parse_score, verdict
from .prompts import PromptSet, ordinal
from .trace import CallRecord


def format_messages(messages: list[str]) -> str:
    return "\n".join(f"- {m.strip()}" for m in messages) if messages else "(none yet)"


def seek_prompt(prompts: PromptSet, question: str, chunk: str, shared: list[str], round_: int) -> str:
    """Eq. 7: m_{i,t} = a_{i,t}(q, d_i, Top_k(M_{t-1})); round 1 has no messages yet."""
    if round_ == 1:
        return prompts.seek_first.format(chunk=chunk, question=question)
    return prompts.seek_next.format(chunk=chunk, question=question, messages=format_messages(shared),
                                    round=ordinal(round_), round_number=round_)


async def seek(llm: LLMClient, prompts: PromptSet, question: str, chunk: str, index: int, shared: list[str],
               round_: int, max_tokens: int) -> tuple[str | None, CallRecord]:
    return await call(llm, seek_prompt(prompts, question, chunk, shared, round_), max_tokens, "seek", round_,
                      index, None)


async def rate(llm: LLMClient, prompts: PromptSet, question: str, message: str, index: int,
               round_: int) -> tuple[float | None, CallRecord]:
    """h_{i,t}: the message's usefulness for the question, 0-100 (None when the reply has no number)."""
    text, record = await call(llm, prompts.rate.format(message=message, question=question), 16, "rate",
                              round_, index, None)
    score = parse_score(text) if text is not None else None
    record.score = score
    return score, record


def reason_prompt(prompts: PromptSet, question: str, messages: list[str], must_answer: bool) -> str:
    template = prompts.reason_final if must_answer else prompts.reason
    return template.format(messages=format_messages(messages), question=question)


def any_answer(answer: str, messages: list[str], question: str) -> bool:
    """The paper's acceptance: every answer the agent gives is taken."""
    return True


async def reason(llm: LLMClient, prompts: PromptSet, question: str, messages: list[str], must_answer: bool,
                 round_: int, max_tokens: int,
                 accept: Callable[[str, list[str], str], bool] = any_answer) -> tuple[str | None, CallRecord]:
    """Eq. 5 with the answerability check of §4.3: None when the agent says NO ANSWER, or when `accept` (a guard,
    extlib.guards) does not take its answer. A forced answer without an `Answer:` line falls back to the reply's
    last line (the conclusion of its reasoning)."""
    template = prompts.reason_final if must_answer else prompts.reason
    text, record = await call(llm, reason_prompt(prompts, question, messages, must_answer), max_tokens,
                              "reason", round_, None, len(messages))
    if text is None:
        return None, record
    asks_for_line = "Answer:" in template
    answer = parse_answer(text, answer_line=asks_for_line and not must_answer)
    if answer is None and asks_for_line:  # no answer line: an answer stated in prose, or a yes/no verdict
        answer = answer_in_prose(text) or (verdict(text) if "NO ANSWER" not in text.upper() else None)
    if answer is None and must_answer and asks_for_line:
        answer = parse_answer(next((ln for ln in reversed(text.splitlines()) if ln.strip()), ""))
    if answer is not None:
        answer = verdict(answer) or answer  # "Answer: Yes, both are American": "yes"
    if answer is not None and not must_answer and not accept(answer, messages, question):
        record.dropped = "answer not stated by the messages"
        return None, record
    return answer, record
