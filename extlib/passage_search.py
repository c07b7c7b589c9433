"""BM25 search over one task's own knowledge, for the retrieval-based methods (DRAG, IterDRAG, the search
agents): its retrieved passages when it has them, else the knowledge cut into passage-sized pieces."""

from __future__ import annotations

from .bm25_index import BM25Index
from .chunking import chunk_text
from .tokenizer import Tokenizer
from .trace import Task


class PassageSearch:
    def __init__(self, passages: list[str]) -> None:
        if not passages:
            raise ValueError("no passages to search")
        self.passages = passages
        self._index = BM25Index.build(passages, progress=False)

    @classmethod
    def from_task(cls, task: Task, tokenizer: Tokenizer, passage_tokens: int = 256,
                  input_tokens: int | None = None) -> PassageSearch:
        """The task's passages (in retrieval order) or paragraph-packed pieces of at most passage_tokens;
        with input_tokens, only what the first input_tokens tokens of knowledge hold."""
        if task.passages and (input_tokens is None or task.meta.get("input_tokens", input_tokens + 1) <= input_tokens):
            return cls(list(task.passages))
        return cls(chunk_text(task.knowledge, tokenizer, passage_tokens, input_tokens, "front", paragraphs=True))

    def search(self, query: str, k: int) -> list[int]:
        """Ids of the k best passages for `query`, best first (ties in passage order)."""
        return [int(i) for i in self._index.rank(query)[:k]]
