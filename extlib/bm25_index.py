"""An Okapi BM25 index over a large passage pool (66k HotpotQA paragraphs), built once and saved.

Postings are stored term-major as flat numpy arrays with each (term, passage) weight precomputed, so
ranking the whole pool for one question is a few vectorized additions, not a Python loop over passages.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
from tqdm import tqdm

from .retrieval import terms


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
        for doc_id, doc in enumerate(tqdm(docs, desc="BM25 index", unit="passage", disable=not progress)):
            words = terms(doc)
            lengths[doc_id] = len(words)
            counts = Counter(words)
            rows.append(np.fromiter((term_id.setdefault(t, len(term_id)) for t in counts), np.int32, len(counts)))
            tfs.append(np.fromiter(counts.values(), np.float32, len(counts)))
            cols.append(np.full(len(counts), doc_id, np.int32))
        term, doc, tf = np.concatenate(rows), np.concatenate(cols), np.concatenate(tfs)
        order = np.argsort(term, kind="stable")  # term-major; passages stay ascending within a term
        term, doc, tf = term[order], doc[order], tf[order]
        df = np.bincount(term, minlength=len(term_id)).astype(np.float32)
        idf = np.log1p((len(docs) - df + 0.5) / (df + 0.5))
        norm = k1 * (1 - b + b * lengths[doc] / max(float(lengths.mean()), 1.0))
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
