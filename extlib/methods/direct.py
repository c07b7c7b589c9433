"""Direct Input, as InfiniteBench runs it: the knowledge middle-truncated to fit the window, one call,
its own template, a short answer (40 new tokens)."""

from __future__ import annotations

from dataclasses import dataclass

from ..budget import CHAT_OVERHEAD_TOKENS, require_fit
from ..calls import call
from ..chunking import truncate_text
from ..llm import LLMClient
from ..trace import Prediction, Task
from .base import Method, TruncatedConfig, knob

TEMPLATES = {
    "en": "Read the book below and answer a question.\n\n{context}\n\nQuestion: {question}\n\nBe very concise.",
    "zh": "请根据以下书籍回答我的问题。\n\n{context}\n\n问题：{question}\n请尽量简短地回答。",
}


@dataclass
class DirectConfig(TruncatedConfig):
    max_tokens: int = knob(40, "tokens of the answer (InfiniteBench's setting)")


class DirectInput(Method):
    name = "direct"
    version = 1

    config_class = DirectConfig

    async def arun(self, task: Task, llm: LLMClient, reasoning_llm: LLMClient | None = None) -> Prediction:
        cfg = self.config
        template = TEMPLATES[task.lang]
        fixed = llm.count_tokens(template.format(context="", question=task.question)) + CHAT_OVERHEAD_TOKENS
        require_fit(fixed + cfg.max_tokens + 1, cfg.context_window, "the question, the template and the answer")
        room = cfg.context_window - fixed - cfg.max_tokens
        if cfg.input_tokens:
            room = min(room, cfg.input_tokens)
        context = truncate_text(task.knowledge, llm.tokenizer, room, cfg.truncate)
        text, record = await call(llm, template.format(context=context, question=task.question), cfg.max_tokens,
                                  "answer", 1)
        if text is None:
            return Prediction(task.id, "", 1, [record], error=record.error)
        return Prediction(task.id, text.strip(), 1, [record])
