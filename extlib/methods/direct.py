"""Direct Input, as InfiniteBench runs it: the knowledge middle-truncated to fit the window, one call,
its own template, a short answer (40 new tokens)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..chunking import TRUNCATE_SIDES, truncate_text
from ..llm import LLMClient, LLMError
from ..trace import CallRecord, Prediction, Task
from .base import CHAT_OVERHEAD_TOKENS, Method, PromptTooLong

TEMPLATES = {
    "en": "Read the book below and answer a question.\n\n{context}\n\nQuestion: {question}\n\nBe very concise.",
    "zh": "请根据以下书籍回答我的问题。\n\n{context}\n\n问题：{question}\n请尽量简短地回答。",
}


@dataclass
class DirectConfig:
    context_window: int = 8192
    input_tokens: int | None = None
    truncate: str = "middle"
    max_tokens: int = 40

    def __post_init__(self) -> None:
        if self.context_window <= 0 or self.max_tokens <= 0:
            raise ValueError("context_window and max_tokens must be positive")
        if self.truncate not in TRUNCATE_SIDES:
            raise ValueError(f"truncate must be one of {TRUNCATE_SIDES}, got {self.truncate!r}")


class DirectInput(Method):
    name = "direct"

    config_class = DirectConfig

    async def arun(self, task: Task, llm: LLMClient, reasoning_llm: LLMClient | None = None) -> Prediction:
        cfg = self.config
        template = TEMPLATES[task.lang]
        fixed = llm.count_tokens(template.format(context="", question=task.question)) + CHAT_OVERHEAD_TOKENS
        room = cfg.context_window - fixed - cfg.max_tokens
        if room <= 0:
            raise PromptTooLong(f"the question and template need {fixed + cfg.max_tokens} tokens, more than "
                                f"the {cfg.context_window}-token window")
        if cfg.input_tokens:
            room = min(room, cfg.input_tokens)
        context = truncate_text(task.knowledge, llm.tokenizer, room, cfg.truncate)
        start = time.time()
        try:
            done = await llm.complete(template.format(context=context, question=task.question),
                                      max_tokens=cfg.max_tokens)
        except LLMError as exc:
            record = CallRecord("answer", 1, None, None, 0, 0, 0, start, time.time(), "", error=str(exc))
            return Prediction(task.id, "", 1, [record], error=str(exc))
        record = CallRecord("answer", 1, None, None, done.prompt_tokens, done.completion_tokens,
                            done.cached_tokens, done.start, done.end, done.text, cache_hit=done.cache_hit,
                            attempts=done.attempts)
        return Prediction(task.id, done.text.strip(), 1, [record])
