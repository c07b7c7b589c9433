"""The two agent profiles of paper §4.1: seeking agents (with optional rating) and the reasoning agent."""

from __future__ import annotations

from .calls import call
from .grounding import answer_is_stated
from .llm import LLMClient
from .parsing import parse_answer, parse_score
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


async def reason(llm: LLMClient, prompts: PromptSet, question: str, messages: list[str], must_answer: bool,
                 round_: int, max_tokens: int, stated_only: bool = False) -> tuple[str | None, CallRecord]:
    """Eq. 5 with the answerability check of §4.3: None when the agent says NO ANSWER, or (`stated_only`)
    when its answer is not stated by the messages. A forced answer without an `Answer:` line falls back to
    the reply's last line (the conclusion of its reasoning)."""
    template = prompts.reason_final if must_answer else prompts.reason
    text, record = await call(llm, reason_prompt(prompts, question, messages, must_answer), max_tokens,
                              "reason", round_, None, len(messages))
    if text is None:
        return None, record
    asks_for_line = "Answer:" in template
    answer = parse_answer(text, answer_line=asks_for_line and not must_answer)
    if answer is None and must_answer and asks_for_line:
        answer = parse_answer(next((ln for ln in reversed(text.splitlines()) if ln.strip()), ""))
    if answer is not None and stated_only and not must_answer and not answer_is_stated(answer, messages, question):
        record.dropped = "answer not stated by the messages"
        return None, record
    return answer, record
