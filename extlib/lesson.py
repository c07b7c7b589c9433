"""How the lesson (notebooks/00_lesson) names what happened to each call of a traced question. A trace read into
pandas turns a missing reason (None) into NaN, which is true in an `if`: these read a reason only when it is text."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _text(value: Any) -> str:
    """`value` when it is non-empty text, else "" (None, NaN and other non-text mean no value)."""
    return value if isinstance(value, str) else ""


def seek_outcome(call: Mapping[str, Any]) -> str:
    """A seeking call's fate: failed, NO INFORMATION, kept, or dropped as adds nothing / echo / ungrounded."""
    if _text(call.get("error")):
        return "failed"
    why = _text(call.get("dropped"))
    if why:
        return "adds nothing" if why.startswith("adds") else "echo" if why.startswith(("echoes", "unrelated")) \
            else "ungrounded"
    output = _text(call.get("output")).strip().upper()
    return "NO INFORMATION" if output.startswith(("NO INFORMATION", "NONE")) else "kept"


def reasoning_verdict(call: Mapping[str, Any]) -> str:
    """A reasoning step's verdict: its answer was accepted, it said NO ANSWER, or its answer was dropped because
    no message states it (the step then counts as no answer)."""
    if _text(call.get("error")):
        return "failed"
    if _text(call.get("dropped")):
        return "not stated by the messages: no answer"
    return "NO ANSWER" if "NO ANSWER" in _text(call.get("output")).upper() else "answer"
