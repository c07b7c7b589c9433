"""DRAG and IterDRAG (Yue et al., 2024, inference scaling for long-context RAG), with BM25 over the task's
own knowledge as the retriever.

DRAG: demonstrations, then as many top-ranked passages as fill the window (best closest to the question),
then the question, in one call. IterDRAG: the same context, then self-ask steps: the model writes a
`Follow up:` sub-question, passages retrieved for it join the context, the model writes an
`Intermediate answer:`, until it writes `So the final answer is:` or the step limit forces it.

Deviations: demonstrations are optional (`demonstrations=[Demo(...)]`; the paper draws them from the
training split, which is not available offline, so the default is zero-shot). IterDRAG's in-context
examples of decomposition are replaced by an instruction describing the format.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..budget import CHAT_OVERHEAD_TOKENS, greedy_within, require_fit
from ..calls import call
from ..errors import UserError
from ..llm import LLMClient
from ..retrieval import PassageSearch
from ..trace import CallRecord, Prediction, Task
from .base import Method, WindowConfig, knob


@dataclass
class Demo:
    question: str
    passages: list[str]
    answer: str


DRAG_HEAD = "Answer the question from the documents. Give a short phrase, no explanation.\n\n"
ITER_HEAD = ("Answer the question from the documents by breaking it into simpler questions. Each time, write "
             "exactly one line: either `Follow up: <a simpler question>` or, once you know the answer, `So the final "
             "answer is: <short phrase>`.\n\n")
_FINAL = re.compile(r"so the final answer is\s*[:：]?\s*(.+)", re.IGNORECASE)
_FOLLOW = re.compile(r"follow[ -]?up\s*[:：]\s*(.+)", re.IGNORECASE)


def documents(passages: list[str]) -> str:
    return "".join(f"Document [{i + 1}]: {p.strip()}\n\n" for i, p in enumerate(passages))


def demo_block(demos: list[Demo]) -> str:
    return "".join(f"{documents(d.passages)}Question: {d.question}\nAnswer: {d.answer}\n\n" for d in demos)


def short(text: str) -> str:
    return text.strip().splitlines()[0].strip().strip("*`\"'").rstrip(".").strip() if text.strip() else ""


@dataclass
class DRAGConfig(WindowConfig):
    passage_tokens: int = knob(256, "piece size when the task has no passages of its own")
    demonstrations: list[Demo] = knob([], "in-context examples (the paper's come from the training split)")
    max_tokens: int = knob(32, "tokens of each reply")
    iterative: bool = knob(False, "IterDRAG: decompose into follow-up questions, retrieving for each")
    max_steps: int = knob(5, "IterDRAG: sub-questions before the answer is forced")
    passages_per_step: int = knob(4, "IterDRAG: passages retrieved for each sub-question")
    context_share: float = knob(0.6, "IterDRAG: share of the room given to the first retrieval, in (0, 1]",
                                low=0.0, high=1.0)

    def check(self) -> None:
        if self.context_share == 0.0:
            raise UserError(f"context_share must be in (0, 1], got {self.context_share}")


class DRAG(Method):
    name = "drag"
    version = 1

    config_class = DRAGConfig

    def __init__(self, config: DRAGConfig | None = None, **knobs) -> None:
        super().__init__(config, **knobs)
        if self.config.iterative:
            self.name = "iterdrag"

    async def arun(self, task: Task, llm: LLMClient, reasoning_llm: LLMClient | None = None) -> Prediction:
        cfg = self.config
        search = PassageSearch.from_task(task, llm.tokenizer, cfg.passage_tokens, cfg.input_tokens)
        head = (ITER_HEAD if cfg.iterative else DRAG_HEAD) + demo_block(cfg.demonstrations)
        chain_room = cfg.max_steps * 2 * cfg.max_tokens if cfg.iterative else 0
        fixed = CHAT_OVERHEAD_TOKENS + cfg.max_tokens + chain_room + llm.count_tokens(
            f"{head}Question: {task.question}\nAnswer:")
        require_fit(fixed + 1, cfg.context_window, "the demonstrations, the question, the template and the replies",
                    fix="shorten the demonstrations or raise --context-window")
        room = cfg.context_window - fixed
        sizes: dict[int, int] = {}

        def size(i: int) -> int:
            if i not in sizes:
                sizes[i] = llm.count_tokens(search.passages[i]) + 8
            return sizes[i]

        def fill(ranked: list[int], budget: int, have: list[int]) -> list[int]:
            """`have`, then the best of `ranked` that fit with them (greedy)."""
            rest = [i for i in ranked if i not in have]
            return have + greedy_within(rest, size, budget - sum(size(i) for i in have))

        ranked = search.search(task.question, len(search.passages))
        if not cfg.iterative:
            chosen = fill(ranked, room, [])
            docs = documents([search.passages[i] for i in reversed(chosen)])
            prompt = f"{head}{docs}Question: {task.question}\nAnswer:"
            text, record = await call(llm, prompt, cfg.max_tokens, "answer", 1)
            return Prediction(task.id, short(text) if text else "", 1, [record],
                              error=f"answer failed: {record.error}" if text is None else None,
                              extra={"passages": len(chosen)})
        return await self._iterate(task, llm, search, head, ranked, fill, room)

    async def _iterate(self, task: Task, llm: LLMClient, search: PassageSearch, head: str, ranked: list[int],
                       fill, room: int) -> Prediction:
        cfg = self.config
        chosen = fill(ranked, int(room * cfg.context_share), [])
        chain: list[str] = []
        calls: list[CallRecord] = []

        def prompt(tail: str) -> str:
            docs = documents([search.passages[i] for i in reversed(chosen)])
            return f"{head}{docs}Question: {task.question}\n" + "".join(f"{line}\n" for line in chain) + tail

        stalled = False  # a reply that neither follows up nor concludes: ask for the final answer
        for step in range(1, cfg.max_steps + 2):
            forced = stalled or step > cfg.max_steps
            text, record = await call(llm, prompt("So the final answer is:" if forced else ""), cfg.max_tokens,
                                      "answer" if forced else "plan", step)
            calls.append(record)
            stats = {"sub_queries": len(chain) // 2, "passages": len(chosen)}
            if text is None:
                return Prediction(task.id, "", step, calls, error=f"step {step} failed: {record.error}", extra=stats)
            final, follow = _FINAL.search(text), _FOLLOW.search(text)
            if forced or final:
                return Prediction(task.id, short(final.group(1) if final else text), step, calls, extra=stats)
            if follow is None:
                stalled = True
                continue
            sub_query = follow.group(1).strip()
            extra = [i for i in search.search(sub_query, cfg.passages_per_step * 3) if i not in chosen]
            chosen = fill(extra[:cfg.passages_per_step], room, chosen)  # new passages join while they fit
            chain.append(f"Follow up: {sub_query}")
            text, record = await call(llm, prompt("Intermediate answer:"), cfg.max_tokens, "intermediate", step)
            calls.append(record)
            if text is not None and (final := _FINAL.search(text)):  # it concluded while answering the step
                return Prediction(task.id, short(final.group(1)), step, calls,
                                  extra={"sub_queries": len(chain), "passages": len(chosen)})
            chain.append(f"Intermediate answer: {short(text) if text else 'unknown'}")
        raise AssertionError("unreachable: the last step is forced to answer")
