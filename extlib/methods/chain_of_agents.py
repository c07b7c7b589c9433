"""Chain of Agents (Zhang et al., 2024): worker agents read the chunks in order, each passing a summary of
the evidence so far (its "communication unit") to the next; a manager answers from the last summary.

The worker and manager prompts follow the paper's query-based ones; the manager is also asked for a last
`Answer:` line, which the small bundled models need to give a short answer. Workers run one after another
by design, so a question costs one call per chunk in sequence.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..budget import CHAT_OVERHEAD_TOKENS, require_fit
from ..calls import call
from ..chunking import chunk_text
from ..llm import LLMClient
from ..parsing import parse_answer
from ..trace import Prediction, Task
from .base import ChunkedConfig, Method, knob

WORKER = ("{chunk}\nHere is the summary of the previous source text: {summary}\nQuestion: {question}\n"
          "You need to read current source text and summary of previous source text (if any) and generate a "
          "summary to include them both. Later, this summary will be used for other agents to answer the Query, "
          "if any. So please write the summary that can include the evidence for answering the Query:")
MANAGER = ("The following are given passages. However, the source text is too long and has been summarized. "
           "You need to answer based on the summary: \n{summary}\nQuestion: {question}\n"
           "Reason in one sentence, then write a last line `Answer: <short phrase>`.")


@dataclass
class ChainOfAgentsConfig(ChunkedConfig):
    summary_max_tokens: int = knob(256, "tokens of each worker's summary (the communication unit)")
    answer_max_tokens: int = knob(128, "tokens of the manager's answer")


class ChainOfAgents(Method):
    name = "chain-of-agents"
    version = 1

    config_class = ChainOfAgentsConfig

    async def arun(self, task: Task, llm: LLMClient, reasoning_llm: LLMClient | None = None) -> Prediction:
        cfg = self.config
        fixed = CHAT_OVERHEAD_TOKENS + llm.count_tokens(WORKER.format(chunk="", summary="", question=task.question))
        require_fit(fixed + cfg.chunk_tokens + 2 * cfg.summary_max_tokens, cfg.context_window,
                    f"a {cfg.chunk_tokens}-token chunk, the previous summary, the worker prompt and its summary")
        chunks = chunk_text(task.knowledge, llm.tokenizer, cfg.chunk_tokens, cfg.input_tokens, cfg.truncate,
                            cfg.paragraphs)
        summary, calls = "", []
        for i, chunk in enumerate(chunks):  # CU_i = worker_i(chunk_i, CU_{i-1}, q)
            text, record = await call(llm, WORKER.format(chunk=chunk, summary=summary, question=task.question),
                                      cfg.summary_max_tokens, "worker", 1, i)
            calls.append(record)
            if text is not None:  # a failed worker passes the previous summary on unchanged
                summary = text.strip()
        if all(c.error for c in calls):
            return Prediction(task.id, "", 1, calls, error=f"all {len(calls)} worker calls failed")
        text, record = await call(reasoning_llm or llm, MANAGER.format(summary=summary, question=task.question),
                                  cfg.answer_max_tokens, "manager", 1)
        calls.append(record)
        if text is None:
            return Prediction(task.id, "", 1, calls, error=f"manager failed: {record.error}")
        return Prediction(task.id, parse_answer(text) or "", 1, calls)
