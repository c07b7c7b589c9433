"""Turning agents' free text into what the methods use: answers, scores, labelled lines, NO INFORMATION."""

from __future__ import annotations

import re

# "Answer: X" at the start of a line or after a sentence ("... of Rutland. Answer: Rutland"): small models
# often put it on the same line as their reasoning; in Chinese they write "因此，答案是：江西省" instead.
_ANSWER_LINE = re.compile(r"(?:(?:^|(?<=[\s>*#`.。]))(?:final\s+)?answer\s*\**|答案\s*[是为]?)\s*[:：]\s*(.*)$",
                          re.IGNORECASE | re.MULTILINE)
_SCORE = re.compile(r"score\s*\**\s*[:：=]?\s*\(?\s*(\d+(?:\.\d+)?)", re.IGNORECASE)
_RANGE = re.compile(r"\(?\s*0\s*[-–~到]\s*100\s*\)?")
_NUMBER = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)")
_NO_INFO = re.compile(r"^(?:no (?:new )?information\b|none$)"
                      r"|^(?:无相关信息|没有相关信息|没有新信息|(?:文本中)?没有新内容)", re.IGNORECASE)
PLACEHOLDERS = ("short phrase", "简短答案")  # what the answer-line prompts show in angle brackets


def is_no_information(message: str) -> bool:
    """Chunk exclusion signal: the agent found nothing (a short reply that starts with the marker)."""
    text = message.strip().strip("\"'`*.[]").strip()
    return not text or (len(text) < 80 and bool(_NO_INFO.match(text)))


def parse_score(text: str) -> float | None:
    """`Score: 85` and the usual variants -> 85.0, clamped to [0, 100]; None when there is no number. The
    paper's prompt shows the range as "(0-100)", which models echo; that is not the score."""
    text = _RANGE.sub(" ", text)
    match = _SCORE.search(text) or _NUMBER.search(text)
    return min(100.0, max(0.0, float(match.group(1)))) if match else None


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
    if answer.lower() in PLACEHOLDERS:  # the prompts' `Answer: <short phrase>` copied by a small model
        return None
    return answer


_VERDICT = re.compile(r"\s*\**\s*(yes|no)\b\**(?![\s\-_]*(?:answer|information|info|new)\b)\s*(?:[,.;:!]|$)",
                      re.IGNORECASE)


def verdict(text: str) -> str | None:
    """"yes" or "no" when a reply or an answer opens with that verdict ("Yes, both are American.", "No."), else
    None: the reasoning agent often answers a yes/no question that way, with or without an `Answer:` line, and
    HotpotQA scores such an answer only when it is the bare word."""
    match = _VERDICT.match(text)
    return match.group(1).lower() if match else None


_ANSWER_IS = re.compile(r"\banswer\s+is\s*[:：]?\s*(.+?)\s*$|答案(?:应该)?是\s*[:：]?\s*(.+?)\s*$",
                        re.IGNORECASE | re.MULTILINE)


def answer_in_prose(text: str) -> str | None:
    """The answer a reasoning reply states in prose ("Therefore, the answer is Rutland."), when it wrote no `Answer:`
    line; None when it states none or says NO ANSWER."""
    found = _ANSWER_IS.findall(text)
    if not found or "NO ANSWER" in text.upper():
        return None
    answer = (found[-1][0] or found[-1][1]).strip().strip("`*\"'<>[] ").rstrip("。.").strip("`*\"'<>[] ")
    return answer or None


def labeled_line(text: str, label: str) -> str | None:
    """The rest of the first line that starts with `label:` (e.g. a lead's `Query: ...`), or None."""
    for line in text.splitlines():
        head, sep, rest = line.partition(":")
        if sep and head.strip().strip("*`").lower() == label and rest.strip():
            return rest.strip()
    return None
