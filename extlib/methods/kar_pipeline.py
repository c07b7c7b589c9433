"""Knowledge-accumulating reasoning interleaved with seeking (paper §4.3's pipeline): with the order rating a
message's rank is its agent's place, so the top 2^(s-1) messages are known once every agent ahead of them has
replied. KAR step s reads them then, while the agents behind are still reading, and its answer ends the round (the
unfinished calls are cancelled). The steps are the ones the round would take after all replies, asked in the same
order with the same messages: only the time they start changes (a step asked without the round's last word is never
the forced one; ExtAgents asks that after the round).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from .. import agents
from ..agents import Refusal
from ..fan_out import progress_bar
from ..llm import LLMClient
from ..prompts import PromptSet
from ..trace import CallRecord
from .synchronization import Reply


@dataclass
class EarlyReasoning:
    """KAR steps the pipeline ran while the round's agents were still reading."""

    records: list[CallRecord] = field(default_factory=list)
    asked: set[int] = field(default_factory=set)  # steps (message counts) that said NO ANSWER
    answer: str | None = None  # the answer that ended the round early
    error: str | None = None
    cancelled: list[int] = field(default_factory=list)  # agents whose calls the answer cancelled


@dataclass
class Pipeline:
    """What a pipelined round needs besides its agents' calls: the reasoning agent and its prompts, the scratchpad,
    the reasoning prompt's room, the number of rounds (a round before the last is sure to go on when something
    changed), and the reasoning settings."""

    reasoner: LLMClient
    prompts: PromptSet
    question: str
    pad: object  # extlib.methods.extagents.Scratchpad
    room: int
    rounds: int
    reason_max_tokens: int
    refuse: Refusal
    label: str = ""
    progress: bool = False

    async def gather(self, seeking: dict[int, Awaitable[Reply]], admit: Callable[[int, Reply], bool],
                     t: int) -> tuple[dict[int, Reply], list[int], EarlyReasoning]:
        """Round t's replies, the agents whose message changed, and the KAR steps that ran while they read."""
        pad = self.pad
        tasks = {i: asyncio.ensure_future(job) for i, job in seeking.items()}
        kar_llm = self.reasoner.with_concurrency(1)  # a slot of its own: never queued behind the seeking calls
        replies: dict[int, Reply] = {}
        changed: list[int] = []
        early, step, step_messages = EarlyReasoning(), None, []
        size = 1  # KAR's next step reads the top `size` messages
        with progress_bar(self.progress, total=len(tasks), unit="call", leave=False,
                          desc=f"{self.label}round {t}: seeking agents (KAR pipelined)") as bar:
            try:
                while len(replies) < len(tasks) or step is not None:
                    waiting = {f for i, f in tasks.items() if i not in replies} | ({step} if step else set())
                    done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                    for i, future in tasks.items():
                        if future in done:
                            replies[i] = future.result()
                            changed += [i] if admit(i, replies[i]) else []
                            bar.update(1)
                    if step in done:
                        answer, record = step.result()
                        early.records.append(record)
                        if record.error:
                            early.error = f"reasoning failed: {record.error}"
                        if record.error or answer is not None:
                            early.answer = answer
                            break
                        early.asked.add(size)
                        pad.read_without_answer(step_messages)
                        size, step = size * 2, None
                    ready = settled(pad, tasks, replies, self.room)
                    while step is None and len(ready) >= size and pad.read_before(pad.texts(ready[:size])):
                        early.asked.add(size)  # an earlier round's step read these messages without an answer
                        size *= 2
                    # A step over every usable message is the round's last, forced if the round is final; it may
                    # start early only when it cannot be that: more messages are settled, or this round is sure
                    # to go on (something changed and rounds are left).
                    unforced = len(ready) > size or (changed and t < self.rounds)
                    if step is None and len(replies) < len(tasks) and len(ready) >= size and unforced:
                        step_messages = pad.texts(ready[:size])
                        step = asyncio.ensure_future(agents.reason(
                            kar_llm, self.prompts, self.question, step_messages, False, t, self.reason_max_tokens,
                            self.refuse))
            finally:
                for future in [*tasks.values(), *([step] if step else [])]:
                    future.cancel()
        early.cancelled = sorted(set(tasks) - set(replies))
        return dict(sorted(replies.items())), sorted(changed), early


def settled(pad, tasks: dict[int, asyncio.Future], replies: dict, room: int) -> list[int]:
    """The leading messages of the round's final ranking (order rating: agent order, greedy within `room`) that no
    unfinished agent can still change or precede."""
    ids = []
    for i in sorted(set(pad.notes) | set(tasks)):
        if i in tasks and i not in replies:
            break
        if i in pad.notes:
            ids.append(i)
    return pad.top_k(ids, room)
