"""Okapi BM25, the toolkit's one retriever: an index over a passage pool (the 66k HotpotQA paragraphs,
built once and saved), scores over a few texts (messages, evidence), and search over one task's knowledge.

Postings are stored term-major as flat numpy arrays with each (term, passage) weight precomputed, so
ranking the whole pool for one question is a few vectorized additions, not a Python loop over passages.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np

from .chunking import chunk_text
from .fan_out import progress_bar
from .tokenizer import Tokenizer
from .trace import Task
from .words import content_words, terms


class BM25Index:
    def __init__(self, vocab: list[str], indptr: np.ndarray, postings: np.ndarray, weights: np.ndarray,
                 n_docs: int) -> None:
        self.vocab = vocab
        self._term_id = {t: i for i, t in enumerate(vocab)}
        self.indptr, self.postings, self.weights, self.n_docs = indptr, postings, weights, n_docs

    @classmethod
    def build(cls, docs: list[str], k1: float = 1.5, b: float = 0.75, progress: bool = True) -> BM25Index:
        """Okapi BM25 with idf = ln(1 + (N - df + 0.5) / (df + 0.5)) (Lucene's, never negative)."""
        term_id: dict[str, int] = {}
        rows: list[np.ndarray] = []
        cols: list[np.ndarray] = []
        tfs: list[np.ndarray] = []
        lengths = np.zeros(len(docs), dtype=np.float32)
        for doc_id, doc in enumerate(progress_bar(progress, iterable=docs, desc="BM25 index", unit="passage")):
            words = terms(doc)
            lengths[doc_id] = len(words)
            counts = Counter(words)
            rows.append(np.fromiter((term_id.setdefault(t, len(term_id)) for t in counts), np.int32, len(counts)))
            tfs.append(np.fromiter(counts.values(), np.float32, len(counts)))
            cols.append(np.full(len(counts), doc_id, np.int32))
        term, doc, tf = (np.concatenate(parts) if parts else np.zeros(0, dtype)
                         for parts, dtype in ((rows, np.int32), (cols, np.int32), (tfs, np.float32)))
        order = np.argsort(term, kind="stable")  # term-major; passages stay ascending within a term
        term, doc, tf = term[order], doc[order], tf[order]
        df = np.bincount(term, minlength=len(term_id)).astype(np.float32)
        idf = np.log1p((len(docs) - df + 0.5) / (df + 0.5))
        norm = k1 * (1 - b + b * lengths[doc] / max(float(lengths.mean()) if len(docs) else 0.0, 1.0))
        weights = (idf[term] * tf * (k1 + 1) / (tf + norm)).astype(np.float32)
        indptr = np.zeros(len(term_id) + 1, dtype=np.int64)
        np.cumsum(df.astype(np.int64), out=indptr[1:])
        return cls(list(term_id), indptr, doc, weights, len(docs))

    def scores(self, query: str) -> np.ndarray:
        out = np.zeros(self.n_docs, dtype=np.float32)
        for t in set(terms(query)):
            i = self._term_id.get(t)
            if i is not None:
                lo, hi = self.indptr[i], self.indptr[i + 1]
                out[self.postings[lo:hi]] += self.weights[lo:hi]  # a term's passages are distinct
        return out

    def coverage(self, query: str) -> np.ndarray:
        """Per passage, the summed idf of the query's content words it holds: how much of the query's vocabulary it
        covers, the rare words counting most (coordination-level matching, where BM25 alone lets many mentions of a
        common word outrank one of a rare one)."""
        out = np.zeros(self.n_docs, dtype=np.float32)
        for t in content_words(query) or set(terms(query)):  # a query of short words only ("AI") keeps them
            i = self._term_id.get(t)
            if i is not None:
                lo, hi = self.indptr[i], self.indptr[i + 1]
                out[self.postings[lo:hi]] += np.log1p((self.n_docs - (hi - lo) + 0.5) / (hi - lo + 0.5))
        return out

    def rank(self, query: str) -> np.ndarray:
        """All passage ids, best first; ties keep pool order so a ranking is reproducible."""
        return np.argsort(-self.scores(query), kind="stable")

    def save(self, path: Path) -> None:
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(tmp, indptr=self.indptr, postings=self.postings, weights=self.weights,
                 n_docs=np.array(self.n_docs), vocab=np.array(json.dumps(self.vocab)))
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> BM25Index:
        with np.load(path) as f:
            return cls(json.loads(str(f["vocab"])), f["indptr"], f["postings"], f["weights"], int(f["n_docs"]))


def bm25_scores(query: str, docs: list[str]) -> list[float]:
    """BM25 score of each of a few texts for `query`, e.g. messages rated by a tool instead of an LLM."""
    return BM25Index.build(docs, progress=False).scores(query).tolist() if docs else []


class PassageSearch:
    """BM25 search over one task's own knowledge, for the retrieval-based methods (DRAG, IterDRAG, the search
    agents): its retrieved passages when it has them, else the knowledge cut into passage-sized pieces."""

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
