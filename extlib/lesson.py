"""How the lesson (notebooks/00_lesson) names what happened to each call of a traced question. A trace read into
pandas turns a missing reason (None) into NaN, which is true in an `if`: these read a reason only when it is text."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .grounding import ECHO, UNRELATED
from .guards import ADDS_NOTHING, CLAIMS_NOTHING, NO_CHAIN, NOT_SEEN

SEEK_OUTCOMES = ("NO INFORMATION", "adds nothing", "echo", "not in its chunk", "no chain yet", "kept", "failed")


def _text(value: Any) -> str:
    """`value` when it is non-empty text, else "" (None, NaN and other non-text mean no value)."""
    return value if isinstance(value, str) else ""


def seek_outcome(call: Mapping[str, Any]) -> str:
    """A seeking call's fate (one of SEEK_OUTCOMES): failed; NO INFORMATION; kept (something reached the scratchpad:
    the reply, or with the evidence guards its chunk's sentences, possibly ones held from an earlier round); or kept
    off as adds nothing, echo (claims nothing beyond the question and what it was shown), not in its chunk (the
    evidence guards find no sentence of its chunk that holds its claims; the small-model set's "ungrounded"), or no
    chain yet (its chunk's sentences name nothing the question or the messages shown name; they are held)."""
    if _text(call.get("error")):
        return "failed"
    if _text(call.get("posted")):
        return "kept"
    why = _text(call.get("dropped"))
    if why.startswith(ADDS_NOTHING):
        return "adds nothing"
    if why.startswith((ECHO, UNRELATED, CLAIMS_NOTHING)):
        return "echo"
    if why.startswith(NO_CHAIN):
        return "no chain yet"
    if why:
        return "not in its chunk"
    output = _text(call.get("output")).strip().upper()
    return "NO INFORMATION" if output.startswith(("NO INFORMATION", "NONE")) or not output else "kept"


def reasoning_verdict(call: Mapping[str, Any]) -> str:
    """A reasoning step's verdict: its answer was accepted, it said NO ANSWER, or its answer was not taken: no
    message (on a chain from the question) states it, or an agent whose chunk names it has not been shown it yet, so
    the text may go on from it (the next round's GKS shows it)."""
    if _text(call.get("error")):
        return "failed"
    why = _text(call.get("dropped"))
    if waiting := re.match(rf"chunk (\d+)'s agent {NOT_SEEN}", why):
        return f"waits: agent {waiting.group(1)} has not been shown it (its chunk names it)"
    if why:
        return "not stated by the messages: no answer"
    return "NO ANSWER" if "NO ANSWER" in _text(call.get("output")).upper() else "answer"
