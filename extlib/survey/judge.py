"""Pairwise LLM-as-a-judge of two surveys on one topic (paper §5.2: DeepSeek-GRM's template, eight pairwise scores
aggregated, temperature 1). Each sample scores both surveys 1-10; the order of the two is swapped every other
sample, so a judge that favours the first (or second) place favours both systems equally. Reported: each system's
mean score (the paper's "LLM-as-a-Judge (1 ~ 10)") and its wins, ties and losses over the samples."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..budget import CHAT_OVERHEAD_TOKENS, require_fit
from ..calls import call
from ..errors import UserError
from ..llm import LLMClient
from ..trace import CallRecord
from .prompts import JUDGE

_BOXED = re.compile(r"\\?boxed\s*\{\s*(\d+(?:\.\d+)?)\s*,\s*(\d+(?:\.\d+)?)\s*\}")
_PER_SURVEY = re.compile(r"survey\s*([12])\b[^\n]*?\\?boxed\s*\{([\d.,\s]+)\}", re.IGNORECASE)
_SCORES_LINE = re.compile(r"scores?\s*[:：]\s*\**\s*(\d+(?:\.\d+)?)\s*(?:,|and)\s*(\d+(?:\.\d+)?)", re.IGNORECASE)
_OUT_OF_TEN = re.compile(r"\s*/\s*10\b")
_SCORES_HEADING = re.compile(r"\bscores\b", re.IGNORECASE)
_SURVEY_NUMBER = re.compile(r"survey\s*([12])\s*\**\s*(?:[:：=]|is)\s*\**\s*(\d+(?:\.\d+)?)\b", re.IGNORECASE)


def parse_scores(text: str) -> tuple[float, float] | None:
    """The two surveys' scores, both within 1-10, from the last \\boxed{x, y}; else from a box per survey ("Survey 1:
    \\boxed{7}", a box of several criteria scores counting as their mean); else from a last 'Scores: x, y' ("7/10"
    reads as 7); else from 'Survey 1: x' and 'Survey 2: y' (or '= x', 'is x') after the reply's last 'Scores' (only
    there: criteria lines before it read the same). None when there are none."""
    text = _OUT_OF_TEN.sub("", text)
    boxes = {label: [float(x) for x in re.findall(r"\d+(?:\.\d+)?", box)] for label, box in _PER_SURVEY.findall(text)}
    if len(boxes) == 2 and all(boxes.values()):
        scores = tuple(sum(v) / len(v) for v in (boxes["1"], boxes["2"]))
    elif found := _BOXED.findall(text) or _SCORES_LINE.findall(text):
        scores = tuple(float(x) for x in found[-1])
    elif (heading := list(_SCORES_HEADING.finditer(text))) and len(
            numbers := dict(_SURVEY_NUMBER.findall(text[heading[-1].end():]))) == 2:
        scores = (float(numbers["1"]), float(numbers["2"]))
    else:
        return None
    return scores if all(1 <= x <= 10 for x in scores) else None


@dataclass
class Judgement:
    first: str  # the system shown as survey 1
    second: str
    scores: dict[str, float] | None  # system -> score; None when the reply had no readable scores
    call: CallRecord


async def judge_pair(llm: LLMClient, topic: str, surveys: dict[str, str], samples: int = 8,
                     temperature: float = 1.0, window: int = 8192, max_tokens: int = 512) -> list[Judgement]:
    """`samples` judgements of the two surveys ({system: survey text}), the order swapped every other one; each
    sample has its own seed, so sampled replies differ and a rerun repeats them (and the response cache keeps them)."""
    if len(surveys) != 2:
        raise UserError(f"the judge compares two surveys, got {len(surveys)}: {', '.join(surveys) or 'none'}")
    if samples < 2 or samples % 2:
        raise UserError(f"judge samples must be a positive even number, so that each survey is shown first equally "
                        f"often; got {samples!r}")
    names = list(surveys)
    longest = max(llm.count_tokens(JUDGE.format(topic=topic, first=surveys[a], second=surveys[b])) for a, b in
                  (names, names[::-1]))
    require_fit(CHAT_OVERHEAD_TOKENS + longest + max_tokens, window, "the judge's prompt with both surveys",
                "raise --judge-window (the judge model's context) or write shorter surveys")
    out = []
    for j in range(samples):
        first, second = names if j % 2 == 0 else names[::-1]
        prompt = JUDGE.format(topic=topic, first=surveys[first], second=surveys[second])
        _, record = await call(llm, prompt, max_tokens, "judge", j + 1, temperature=temperature, seed=j)
        out.append(judgement(first, second, record))
    return out


def judgement(first: str, second: str, record: CallRecord) -> Judgement:
    """The judgement of a judge call that showed `first` as survey 1, its scores read from the call's reply."""
    parsed = parse_scores(record.output) if record.output is not None else None
    return Judgement(first, second, dict(zip((first, second), parsed)) if parsed else None, record)


def read_judgement(saved: dict) -> Judgement:
    """A judgement as `judge_surveys` saved it (dataclasses.asdict), its scores read again from the saved reply, so a
    saved judgement is read as a new one would be."""
    return judgement(saved["first"], saved["second"], CallRecord(**saved["call"]))


def summarize(judgements: list[Judgement]) -> dict[str, dict]:
    """Per system: mean score over the readable samples, wins / ties / losses, the win rate (ties count half) and
    the unreadable samples."""
    names = list(dict.fromkeys(n for j in judgements for n in (j.first, j.second)))
    read = [j.scores for j in judgements if j.scores]
    out = {}
    for name in names:
        other = next(n for n in names if n != name)
        wins = sum(s[name] > s[other] for s in read)
        ties = sum(s[name] == s[other] for s in read)
        out[name] = {"mean score": round(sum(s[name] for s in read) / len(read), 2) if read else None,
                     "wins": wins, "ties": ties, "losses": len(read) - wins - ties,
                     "win rate": round((wins + ties / 2) / len(read), 3) if read else None,
                     "unreadable": len(judgements) - len(read)}
    return out
