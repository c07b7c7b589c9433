"""The two agent profiles of paper §4.1: seeking agents (with optional rating) and the reasoning agent."""

from __future__ import annotations

from collections.abc import Callable

from .calls import call
from .grounding import new_names
from .llm import LLMClient
from .parsing import answer_in_prose, parse_answer, parse_score, verdict
from .prompts import PromptSet, ordinal
from .trace import CallRecord

LEADS_TOKENS = 24  # a later round asks about the first names the shown messages add that fit in this many tokens
# (about four names); eq. 6's budget reserves the room they take beyond `no_leads` (ExtAgents._rooms)


def lead_names(shared: list[str], question: str, count_tokens: Callable[[str], int]) -> str:
    """What a later round's prompt asks the agent about ({leads}): the names the shown messages add to the question,
    as many as fit in LEADS_TOKENS; "" when they add none."""
    names = new_names(shared, question)
    while names and count_tokens(", ".join(names)) > LEADS_TOKENS:
        names.pop()
    return ", ".join(names)


def format_messages(messages: list[str]) -> str:
    return "\n".join(f"- {m.strip()}" for m in messages) if messages else "(none yet)"


def seek_prompt(prompts: PromptSet, question: str, chunk: str, shared: list[str], round_: int, leads: str = "") -> str:
    """Eq. 7: m_{i,t} = a_{i,t}(q, d_i, Top_k(M_{t-1})); round 1 has no messages yet. `leads` (lead_names): the
    names a later round asks about, `prompts.no_leads` when empty."""
    if round_ == 1:
        return prompts.seek_first.format(chunk=chunk, question=question)
    return prompts.seek_next.format(chunk=chunk, question=question, messages=format_messages(shared),
                                    round=ordinal(round_), round_number=round_, leads=leads or prompts.no_leads)


async def seek(llm: LLMClient, prompts: PromptSet, question: str, chunk: str, index: int, shared: list[str],
               round_: int, max_tokens: int) -> tuple[str | None, CallRecord]:
    leads = lead_names(shared, question, llm.count_tokens) if round_ > 1 else ""
    return await call(llm, seek_prompt(prompts, question, chunk, shared, round_, leads), max_tokens, "seek", round_,
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


Refusal = Callable[[str, list[str], str, bool], str | None]  # (answer, messages, question, forced) -> why it is not
# taken, or None; `forced`: the last step's answer, after which no step or round can follow


def no_refusal(answer: str, messages: list[str], question: str, forced: bool = False) -> str | None:
    """The paper's acceptance: every answer the agent gives is taken."""
    return None


async def reason(llm: LLMClient, prompts: PromptSet, question: str, messages: list[str], must_answer: bool,
                 round_: int, max_tokens: int,
                 refuse: Refusal = no_refusal) -> tuple[str | None, CallRecord]:
    """Eq. 5 with the answerability check of §4.3: None when the agent says NO ANSWER, or when `refuse` (a guard,
    extlib.guards) gives a reason not to take its answer (kept in the record); a forced answer it refuses is "", no
    answer. A reply without its `Answer:` line is read for an answer stated in prose or a yes/no verdict; failing
    those, the prompt set's `answer_line` asks for the line in a second turn of the same conversation (its tokens are
    added to the step's record); a forced answer without any falls back to the reply's last line (the conclusion of
    its reasoning)."""
    template = prompts.reason_final if must_answer else prompts.reason
    prompt = reason_prompt(prompts, question, messages, must_answer)
    text, record = await call(llm, prompt, max_tokens, "reason", round_, None, len(messages))
    if text is None:
        return None, record
    asks_for_line = "Answer:" in template
    answer = parse_answer(text, answer_line=asks_for_line)
    says_none = "NO ANSWER" in text.upper()
    if answer is None and asks_for_line and not says_none:  # no answer line: in prose, a yes/no verdict, or asked
        answer = answer_in_prose(text) or verdict(text) or await _asked_answer_line(llm, prompts, prompt, text,
                                                                                    record, must_answer)
    if answer is None and must_answer and asks_for_line:
        answer = parse_answer(next((ln for ln in reversed(text.splitlines()) if ln.strip()), ""))
    if answer is not None:
        answer = verdict(answer) or answer  # "Answer: Yes, both are American": "yes"
    refusal = refuse(answer, messages, question, must_answer) if answer is not None else None
    if refusal:
        record.dropped = refusal
        return ("" if must_answer else None), record
    return answer, record


async def _asked_answer_line(llm: LLMClient, prompts: PromptSet, prompt: str, reply: str, record: CallRecord,
                             must_answer: bool) -> str | None:
    """The answer of a second turn that asks for the `Answer:` line the reply left out (None: the prompt set asks
    none, the call failed or it says NO ANSWER). The 1.5B model often concludes in prose, "Based on the facts
    provided, Tobias Ashdown was born in Norland.", and without the line the whole sentence was the answer."""
    ask = prompts.answer_line_final if must_answer else prompts.answer_line
    if not ask:
        return None
    conversation = [{"role": "user", "content": prompt}, {"role": "assistant", "content": reply},
                    {"role": "user", "content": ask}]
    text, follow_up = await call(llm, conversation, 32, "reason", record.round, None, record.step)
    record.absorb(follow_up)
    record.output = f"{record.output}\n[{ask}] {text if text is not None else follow_up.error}"
    return parse_answer(text) if text is not None else None
