"""ExtAgents (paper §4): seeking agents with global knowledge synchronization (GKS, eq. 6-7) and a
reasoning agent with knowledge-accumulating reasoning (KAR, eq. 8).

Choices the paper leaves open, made explicit here:
- An agent's message accumulates over rounds (m_{i,t} = m_{i,t-1} + what it newly found), since the
  round-t prompt says "do not repeat the previously extracted information"; otherwise facts found in
  round 1 would vanish from {m_{i,T}}.
- "NO INFORMATION" replies carry nothing to share, so they are neither rated nor broadcast; with
  `exclusion` on, such a chunk also stops being read in later rounds (the paper's chunk exclusion).
  A reply that adds no word beyond the scratchpad is dropped the same way, and so is (by default with
  the small-model prompts) a reply whose words, beyond those its agent was shown, mostly do not occur in
  its own chunk: small models asked about a person their chunk never mentions invent a fact about them.
  The trace keeps every dropped reply with the reason. With the same setting, a reasoning answer whose
  words no message states counts as NO ANSWER until the last step must answer (a small model that
  knows only the first hop invents the second).
- A round that adds nothing to the scratchpad ends synchronization early: the reasoning agent must
  answer then, since further rounds would see the same messages.
- Without GKS an agent sees only its own previous message (a neighbourhood of itself).
- KAR runs after every synchronization round, as §4.3 describes; Appendix E.1 and the official code
  accumulate only in round 1 and then read everything, which `mode="reference-code"` reproduces, along
  with broadcasting every message (cut to fit) and making one call at a time.
- With `rating="llm"` each new or updated message is rated in a call of its own (the paper appends the
  rating prompt to the seeking agent); this costs one short call per changed message and round.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, fields
from typing import TypeVar

from tqdm import tqdm

from .. import agents
from ..chunking import TRUNCATE_SIDES, chunk_text
from ..llm import LLMClient
from ..prompts import get_prompts
from ..retrieval import bm25_scores
from ..trace import CallRecord, Prediction, Task
from .base import CHAT_OVERHEAD_TOKENS, Method, PromptTooLong

T = TypeVar("T")
RATINGS = ("llm", "bm25", "order")
CHUNK_DRIFT_TOKENS = 8  # a decoded chunk may re-tokenize to a few more tokens than its span
MODES = ("paper", "reference-code")


@dataclass
class ExtAgentsConfig:
    chunk_tokens: int = 2048  # |d_i|
    context_window: int = 8192  # L
    input_tokens: int | None = None  # truncate the knowledge to this many tokens first
    truncate: str = "middle"  # front | middle
    paragraphs: bool = False  # pack whole paragraphs instead of fixed-size chunks
    overlap: int = 0
    rounds: int = 5  # T
    gks: bool = True
    kar: bool = True
    rating: str = "llm"  # llm (0-100 prompt) | bm25 | order (given order, e.g. retrieval rank)
    exclusion: bool = False
    mode: str = "paper"
    prompt_set: str = "small"  # small | paper
    variant: str | None = None  # en | zh | hotpotqa; default: the task's language
    seek_max_tokens: int = 256
    reason_max_tokens: int = 128
    grounding: float | None = None  # min share of a message's new words found in its chunk; None: 0.75 for the
    #                                 small prompt set (small models invent facts), 0 (off) for the paper's
    progress: bool = False  # a progress bar per round on stderr

    def __post_init__(self) -> None:
        def positive(name: str) -> None:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")

        for name in ("chunk_tokens", "context_window", "rounds", "seek_max_tokens", "reason_max_tokens"):
            positive(name)
        if self.input_tokens is not None:
            positive("input_tokens")
        if self.chunk_tokens >= self.context_window:
            raise ValueError(f"chunk_tokens ({self.chunk_tokens}) must be below context_window "
                             f"({self.context_window}) to leave room for the question and messages")
        if self.truncate not in TRUNCATE_SIDES:
            raise ValueError(f"truncate must be one of {TRUNCATE_SIDES}, got {self.truncate!r}")
        if self.grounding is not None and not 0.0 <= self.grounding <= 1.0:
            raise ValueError(f"grounding must be between 0 and 1, got {self.grounding!r}")
        if self.rating not in RATINGS:
            raise ValueError(f"rating must be one of {RATINGS}, got {self.rating!r}")
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        get_prompts(self.prompt_set, self.variant or "en")


def kar_schedule(n: int) -> list[int]:
    """Eq. 8: the reasoning agent reads the top 1, 2, 4, ... messages, then all n."""
    sizes, k = [], 1
    while k < n:
        sizes.append(k)
        k *= 2
    return sizes + [n]


def top_k_within(ranked: list[T], counts: list[int], budget: int) -> list[T]:
    """Eq. 6-7: as many messages as the token budget allows, best first. A message too long for what is
    left is skipped rather than ending the selection, so one long message cannot cut everyone off (this
    greedy pass approximates eq. 6's argmax of the summed scores under the budget)."""
    chosen, used = [], 0
    for message, n in zip(ranked, counts):
        if used + n <= budget:
            chosen.append(message)
            used += n
    return chosen


class ExtAgents(Method):
    name = "extagents"

    def __init__(self, config: ExtAgentsConfig | None = None, **knobs) -> None:
        unknown = set(knobs) - {f.name for f in fields(ExtAgentsConfig)}
        if unknown:
            raise TypeError(f"unknown ExtAgents option(s): {', '.join(sorted(unknown))}")
        self.config = config or ExtAgentsConfig(**knobs)

    async def arun(self, task: Task, llm: LLMClient, reasoning_llm: LLMClient | None = None) -> Prediction:
        cfg, reasoner = self.config, reasoning_llm or llm
        prompts = get_prompts(cfg.prompt_set, cfg.variant or task.lang)
        chunks = chunk_text(task.knowledge, llm.tokenizer, cfg.chunk_tokens, cfg.input_tokens, cfg.truncate,
                            cfg.paragraphs, cfg.overlap)
        tokens = _TokenCounter(llm)
        seek_room = self._seek_room(prompts, task.question, tokens)
        reason_room = cfg.context_window - CHAT_OVERHEAD_TOKENS - cfg.reason_max_tokens - max(
            tokens(agents.reason_prompt(prompts, task.question, [], must_answer=must)) for must in (False, True))
        reference = cfg.mode == "reference-code"
        min_grounding = cfg.grounding if cfg.grounding is not None else (0.75 if cfg.prompt_set == "small" else 0.0)

        notes: dict[int, str] = {}  # the shared scratchpad: agent i's message m_{i,t}
        scores: dict[int, float] = {}  # h_{i,t}
        calls: list[CallRecord] = []
        active = list(range(len(chunks)))

        for t in range(1, cfg.rounds + 1):
            ranked = sorted(notes, key=lambda i: (-scores.get(i, 0.0), i))
            if reference:
                ranked = sorted(notes)

            def top_k(pool: list[int]) -> list[str]:
                texts = [notes[j] for j in pool]
                return top_k_within(texts, [tokens(x) + 2 for x in texts], seek_room)

            # With GKS every agent has the same room, so the same top-k is broadcast to all (eq. 6-7);
            # without it an agent sees only its own previous message.
            broadcast = top_k(ranked) if cfg.gks and t > 1 else []
            shared = {i: broadcast if cfg.gks or t == 1 else top_k([i] if i in notes else []) for i in active}
            jobs = [agents.seek(llm, prompts, task.question, chunks[i], i, shared[i], t, cfg.seek_max_tokens)
                    for i in active]
            with tqdm(total=len(jobs), desc=f"{task.id} round {t}: seeking agents", unit="call", leave=False,
                      disable=not cfg.progress) as bar:
                results = await _gather(jobs, sequential=reference, bar=bar)
            calls += [record for _, record in results]
            all_failed = all(message is None for message, _ in results)
            if all_failed and not notes:
                return Prediction(task.id, "", t, calls, error=f"all {len(results)} seeking calls failed in "
                                  f"round {t}; first error: {results[0][1].error}")
            changed = []
            # A reply is new if it adds words beyond the scratchpad and the template (not the question); it is
            # grounded if its words, beyond those the agent was shown, come from the agent's own chunk.
            template = agents.content_words(agents.seek_prompt(prompts, "", "", [], t))
            known = agents.content_words(" ".join(notes.values())) | template
            shown: dict[tuple[str, ...], set[str]] = {}  # with GKS every agent is shown the same messages
            for i, (message, record) in zip(list(active), results):
                if message is None:
                    continue  # failed call, already in the trace; the agent keeps its previous message
                if agents.is_no_information(message):
                    if cfg.exclusion:
                        active.remove(i)
                    continue
                words = agents.content_words(message)
                if not words - known:
                    record.dropped = "adds nothing to the scratchpad"
                    continue
                key = tuple(shared[i])
                if key not in shown:
                    shown[key] = agents.content_words(" ".join(key)) | template
                support = agents.grounding(words - shown[key], chunks[i])
                if support < min_grounding:
                    record.dropped = f"ungrounded: {support:.2f} of its words are in the chunk"
                    continue
                notes[i] = f"{notes[i]}\n{message.strip()}" if i in notes else message.strip()
                changed.append(i)
            calls += await self._rate(llm, prompts, task.question, notes, scores, changed, t, reference)

            # Nothing new on the scratchpad: the next round would see the same messages, so answer now.
            # A round whose every call failed also ends synchronization, answering from what was found.
            final = t == cfg.rounds or not active or not changed or all_failed
            ranked = sorted(notes, key=lambda i: (-scores.get(i, 0.0), i))
            answer, reasoning_calls = await self._reason(reasoner, prompts, task.question,
                                                         [notes[i] for i in ranked], reason_room, t, final,
                                                         tokens, stated_only=min_grounding > 0)
            calls += reasoning_calls
            if reasoning_calls and reasoning_calls[-1].error:
                return Prediction(task.id, "", t, calls, error=f"reasoning failed: {reasoning_calls[-1].error}")
            if answer is not None or final:
                return Prediction(task.id, answer or "", t, calls)
        raise AssertionError("unreachable: the last round always answers")

    def _seek_room(self, prompts, question: str, tokens: _TokenCounter) -> int:
        """Tokens left for shared messages: L - |q| - |d_i| - template - generation (eq. 7). Chunks are at
        most chunk_tokens by construction (plus a few where re-tokenizing a decoded span drifts), so one
        bound serves every agent without tokenizing every chunk again."""
        cfg = self.config
        fixed = CHAT_OVERHEAD_TOKENS + CHUNK_DRIFT_TOKENS + cfg.chunk_tokens + max(
            tokens(agents.seek_prompt(prompts, question, "", [], t)) for t in (1, 2))
        left = cfg.context_window - fixed - cfg.seek_max_tokens
        if left < 0:
            raise PromptTooLong(
                f"the question, a {cfg.chunk_tokens}-token chunk and the prompt template need "
                f"{fixed + cfg.seek_max_tokens} tokens (with {cfg.seek_max_tokens} to generate), more than the "
                f"{cfg.context_window}-token window; lower --chunk-tokens or raise --context-window")
        return left

    async def _rate(self, llm: LLMClient, prompts, question: str, notes: dict[int, str],
                    scores: dict[int, float], changed: list[int], t: int, sequential: bool) -> list[CallRecord]:
        if self.config.rating == "order":
            scores.update({i: -float(i) for i in notes})
            return []
        if self.config.rating == "bm25":
            ids = sorted(notes)
            scores.update(zip(ids, bm25_scores(question, [notes[i] for i in ids])))
            return []
        results = await _gather([agents.rate(llm, prompts, question, notes[i], i, t) for i in changed],
                                sequential)
        for i, (score, _) in zip(changed, results):
            scores[i] = score if score is not None else 0.0  # an unparsable or failed rating ranks last
        return [record for _, record in results]

    async def _reason(self, llm: LLMClient, prompts, question: str, ranked: list[str], room: int, t: int,
                      final: bool, tokens: _TokenCounter, stated_only: bool) -> tuple[str | None, list[CallRecord]]:
        """KAR (eq. 8): top-1, 2, 4, ... messages until the agent can answer; forced on the last step of
        the last round. The official code accumulates only in round 1 and then reads everything."""
        usable = top_k_within(ranked, [tokens(m) + 2 for m in ranked], room)
        if not usable and not final:
            return None, []
        accumulate = self.config.kar and (self.config.mode == "paper" or t == 1)
        sizes = kar_schedule(len(usable)) if accumulate else [len(usable)]
        records = []
        for step, size in enumerate(sizes):
            must = final and step == len(sizes) - 1
            answer, record = await agents.reason(llm, prompts, question, usable[:size], must, t,
                                                 self.config.reason_max_tokens, stated_only)
            records.append(record)
            if record.error or answer is not None:
                return answer, records
        return None, records


class _TokenCounter:
    """Token counts of texts seen in this run; messages are counted once, not once per agent."""

    def __init__(self, llm: LLMClient) -> None:
        self.llm = llm
        self.seen: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        if text not in self.seen:
            self.seen[text] = self.llm.count_tokens(text)
        return self.seen[text]


async def _gather(jobs: list, sequential: bool, bar: tqdm | None = None) -> list:
    async def tick(job):
        result = await job
        if bar is not None:
            bar.update(1)
        return result

    if sequential:
        return [await tick(job) for job in jobs]
    return list(await asyncio.gather(*map(tick, jobs)))
