"""The two agent profiles of paper §4.1 (seeking, with optional rating, and reasoning) and the parsers
that turn their free text into messages, scores and answers. A failed call becomes a CallRecord with
`error` set and a None value; the method decides what that means for the question."""

from __future__ import annotations

import re

from .llm import Completion, LLMClient, LLMError
from .prompts import PromptSet, ordinal
from .retrieval import CJK as _CJK
from .retrieval import terms
from .trace import CallRecord

# "Answer: X" at the start of a line or after a sentence ("... of Rutland. Answer: Rutland"): small models
# often put it on the same line as their reasoning.
_ANSWER_LINE = re.compile(r"(?:^|(?<=[\s>*#`.。]))(?:final\s+)?answer\s*\**\s*[:：]\s*(.*)$",
                          re.IGNORECASE | re.MULTILINE)
_SCORE = re.compile(r"score\s*\**\s*[:：=]?\s*\(?\s*(\d+(?:\.\d+)?)", re.IGNORECASE)
_RANGE = re.compile(r"\(?\s*0\s*[-–~到]\s*100\s*\)?")
_NUMBER = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)")
_NO_INFO = re.compile(r"^(?:no (?:new )?information\b|none$)|^(?:无相关信息|没有相关信息|没有新信息)", re.IGNORECASE)
_STOP = set("""the and was were for that this with which from who whom whose his her its their has have had are
been not none also there they she him them then than but into onto upon about after before over under
text states stated says said mentions mentioned according fact facts found information readers other""".split())


def is_no_information(message: str) -> bool:
    """Chunk exclusion signal: the agent found nothing (a short reply that starts with the marker)."""
    text = message.strip().strip("\"'`*.[]").strip()
    return not text or (len(text) < 80 and bool(_NO_INFO.match(text)))


def content_words(text: str) -> set[str]:
    """The retrieval terms (lower-cased words, single CJK characters) minus short and function words."""
    return {t for t in terms(text) if _CJK.match(t) or (len(t) >= 3 and t not in _STOP)}


def grounding(words: set[str], chunk: str) -> float:
    """Share of a message's words (beyond those its agent was shown) that occur in the agent's own chunk.
    A small model asked about a person its chunk never mentions tends to invent a fact ("X was born in
    London"); such a message has words its chunk lacks, while an extracted fact is made of the chunk's own
    words and of the messages the agent was given."""
    return len(words & content_words(chunk)) / len(words) if words else 1.0


def parse_score(text: str) -> float | None:
    """`Score: 85` and the usual variants -> 85.0, clamped to [0, 100]; None when there is no number. The
    paper's prompt shows the range as "(0-100)", which models echo; that is not the score."""
    text = _RANGE.sub(" ", text)
    match = _SCORE.search(text) or _NUMBER.search(text)
    return min(100.0, max(0.0, float(match.group(1)))) if match else None


PLACEHOLDER = "short phrase"  # what every answer-line prompt shows in angle brackets


def parse_answer(text: str, answer_line: bool = False) -> str | None:
    """The answer, or None for NO ANSWER. With `answer_line` (prompts that ask for a last `Answer:` line),
    a reply without one is a reasoning that did not conclude: no answer; otherwise the first line is."""
    lines = _ANSWER_LINE.findall(text)
    if lines:
        answer = lines[-1]
    elif answer_line or "NO ANSWER" in text.upper():
        return None
    else:
        answer = next((line for line in text.splitlines() if line.strip()), "")
    answer = answer.strip().strip("`*\"'<>[] ").strip().rstrip("。.").strip()
    if not answer or answer.upper().replace("_", " ").startswith("NO ANSWER"):
        return None
    if answer.lower() == PLACEHOLDER:  # the prompts' `Answer: <short phrase>` copied by a small model
        return None
    return answer


def labeled_line(text: str, label: str) -> str | None:
    """The rest of the first line that starts with `label:` (e.g. a lead's `Query: ...`), or None."""
    for line in text.splitlines():
        head, sep, rest = line.partition(":")
        if sep and head.strip().strip("*`").lower() == label and rest.strip():
            return rest.strip()
    return None


def format_messages(messages: list[str]) -> str:
    return "\n".join(f"- {m.strip()}" for m in messages) if messages else "(none yet)"


def _record(role: str, round_: int, chunk: int | None, step: int | None, done: Completion) -> CallRecord:
    return CallRecord(role=role, round=round_, chunk=chunk, step=step, prompt_tokens=done.prompt_tokens,
                      completion_tokens=done.completion_tokens, cached_tokens=done.cached_tokens,
                      start=done.start, end=done.end, output=done.text, cache_hit=done.cache_hit,
                      attempts=done.attempts)


def _failed(role: str, round_: int, chunk: int | None, step: int | None, exc: LLMError, start: float,
            end: float) -> CallRecord:
    return CallRecord(role=role, round=round_, chunk=chunk, step=step, prompt_tokens=0, completion_tokens=0,
                      cached_tokens=0, start=start, end=end, output="", error=str(exc))


async def call(llm: LLMClient, prompt: str | list[dict], max_tokens: int, role: str, round_: int,
               chunk: int | None = None, step: int | None = None,
               stop: list[str] | None = None) -> tuple[str | None, CallRecord]:
    """One agent call as (text, trace record); a failed call is (None, a record with its error)."""
    import time

    start = time.time()
    try:
        done = await llm.complete(prompt, max_tokens=max_tokens, stop=stop)
    except LLMError as exc:
        return None, _failed(role, round_, chunk, step, exc, start, time.time())
    return done.text, _record(role, round_, chunk, step, done)


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
    text, record = await call(llm, prompts.rate.format(message=message, question=question), 16, "rate",
                               round_, index, None)
    score = parse_score(text) if text is not None else None
    record.score = score
    return score, record


def reason_prompt(prompts: PromptSet, question: str, messages: list[str], must_answer: bool) -> str:
    template = prompts.reason_final if must_answer else prompts.reason
    return template.format(messages=format_messages(messages), question=question)


def answer_is_stated(answer: str, messages: list[str]) -> bool:
    """Whether the answer's words occur in the messages (yes/no answers always pass). A small model whose
    messages hold only the first hop of a question tends to invent the second; its answer then names
    something no message mentions."""
    words = content_words(answer)
    if not words or answer.strip().lower().rstrip(".") in ("yes", "no"):
        return True
    return len(words & content_words(" ".join(messages))) >= len(words) / 2


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
    if answer is not None and stated_only and not must_answer and not answer_is_stated(answer, messages):
        record.dropped = "answer not stated by the messages"
        return None, record
    return answer, record
