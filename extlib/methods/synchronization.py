"""Global knowledge synchronization (paper §4.2, eq. 6-7), the loop that ExtAgents and its survey writer share: in
round t every active seeking agent reads its chunk again with the top-k messages of all agents from round t-1 (as
many as its prompt's room holds), and a reply joins its agent's message when the caller's admission takes it
(m_{i,t} = m_{i,t-1} + the reply). Each round is handed to the caller, which rates, reasons or stops.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..fan_out import fan_out
from ..trace import CallRecord

Reply = tuple[str | None, CallRecord]


@dataclass
class Round:
    t: int
    broadcast: list[int]  # whose messages every agent was shown (GKS); [] in round 1 and without GKS
    replies: dict[int, Reply]  # every reply of the round, by agent
    changed: list[int]  # the agents whose message changed
    early: Any = None  # what a custom gathering did besides (the pipelined KAR's steps), else None


def shown(pad: Any, active: list[int], t: int, room: int, gks: bool = True,
          ranked: bool = True) -> dict[int, list[int]]:
    """Whose messages each agent is shown in round t: with GKS every agent has the same room, so the same top-k of
    all agents' messages is broadcast to all (eq. 6-7; `ranked`: best first, else in chunk order); without it an
    agent sees its own message only."""
    if t == 1:
        return {i: [] for i in active}
    if gks:
        broadcast = pad.top_k(pad.ranked(by_score=ranked), room)
        return {i: broadcast for i in active}
    return {i: pad.top_k([i] if i in pad.notes else [], room) for i in active}


async def rounds(pad: Any, active: list[int], count: int, room: int,
                 seek: Callable[[int, list[str], int], Awaitable[Reply]],
                 admission: Callable[[int, dict[int, list[str]]], Callable[[int, Reply], bool]],
                 gks: bool = True, ranked: bool = True, sequential: bool = False, progress: bool = False,
                 label: str = "", gather: Callable | None = None) -> AsyncIterator[Round]:
    """Up to `count` rounds over the agents of `active` (a list the admission may shorten: chunk exclusion).
    `seek(i, shown_texts, t)` is agent i's call; `admission(t, shown_texts_by_agent)` gives the round's
    `admit(i, reply) -> changed`, made once per round so every reply is judged against the scratchpad as the round
    found it. `gather(seeking, admit, t) -> (replies, changed, early)` replaces the plain fan-out (the pipelined
    KAR). The caller ends the loop by leaving it."""
    for t in range(1, count + 1):
        ids = shown(pad, active, t, room, gks, ranked)
        texts = {i: pad.texts(shown_ids) for i, shown_ids in ids.items()}
        seeking = {i: seek(i, texts[i], t) for i in active}
        admit = admission(t, texts)
        if gather is not None:
            replies, changed, early = await gather(seeking, admit, t)
        else:
            results = await fan_out(list(seeking.values()), f"{label}round {t}: seeking agents", sequential, progress)
            replies, early = dict(zip(seeking, results)), None
            changed = [i for i, reply in replies.items() if admit(i, reply)]
        yield Round(t, next(iter(ids.values()), []) if gks else [], replies, changed, early)
