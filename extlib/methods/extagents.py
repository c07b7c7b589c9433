"""ExtAgents (paper §4): seeking agents with global knowledge synchronization (GKS, eq. 6-7) and a
reasoning agent with knowledge-accumulating reasoning (KAR, eq. 8).

Choices the paper leaves open, made explicit here:
- An agent's message accumulates over rounds (m_{i,t} = m_{i,t-1} + what it newly found), since the
  round-t prompt says "do not repeat the previously extracted information"; otherwise facts found in
  round 1 would vanish from {m_{i,T}}.
- "NO INFORMATION" replies carry nothing to share, so they are neither rated nor broadcast; with
  `exclusion` on, such a chunk also stops being read in later rounds (the paper's chunk exclusion).
  A reply that adds no term beyond the scratchpad is dropped the same way. With the small-model prompts
  (by default) the grounding check of extlib.grounding also keeps off echoes of the question or of the shown
  messages and replies whose names or words are not in the agent's own chunk: a 1.5B model asked about a person
  its chunk never mentions states the question's relation about them anyway (on 237 labeled replies of the
  bundled model the check keeps 50 of 53 extracted facts and drops 166 of 184 invented or echoed ones, where
  version 1's kept 98 of them; benchmarks/grounding.py). The trace keeps every dropped reply with the reason.
  With the same setting, a reasoning answer that states nothing the messages hold beyond the question's words
  counts as NO ANSWER until the last step must answer (a small model that knows only the first hop invents the
  second).
- Ranking (the small-model default `links`): a message follows the better-rated message it shares a name with,
  beyond the question's. A rating that judges each message alone scores a bridge fact ("Marrowby lies in
  Westmarch") low because it does not name the question's entity; without this it ranks last.
- A round that adds nothing to the scratchpad ends synchronization early: the reasoning agent must
  answer then, since further rounds would see the same messages.
- Without GKS an agent sees only its own previous message (a neighbourhood of itself).
- With the small prompts, KAR in a later round skips a step over the very messages an earlier round's step read
  without an answer (same prompt, same greedy reply); the paper's prompts ask every step.
- KAR runs after every synchronization round, as §4.3 describes; Appendix E.1 and the official code
  accumulate only in round 1 and then read everything, which `mode="reference-code"` reproduces, along
  with broadcasting every message (cut to fit) and making one call at a time: PROTOCOLS below holds
  everything the mode changes.
- `layout="chunk-first"` puts an agent's chunk first in every round's prompt, so a server with a prefix cache
  (vLLM's, or the bundled server's prompt-state cache) computes only the shared messages and the instruction in
  rounds >= 2; the small prompts' default puts the facts found so far before the chunk (see extlib.prompts).
- `pipeline` (rating=order, links off) runs KAR's steps while the round's later agents are still reading, the
  interleaved pipeline of §4.3: same steps, same messages, earlier; the first answer cancels the rest.
- With `rating="llm"` each new or updated message is rated in a call of its own (the paper appends the
  rating prompt to the seeking agent); this costs one short call per changed message and round.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from tqdm import tqdm

from .. import agents
from ..budget import CHAT_OVERHEAD_TOKENS, greedy_within, require_fit
from ..chunking import chunk_text
from ..errors import UserError
from ..fan_out import fan_out
from ..grounding import admission, grounding_terms, names
from ..llm import LLMClient
from ..parsing import is_no_information
from ..prompts import LAYOUTS, PromptSet, get_prompts
from ..retrieval import bm25_scores
from ..trace import CallRecord, Prediction, Task
from .base import ChunkedConfig, Method, knob

RATINGS = ("llm", "bm25", "order")
MODES = ("paper", "reference-code")
CHUNK_DRIFT_TOKENS = 8  # a decoded chunk may re-tokenize to a few more tokens than its span
MESSAGE_SEPARATOR_TOKENS = 2  # "- " and the line break around each listed message
MIN_GROUNDING = 0.6  # chosen on labeled replies (benchmarks/grounding.py) and the seek-prompt benchmark


@dataclass
class ExtAgentsConfig(ChunkedConfig):
    overlap: int = knob(0, "tokens shared by consecutive fixed-size chunks", low=0)
    rounds: int = knob(5, "T, synchronization rounds")
    gks: bool = knob(True, "global knowledge synchronization (§4.2); off: an agent sees only its own message")
    kar: bool = knob(True, "knowledge-accumulating reasoning (§4.3); off: one reasoning call over all messages "
                     "that fit")
    rating: str = knob("llm", "message usefulness h: llm (a 0-100 prompt), bm25 (a tool score), order (the given "
                       "order, e.g. retrieval rank)", choices=RATINGS)
    exclusion: bool = knob(False, "a chunk that replies NO INFORMATION is not read again")
    mode: str = knob("paper", "paper: the method as published; reference-code: the official release's behaviour",
                     choices=MODES)
    prompt_set: str = knob("small", "small (tuned for small models) or paper (Appendix E.3)")
    variant: str | None = knob(None, "prompt variant en, zh or hotpotqa (None: the task's language)")
    layout: str = knob("facts-first", "small prompts, rounds >= 2: facts-first (the facts found so far, then the "
                       "chunk) or chunk-first (the chunk leads every round's prompt, so a server's prefix cache "
                       "computes only what changed)", choices=LAYOUTS)
    seek_max_tokens: int = knob(256, "tokens of each seeking agent's reply")
    reason_max_tokens: int = knob(128, "tokens of each reasoning step")
    grounding: float | None = knob(None, "the grounding check (extlib.grounding.admission) with this least share of "
                                   "a reply's new words found in its own chunk (small models invent facts); None: "
                                   "0.6 with the small prompt set, 0 (off) with the paper's", low=0.0, high=1.0)
    links: bool | None = knob(None, "rank each message right after the better-rated one it shares a name with, beyond "
                              "the question's (a bridge fact after the fact it continues); None: on with the small "
                              "prompt set, off with the paper's")

    pipeline: bool = knob(False, "KAR interleaved with seeking (§4.3): the reasoning step over the top 2^(s-1) "
                          "messages runs while later agents still read, and the round ends when it answers "
                          "(rating=order, links off: a ranking fixed before the messages arrive)")

    @property
    def ranks_by_links(self) -> bool:
        """`links` as set, or its default: on with the small prompt set."""
        return self.links if self.links is not None else self.prompt_set == "small"

    def check(self) -> None:
        super().check()
        get_prompts(self.prompt_set, self.variant or "en", self.layout)
        if self.pipeline and (self.rating != "order" or self.ranks_by_links or not self.kar or self.mode != "paper"):
            raise UserError("pipeline needs a ranking known before the messages arrive and KAR in every round: set "
                             "rating=order, links=false, kar=true, mode=paper (bm25 and LLM ratings rank a message "
                             "only against all the round's others, and links moves a message up when a later one "
                             "names what it names)")


@dataclass(frozen=True)
class Protocol:
    """Everything `mode` changes, in one place."""

    rank_broadcast: bool  # eq. 6: broadcast the best-rated messages; release: all, in chunk order, cut to fit
    parallel: bool  # §4.2: the agents of a round work at once; release: one call after another
    kar_every_round: bool  # §4.3: accumulate after every round; release: in round 1, then read everything


PROTOCOLS = {"paper": Protocol(True, True, True), "reference-code": Protocol(False, False, False)}


@dataclass
class EarlyReasoning:
    """KAR steps the pipeline ran while the round's agents were still reading."""

    records: list[CallRecord] = field(default_factory=list)
    asked: set[int] = field(default_factory=set)  # steps (message counts) that said NO ANSWER
    answer: str | None = None  # the answer that ended the round early
    error: str | None = None
    cancelled: list[int] = field(default_factory=list)  # agents whose calls the answer cancelled


def kar_schedule(n: int) -> list[int]:
    """Eq. 8: the reasoning agent reads the top 1, 2, 4, ... messages, then all n."""
    sizes, k = [], 1
    while k < n:
        sizes.append(k)
        k *= 2
    return sizes + [n]


def follow_links(order: list[int], notes: dict[int, str], question: str) -> list[int]:
    """`order` with each message followed at once by the messages that name something it names beyond the
    question (best-rated first). A rating that judges each message alone scores a bridge fact low ("Marrowby lies
    in Westmarch" does not name the question's keeper); without this the second hop ranks last, and KAR's first
    steps and the broadcast never hold both hops together."""
    asked = names(question)
    keys = {i: names(notes[i]) - asked for i in order}
    out: list[int] = []
    for start in order:
        stack = [start]
        while stack:
            i = stack.pop()
            if i in out:
                continue
            out.append(i)
            stack.extend(reversed([j for j in order if j not in out and keys[i] & keys[j]]))
    return out


class Scratchpad:
    """The shared messages: agent i's message m_{i,t} and its usefulness h_{i,t}. Token counts of texts are
    kept, so a message is counted once, not once per agent that is shown it."""

    def __init__(self, llm: LLMClient, question: str = "", links: bool = False, skip_repeats: bool = False) -> None:
        self.notes: dict[int, str] = {}
        self.scores: dict[int, float] = {}
        self._llm, self._counts = llm, {}
        self.question, self.links = question, links
        # KAR steps of earlier rounds that read these messages and found no answer. With `skip_repeats` (the small
        # prompts) a later round does not ask over the same messages again: the prompt is the same, so a greedy
        # model answers the same, unless a prompt cache computes its state in another order; on the two-hop demo
        # that turned round 1's rejected guess into the village the first hop states, which was accepted, and KAR
        # stopped before it read the second hop (docs/results/prefix_reuse, chunk-first arm).
        self.skip_repeats, self._unanswered = skip_repeats, set()

    def read_before(self, messages: list[str]) -> bool:
        return self.skip_repeats and tuple(messages) in self._unanswered

    def read_without_answer(self, messages: list[str]) -> None:
        self._unanswered.add(tuple(messages))

    def tokens(self, text: str) -> int:
        if text not in self._counts:
            self._counts[text] = self._llm.count_tokens(text)
        return self._counts[text]

    def ranked(self, by_score: bool = True) -> list[int]:
        """Agent ids, best-rated first (ties by chunk order; with `links`, bridge facts follow the fact they
        continue), or in chunk order."""
        if not by_score:
            return sorted(self.notes)
        order = sorted(self.notes, key=lambda i: (-self.scores.get(i, 0.0), i))
        return follow_links(order, self.notes, self.question) if self.links else order

    def top_k(self, ids: list[int], room: int) -> list[int]:
        """Eq. 6-7: the agents of `ids`, best first, whose messages `room` tokens hold."""
        return greedy_within(ids, lambda i: self.tokens(self.notes[i]) + MESSAGE_SEPARATOR_TOKENS, room)

    def texts(self, ids: list[int]) -> list[str]:
        return [self.notes[i] for i in ids]


class ExtAgents(Method):
    name = "extagents"
    version = 5  # 2, 3: issue 13's checks; 4: list numbers are no numbers; 5: no KAR step over messages read before

    config_class = ExtAgentsConfig

    async def arun(self, task: Task, llm: LLMClient, reasoning_llm: LLMClient | None = None) -> Prediction:
        cfg, protocol = self.config, PROTOCOLS[self.config.mode]
        prompts = get_prompts(cfg.prompt_set, cfg.variant or task.lang, cfg.layout)
        chunks = chunk_text(task.knowledge, llm.tokenizer, cfg.chunk_tokens, cfg.input_tokens, cfg.truncate,
                            cfg.paragraphs, cfg.overlap)
        pad = Scratchpad(llm, task.question, cfg.ranks_by_links, skip_repeats=self.small_model_checks)
        seek_room, reason_room = self._rooms(prompts, task.question, pad)
        calls: list[CallRecord] = []
        active = list(range(len(chunks)))  # agents still reading (chunk exclusion removes some)
        trail: dict[str, list[list[int]]] = {"broadcast": [], "ranking": []}  # whose messages GKS / KAR used
        for t in range(1, cfg.rounds + 1):
            shown = self._shared(pad, active, t, seek_room, protocol)  # Top_k(M_{t-1}) for each agent
            shared = {i: pad.texts(ids) for i, ids in shown.items()}
            trail["broadcast"].append(next(iter(shown.values()), []) if cfg.gks else [])
            seeking = {i: agents.seek(llm, prompts, task.question, chunks[i], i, shared[i], t, cfg.seek_max_tokens)
                       for i in active}
            admit = self._admission(pad, active, shared, chunks, prompts, task.question, t)
            replies, changed, early = await self._seek(seeking, admit, reasoning_llm or llm, prompts, task, pad,
                                                       reason_room, t, protocol)
            calls += [record for _, record in replies.values()] + early.records
            all_failed = all(message is None for message, _ in replies.values())
            if all_failed and not pad.notes:
                return Prediction(task.id, "", t, calls, error=f"all {len(replies)} seeking calls failed in "
                                  f"round {t}; first error: {next(iter(replies.values()))[1].error}")
            calls += await self._rate(llm, prompts, task.question, pad, changed, t, protocol)
            trail["ranking"].append(pad.ranked())
            if early.cancelled:
                trail.setdefault("cancelled", []).append(early.cancelled)
            if early.answer is not None or early.error:  # KAR answered (or failed) while agents were reading
                return Prediction(task.id, early.answer or "", t, calls, error=early.error, extra=trail)
            # Nothing new on the scratchpad: the next round would see the same messages, so answer now.
            # A round whose every call failed also ends synchronization, answering from what was found.
            final = t == cfg.rounds or not active or not changed or all_failed
            answer, reasoning_calls = await self._reason(reasoning_llm or llm, prompts, task.question, pad,
                                                         reason_room, t, final, protocol, early.asked)
            calls += reasoning_calls
            if reasoning_calls and reasoning_calls[-1].error:
                return Prediction(task.id, "", t, calls, error=f"reasoning failed: {reasoning_calls[-1].error}",
                                  extra=trail)
            if answer is not None or final:
                return Prediction(task.id, answer or "", t, calls, extra=trail)
        raise AssertionError("unreachable: the last round always answers")

    @property
    def small_model_checks(self) -> bool:
        """The defaults that guard a small model (grounding check, linked ranking) are on with the small prompts."""
        return self.config.prompt_set == "small"

    @property
    def min_grounding(self) -> float:
        cfg = self.config
        return cfg.grounding if cfg.grounding is not None else (MIN_GROUNDING if self.small_model_checks else 0.0)

    def _rooms(self, prompts: PromptSet, question: str, pad: Scratchpad) -> tuple[int, int]:
        """Tokens left for shared messages in a seeking prompt, L - |q| - |d_i| - template - generation
        (eq. 7), and in a reasoning prompt. Chunks are at most chunk_tokens by construction (plus a few where
        re-tokenizing a decoded span drifts), so one bound serves every agent without tokenizing every
        chunk again."""
        cfg = self.config
        fixed = CHAT_OVERHEAD_TOKENS + CHUNK_DRIFT_TOKENS + cfg.chunk_tokens + max(
            pad.tokens(agents.seek_prompt(prompts, question, "", [], t)) for t in (1, 2))
        require_fit(fixed + cfg.seek_max_tokens, cfg.context_window,
                    f"the question, a {cfg.chunk_tokens}-token chunk, the prompt template and the "
                    f"{cfg.seek_max_tokens} tokens to generate")
        reason_room = cfg.context_window - CHAT_OVERHEAD_TOKENS - cfg.reason_max_tokens - max(
            pad.tokens(agents.reason_prompt(prompts, question, [], must_answer=must)) for must in (False, True))
        return cfg.context_window - fixed - cfg.seek_max_tokens, reason_room

    def _shared(self, pad: Scratchpad, active: list[int], t: int, room: int,
                protocol: Protocol) -> dict[int, list[int]]:
        """Whose messages each agent is shown in round t. With GKS every agent has the same room, so the same
        top-k of all agents' messages is broadcast to all (eq. 6-7); without it an agent sees its own only."""
        if t == 1:
            return {i: [] for i in active}
        if self.config.gks:
            broadcast = pad.top_k(pad.ranked(by_score=protocol.rank_broadcast), room)
            return {i: broadcast for i in active}
        return {i: pad.top_k([i] if i in pad.notes else [], room) for i in active}

    def _admission(self, pad: Scratchpad, active: list[int], shared: dict[int, list[str]], chunks: list[str],
                   prompts: PromptSet, question: str, t: int) -> Callable[[int, tuple[str | None, CallRecord]], bool]:
        """`admit(i, reply)` puts agent i's reply on the scratchpad (m_{i,t} = m_{i,t-1} + the new reply) and says
        whether its message changed. Kept off, with the reason in the trace: failed calls, NO INFORMATION (with
        exclusion the chunk is not read again), replies that add no term beyond the scratchpad before this round
        and the template, and (with the grounding check) echoes of the question or the shown messages and
        replies whose claims are not in the agent's chunk (extlib.grounding.admission). Each reply is judged
        against the scratchpad as the round found it, so the order the replies arrive in does not matter."""
        template = frozenset(grounding_terms(agents.seek_prompt(prompts, "", "", [], t)))
        known = grounding_terms(" ".join(pad.notes.values())) | template

        def admit(i: int, reply: tuple[str | None, CallRecord]) -> bool:
            message, record = reply
            if message is None:
                return False  # failed call, already in the trace; the agent keeps its previous message
            if is_no_information(message):
                if self.config.exclusion:
                    active.remove(i)
                return False
            if not grounding_terms(message) - known:
                record.dropped = "adds nothing to the scratchpad"
                return False
            if self.min_grounding > 0:
                why = admission(message, chunks[i], shared[i], question, self.min_grounding, template)
                if why:
                    record.dropped = why
                    return False
            pad.notes[i] = f"{pad.notes[i]}\n{message.strip()}" if i in pad.notes else message.strip()
            return True
        return admit

    async def _seek(self, seeking: dict[int, Awaitable], admit: Callable, reasoner: LLMClient, prompts: PromptSet,
                    task: Task, pad: Scratchpad, room: int, t: int,
                    protocol: Protocol) -> tuple[dict[int, tuple[str | None, CallRecord]], list[int], EarlyReasoning]:
        """Round t's seeking agents: their replies, the agents whose message changed, and (with `pipeline`) the
        KAR steps that ran while they read."""
        if self.config.pipeline:
            return await self._seek_with_kar(seeking, admit, reasoner, prompts, task, pad, room, t)
        results = await fan_out(list(seeking.values()), f"{task.id} round {t}: seeking agents", not protocol.parallel,
                                self.progress)
        replies = dict(zip(seeking, results))
        return replies, [i for i, reply in replies.items() if admit(i, reply)], EarlyReasoning()

    async def _seek_with_kar(self, seeking: dict[int, Awaitable], admit: Callable, reasoner: LLMClient,
                             prompts: PromptSet, task: Task, pad: Scratchpad, room: int,
                             t: int) -> tuple[dict[int, tuple[str | None, CallRecord]], list[int], EarlyReasoning]:
        """§4.3's interleaved pipeline. With the order rating a message's rank is its agent's place, so the top
        2^(s-1) messages are known once every agent ahead of them has replied: KAR step s reads them then, while
        the agents behind are still reading, and its answer ends the round (the unfinished calls are
        cancelled). The steps are the ones the round would take after all replies, asked in the same order
        with the same messages: only the time they start changes (a step asked without the round's last word
        is never the forced one; `_reason` asks that after)."""
        tasks = {i: asyncio.ensure_future(job) for i, job in seeking.items()}
        kar_llm = reasoner.with_concurrency(1)  # a slot of its own: never queued behind the round's seeking calls
        replies: dict[int, tuple[str | None, CallRecord]] = {}
        changed: list[int] = []
        early, step, step_messages = EarlyReasoning(), None, []
        size = 1  # KAR's next step reads the top `size` messages
        with tqdm(total=len(tasks), desc=f"{task.id} round {t}: seeking agents (KAR pipelined)", unit="call",
                  leave=False, disable=not self.progress) as bar:
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
                    ready = self._settled(pad, tasks, replies, room)
                    while step is None and len(ready) >= size and pad.read_before(pad.texts(ready[:size])):
                        early.asked.add(size)  # an earlier round's step read these messages without an answer
                        size *= 2
                    # A step over every usable message is the round's last, forced if the round is final; it may
                    # start early only when it cannot be that: more messages are settled, or this round is sure
                    # to go on (something changed and rounds are left).
                    unforced = len(ready) > size or (changed and t < self.config.rounds)
                    if step is None and len(replies) < len(tasks) and len(ready) >= size and unforced:
                        step_messages = pad.texts(ready[:size])
                        step = asyncio.ensure_future(agents.reason(
                            kar_llm, prompts, task.question, step_messages, False, t,
                            self.config.reason_max_tokens, self.min_grounding > 0))
            finally:
                for future in [*tasks.values(), *([step] if step else [])]:
                    future.cancel()
        early.cancelled = sorted(set(tasks) - set(replies))
        return dict(sorted(replies.items())), sorted(changed), early

    def _settled(self, pad: Scratchpad, tasks: dict[int, asyncio.Future], replies: dict, room: int) -> list[int]:
        """The leading messages of the round's final ranking (order rating: agent order, greedy within `room`)
        that no unfinished agent can still change or precede."""
        ids = []
        for i in sorted(set(pad.notes) | set(tasks)):
            if i in tasks and i not in replies:
                break
            if i in pad.notes:
                ids.append(i)
        return pad.top_k(ids, room)

    async def _rate(self, llm: LLMClient, prompts: PromptSet, question: str, pad: Scratchpad, changed: list[int],
                    t: int, protocol: Protocol) -> list[CallRecord]:
        """h_{i,t} for the messages: by the given order, by a BM25 tool score, or by an LLM (changed ones only)."""
        if self.config.rating == "order":
            pad.scores.update({i: -float(i) for i in pad.notes})
            return []
        if self.config.rating == "bm25":
            ids = sorted(pad.notes)
            pad.scores.update(zip(ids, bm25_scores(question, [pad.notes[i] for i in ids])))
            return []
        results = await fan_out([agents.rate(llm, prompts, question, pad.notes[i], i, t) for i in changed],
                                f"round {t}: rating", not protocol.parallel, self.progress)
        for i, (score, _) in zip(changed, results):
            pad.scores[i] = score if score is not None else 0.0  # an unparsable or failed rating ranks last
        return [record for _, record in results]

    async def _reason(self, llm: LLMClient, prompts: PromptSet, question: str, pad: Scratchpad, room: int, t: int,
                      final: bool, protocol: Protocol, asked: set[int] = frozenset()) -> tuple[str | None,
                                                                                          list[CallRecord]]:
        """KAR (eq. 8): top-1, 2, 4, ... messages until the agent can answer; forced on the last step of
        the last round. `asked`: steps the pipeline already asked while the agents read (they said NO ANSWER).
        A step over messages that an earlier step read without an answer (`pad.read_before`) is skipped."""
        usable = pad.texts(pad.top_k(pad.ranked(), room))
        if not usable and not final:
            return None, []
        accumulate = self.config.kar and (protocol.kar_every_round or t == 1)
        sizes = kar_schedule(len(usable)) if accumulate else [len(usable)]
        records = []
        for step, size in enumerate(sizes):
            must = final and step == len(sizes) - 1
            if (size in asked or pad.read_before(usable[:size])) and not must:
                continue
            answer, record = await agents.reason(llm, prompts, question, usable[:size], must, t,
                                                 self.config.reason_max_tokens, self.min_grounding > 0)
            records.append(record)
            if record.error or answer is not None:
                return answer, records
            pad.read_without_answer(usable[:size])
        return None, records
