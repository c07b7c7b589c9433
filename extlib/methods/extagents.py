"""ExtAgents (paper §4): seeking agents with global knowledge synchronization (GKS, eq. 6-7) and a
reasoning agent with knowledge-accumulating reasoning (KAR, eq. 8).

Choices the paper leaves open, made explicit here:
- An agent's message accumulates over rounds (m_{i,t} = m_{i,t-1} + what it newly found), since the
  round-t prompt says "do not repeat the previously extracted information"; otherwise facts found in
  round 1 would vanish from {m_{i,T}}.
- "NO INFORMATION" replies carry nothing to share, so they are neither rated nor broadcast; with
  `exclusion` on, such a chunk also stops being read in later rounds (the paper's chunk exclusion).
  A reply that adds no term beyond the scratchpad is dropped the same way.
- What a small model needs beyond the paper's loop (a grounding check on what enters the scratchpad, linked
  ranking, answers only when the messages state them, no KAR step repeated over messages already read) is one
  `Guards` object (extlib.guards) chosen by the `guards` knob: the loop calls it and has no branch of its own.
  `guards="none"` with `prompt_set="paper"` is the paper's protocol. The trace keeps every dropped reply with the
  reason.
- A round that adds nothing to the scratchpad ends synchronization early: the reasoning agent must
  answer then, since further rounds would see the same messages.
- Without GKS an agent sees only its own previous message (a neighbourhood of itself).
- KAR runs after every synchronization round, as §4.3 describes; Appendix E.1 and the official code
  accumulate only in round 1 and then read everything, which `mode="reference-code"` reproduces, along
  with broadcasting every message (cut to fit) and making one call at a time: PROTOCOLS below holds
  everything the mode changes.
- `layout="chunk-first"` (the small English prompts' default from version 20) puts an agent's chunk first in every
  round's prompt, so a server with a prefix cache (vLLM's, or the bundled server's prompt-state cache) computes only
  the shared messages and the instruction in rounds >= 2; `layout="facts-first"` puts the facts found so far before
  the chunk (the Chinese prompts' default; see extlib.prompts and `ExtAgentsConfig.layout_for`).
- `pipeline` (rating=order, links off) runs KAR's steps while the round's later agents are still reading, the
  interleaved pipeline of §4.3 (extlib.methods.kar_pipeline): same steps, same messages, earlier; the first answer
  cancels the rest.
- With `rating="llm"` each new or updated message is rated in a call of its own (the paper appends the
  rating prompt to the seeking agent); this costs one short call per changed message and round.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .. import agents
from ..agents import Refusal
from ..budget import CHAT_OVERHEAD_TOKENS, greedy_within, require_fit
from ..chunking import chunk_text
from ..errors import UserError
from ..fan_out import fan_out
from ..grounding import grounding_terms
from ..guards import ADDS_NOTHING, GUARD_SETS, NO_GUARDS, Guards, make_guards
from ..llm import LLMClient
from ..parsing import is_no_information
from ..prompts import LAYOUTS, PromptSet, get_prompts
from ..retrieval import bm25_scores
from ..trace import CallRecord, Prediction, Task
from .base import ChunkedConfig, Method, knob
from .kar_pipeline import EarlyReasoning, Pipeline
from .synchronization import Reply, rounds

RATINGS = ("llm", "bm25", "order")
MODES = ("paper", "reference-code")
CHUNK_DRIFT_TOKENS = 8  # a decoded chunk may re-tokenize to a few more tokens than its span
MESSAGE_SEPARATOR_TOKENS = 2  # "- " and the line break around each listed message


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
    layout: str | None = knob(None, "small prompts, rounds >= 2: chunk-first (the chunk leads every round's prompt, "
                              "so a server's prefix cache computes only what changed) or facts-first (the facts "
                              "found so far, then the chunk); None: the small prompts' choice for the task's "
                              "language (chunk-first in English, facts-first in Chinese), the paper's prompts keep "
                              "their own", choices=LAYOUTS)
    seek_max_tokens: int = knob(256, "tokens of each seeking agent's reply")
    reason_max_tokens: int = knob(128, "tokens of each reasoning step")
    guards: str = knob("evidence", "what a small model needs beyond the paper's loop (extlib.guards): evidence (its "
                       "chunk's sentences, joined to the question by a chain of names, are posted, not the reply; "
                       "answers stated by such messages, once every agent whose chunk names them has seen them; a "
                       "forced answer no such message states is no answer), "
                       "small-model (the design before: grounding check on the reply, linked ranking) or none (the "
                       "paper's protocol, with prompt_set=paper)", choices=GUARD_SETS)
    grounding: float | None = knob(None, "the grounding check's least share of a reply's new words found in its own "
                                   "chunk; None: the guard set's (small-model 0.6, none 0: off)", low=0.0, high=1.0)
    links: bool | None = knob(None, "rank each message right after the better-rated one it shares a name with, beyond "
                              "the question's (a bridge fact after the fact it continues); None: the guard set's "
                              "(small-model on, none off)")

    pipeline: bool = knob(False, "KAR interleaved with seeking (§4.3): the reasoning step over the top 2^(s-1) "
                          "messages runs while later agents still read, and the round ends when it answers "
                          "(rating=order, links off: a ranking fixed before the messages arrive)")

    @property
    def chosen_guards(self) -> Guards:
        return make_guards(self.guards, self.grounding, self.links)

    def layout_for(self, variant: str) -> str:
        """The layout asked for, else the one chosen on the development split of each language's bridge book at 4x
        (30 questions each, with the server's prompt-state cache; benchmarks/design_screen.py): chunk-first for the
        small English prompts, which on en-bridge scores as facts-first (73.3 F1 both; paired 0.0, 95% interval
        -17 to +17) and computes 42% fewer prompt tokens (5,815 against 10,104 a question); facts-first for the
        Chinese ones, which on zh-bridge score 72.0 against chunk-first's 51.3 (paired -20.7, -36 to -6; 1 win, 9
        losses): shown the first hop after its chunk, the agent holding the second replies NONE (version 21)."""
        if self.layout:
            return self.layout
        return "chunk-first" if self.prompt_set == "small" and variant != "zh" else "facts-first"

    def check(self) -> None:
        super().check()
        get_prompts(self.prompt_set, self.variant or "en", self.layout_for(self.variant or "en"))
        if self.pipeline and (self.rating != "order" or self.chosen_guards.links or not self.kar
                              or self.mode != "paper"):
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
# The paper's Figure 4: ExtAgents without GKS and/or KAR, each variant by the knobs it sets
ABLATION_VARIANTS = {"full": {}, "no GKS": {"gks": False}, "no KAR": {"kar": False},
                     "neither": {"gks": False, "kar": False}}


def ablation_variant(knobs: dict) -> str:
    """The variant of `ABLATION_VARIANTS` a run's knobs make (run files record the knobs, not the figure's label)."""
    off = {name: False for name in ("gks", "kar") if knobs.get(name) is False}
    return next(variant for variant, turned_off in ABLATION_VARIANTS.items() if turned_off == off)


def kar_schedule(n: int) -> list[int]:
    """Eq. 8: the reasoning agent reads the top 1, 2, 4, ... messages, then all n."""
    sizes, k = [], 1
    while k < n:
        sizes.append(k)
        k *= 2
    return sizes + [n]


class Scratchpad:
    """The shared messages: agent i's message m_{i,t} and its usefulness h_{i,t}. Token counts of texts are
    kept, so a message is counted once, not once per agent that is shown it. `guards` ranks (extlib.guards) and
    says whether KAR skips a step over messages an earlier round's step read without an answer."""

    def __init__(self, llm: LLMClient, question: str = "", guards: Guards = NO_GUARDS) -> None:
        self.notes: dict[int, str] = {}
        self.scores: dict[int, float] = {}
        self.held: dict[int, list[str]] = {}  # per agent, its sentences the guards hold until a chain joins them
        self._llm, self._counts = llm, {}
        self.question, self.guards = question, guards
        # KAR steps of earlier rounds that read these messages and found no answer. With `skip_repeats` (the small
        # model's guards) a later round does not ask over the same messages again: the prompt is the same, so a
        # greedy model answers the same, unless a prompt cache computes its state in another order; on the two-hop
        # demo that turned round 1's rejected guess into the village the first hop states, which was accepted, and
        # KAR stopped before it read the second hop (docs/results/prefix_reuse, chunk-first arm).
        self._unanswered: set[tuple[str, ...]] = set()

    def read_before(self, messages: list[str]) -> bool:
        return self.guards.skip_repeats and tuple(messages) in self._unanswered

    def read_without_answer(self, messages: list[str]) -> None:
        self._unanswered.add(tuple(messages))

    def tokens(self, text: str) -> int:
        if text not in self._counts:
            self._counts[text] = self._llm.count_tokens(text)
        return self._counts[text]

    def ranked(self, by_score: bool = True) -> list[int]:
        """Agent ids, best-rated first (ties by chunk order; the guards may reorder), or in chunk order."""
        if not by_score:
            return sorted(self.notes)
        order = sorted(self.notes, key=lambda i: (-self.scores.get(i, 0.0), i))
        return self.guards.rank(order, self.notes, self.question)

    def top_k(self, ids: list[int], room: int) -> list[int]:
        """Eq. 6-7: the agents of `ids`, best first, whose messages `room` tokens hold."""
        return greedy_within(ids, lambda i: self.tokens(self.notes[i]) + MESSAGE_SEPARATOR_TOKENS, room)

    def texts(self, ids: list[int]) -> list[str]:
        return [self.notes[i] for i in ids]


class ExtAgents(Method):
    name = "extagents"
    # 2, 3: issue 13's checks; 4: list numbers are no numbers; 5: no KAR step over messages read before; 6: the
    # reasoning agent's answer is read when stated in prose or as a yes/no verdict without an "Answer:" line; 7: the
    # evidence guards post only sentences on a chain of names from the question, and what a chunk says of the subject;
    # 8: ... and of a shown message's name the reply takes up; Chinese sentences of 6-11 characters are sentences;
    # 9: the question's subject is one of its English entities named in full (a comparison names two); 10: a reasoning
    # reply without its Answer: line is asked for it; the evidence guards take an answer once every agent whose
    # chunk names it has seen it; 11: a forced answer without its line is asked for it without the NO ANSWER choice;
    # 12: the evidence guards are the default; 13: the small set's later rounds ask what the agent's text says of the
    # names the facts found so far add to the question; an answer waits for the agents whose chunks name what it takes
    # from the messages (not all it names: "<province><village>" joins an invented province to a found village);
    # 14: the evidence guards hold a reply's sentences that no chain joins yet, and post them once one does; 15: the
    # names a later round asks about are capped and eq. 6's budget reserves room for them (64 bytes; too much room
    # for a 512-token chunk); 16: capped at 24 tokens (agents.LEADS_TOKENS); 17: a round 1 that posts nothing is
    # followed by round 2, whose agents are asked about what the question asks (the small set's no_leads); 18: the
    # guards take a yes or no only for a question asked so (extlib.grounding.asks_yes_or_no); 19: the evidence guards
    # take a forced answer only when messages on a chain from the question state it (else no answer); 20: the small
    # prompts' later rounds put the chunk first (layout chunk-first), so a prefix cache reuses round 1's reading;
    # 21: the Chinese small prompts keep the facts first (ExtAgentsConfig.layout_for)
    version = 21

    config_class = ExtAgentsConfig

    async def arun(self, task: Task, llm: LLMClient, reasoning_llm: LLMClient | None = None) -> Prediction:
        cfg, protocol, guards = self.config, PROTOCOLS[self.config.mode], self.config.chosen_guards
        variant = cfg.variant or task.lang
        prompts = get_prompts(cfg.prompt_set, variant, cfg.layout_for(variant))
        chunks = chunk_text(task.knowledge, llm.tokenizer, cfg.chunk_tokens, cfg.input_tokens, cfg.truncate,
                            cfg.paragraphs, cfg.overlap)
        pad = Scratchpad(llm, task.question, guards)
        seek_room, reason_room = self._rooms(prompts, task.question, pad)
        reasoner = reasoning_llm or llm
        calls: list[CallRecord] = []
        active = list(range(len(chunks)))  # agents still reading (chunk exclusion removes some)
        trail: dict[str, list[list[int]]] = {"broadcast": [], "ranking": []}  # whose messages GKS / KAR used
        seen: dict[int, list[str]] = {}  # the messages each agent is shown in the current round
        refuse = guards.refusal(chunks, seen, pad.notes)  # which answers KAR does not take, and why
        pipeline = Pipeline(reasoner, prompts, task.question, pad, reason_room, cfg.rounds, cfg.reason_max_tokens,
                            refuse, f"{task.id} ", self.progress) if cfg.pipeline else None

        def seek(i: int, shown: list[str], t: int):  # eq. 7: m_{i,t} = a_{i,t}(q, d_i, Top_k(M_{t-1}))
            return agents.seek(llm, prompts, task.question, chunks[i], i, shown, t, cfg.seek_max_tokens)

        def admission(t: int, shown: dict[int, list[str]]) -> Callable[[int, Reply], bool]:
            seen.clear()
            seen.update(shown)
            return self._admission(pad, active, shown, chunks, prompts, task.question, t, guards)

        sync = rounds(pad, active, cfg.rounds, seek_room, seek, admission, cfg.gks, protocol.rank_broadcast,
                      not protocol.parallel, self.progress, f"{task.id} ", pipeline.gather if pipeline else None)
        async for r in sync:  # GKS, eq. 6-7
            trail["broadcast"].append(r.broadcast)
            early = r.early or EarlyReasoning()  # the pipelined KAR's steps during the round, if any
            calls += [record for _, record in r.replies.values()] + early.records
            all_failed = all(message is None for message, _ in r.replies.values())
            if all_failed and not pad.notes:
                return Prediction(task.id, "", r.t, calls, error=f"all {len(r.replies)} seeking calls failed in "
                                  f"round {r.t}; first error: {next(iter(r.replies.values()))[1].error}")
            calls += await self._rate(llm, prompts, task.question, pad, r.changed, r.t, protocol)
            trail["ranking"].append(pad.ranked())
            if early.cancelled:
                trail.setdefault("cancelled", []).append(early.cancelled)
            if early.answer is not None or early.error:  # KAR answered (or failed) while agents were reading
                return Prediction(task.id, early.answer or "", r.t, calls, error=early.error, extra=trail)
            # Nothing new on the scratchpad after round 2 or later: the next round would send the same prompts, so
            # answer now (round 1's prompt is not a later round's: those ask about what the facts found lead to, or
            # with none found, about what the question asks). A round whose every call failed also ends
            # synchronization, answering from what was found.
            final = r.t == cfg.rounds or not active or not r.changed and r.t > 1 or all_failed
            answer, reasoning_calls = await self._reason(reasoner, prompts, task.question, pad, reason_room, r.t,
                                                         final, protocol, refuse, early.asked)  # KAR, eq. 8
            calls += reasoning_calls
            if reasoning_calls and reasoning_calls[-1].error:
                return Prediction(task.id, "", r.t, calls, error=f"reasoning failed: {reasoning_calls[-1].error}",
                                  extra=trail)
            if answer is not None or final:
                return Prediction(task.id, answer or "", r.t, calls, extra=trail)
        raise AssertionError("unreachable: the last round always answers")

    def _rooms(self, prompts: PromptSet, question: str, pad: Scratchpad) -> tuple[int, int]:
        """Tokens left for shared messages in a seeking prompt, L - |q| - |d_i| - template - generation
        (eq. 7), and in a reasoning prompt. Chunks are at most chunk_tokens by construction (plus a few where
        re-tokenizing a decoded span drifts), so one bound serves every agent without tokenizing every
        chunk again; the names a later round asks about take at most agents.LEADS_TOKENS each time they appear."""
        cfg = self.config
        fixed = CHAT_OVERHEAD_TOKENS + CHUNK_DRIFT_TOKENS + cfg.chunk_tokens + max(
            pad.tokens(agents.seek_prompt(prompts, question, "", [], t)) for t in (1, 2)
        ) + prompts.seek_next.count("{leads}") * (  # measured with no_leads there; +2: a token merged at either end
            agents.LEADS_TOKENS + 2 - pad.tokens(prompts.no_leads))
        require_fit(fixed + cfg.seek_max_tokens, cfg.context_window,
                    f"the question, a {cfg.chunk_tokens}-token chunk, the prompt template and the "
                    f"{cfg.seek_max_tokens} tokens to generate")
        reason_room = cfg.context_window - CHAT_OVERHEAD_TOKENS - cfg.reason_max_tokens - max(
            pad.tokens(agents.reason_prompt(prompts, question, [], must_answer=must)) for must in (False, True))
        return cfg.context_window - fixed - cfg.seek_max_tokens, reason_room

    def _admission(self, pad: Scratchpad, active: list[int], shared: dict[int, list[str]], chunks: list[str],
                   prompts: PromptSet, question: str, t: int, guards: Guards) -> Callable[[int, Reply], bool]:
        """`admit(i, reply)` puts agent i's reply on the scratchpad (m_{i,t} = m_{i,t-1} + the new reply) and says
        whether its message changed. Kept off, with the reason in the trace: failed calls, NO INFORMATION (with
        exclusion the chunk is not read again), what the guards do not admit, and what would add no term beyond the
        scratchpad before this round and the template (the reply, or what the guards post for it). Each reply is
        judged against the scratchpad as the round found it, so the order the replies arrive in does not matter."""
        template = frozenset(grounding_terms(agents.seek_prompt(prompts, "", "", [], t)))
        posted_before = " ".join(pad.notes.values())
        known = grounding_terms(posted_before) | template

        def admit(i: int, reply: Reply) -> bool:
            message, record = reply
            if message is None:
                return False  # failed call, already in the trace; the agent keeps its previous message
            if is_no_information(message):
                if self.config.exclusion:
                    active.remove(i)
                if not pad.held.get(i):
                    return False
                message = ""  # nothing new, but what the guards hold of its earlier replies may join the chain now
            posted, why = guards.admit(message, chunks[i], shared[i], question, template, posted_before,
                                       pad.held.setdefault(i, []))
            if posted is None:
                record.dropped = why if message else None  # a NONE whose held sentences stay unjoined: nothing dropped
                return False
            if not grounding_terms(posted) - known:
                record.dropped = ADDS_NOTHING
                return False
            record.posted = posted if posted != message.strip() else None
            pad.notes[i] = f"{pad.notes[i]}\n{posted}" if i in pad.notes else posted
            return True
        return admit

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
                      final: bool, protocol: Protocol, refuse: Refusal,
                      asked: set[int] = frozenset()) -> tuple[str | None, list[CallRecord]]:
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
                                                 self.config.reason_max_tokens, refuse)
            records.append(record)
            if record.error or answer is not None:
                return answer, records
            pad.read_without_answer(usable[:size])
        return None, records
