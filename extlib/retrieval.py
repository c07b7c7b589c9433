"""Okapi BM25 over a small list of texts (messages, chunks); a cheap, LLM-free relevance score."""

from __future__ import annotations

import math
import re
from collections import Counter

_WORD = re.compile(r"\w+", re.UNICODE)
CJK = re.compile(r"[\u4e00-\u9fff]")


def terms(text: str) -> list[str]:
    """Lower-cased words; Chinese has no spaces, so each CJK character is a term of its own."""
    out = []
    for word in _WORD.findall(text.lower()):
        out.extend(list(word) if CJK.search(word) else [word])
    return out


def bm25_scores(query: str, docs: list[str], k1: float = 1.5, b: float = 0.75) -> list[float]:
    tokenized = [terms(d) for d in docs]
    if not tokenized:
        return []
    avg_len = sum(map(len, tokenized)) / len(tokenized) or 1.0
    df = Counter(t for doc in tokenized for t in set(doc))
    n = len(tokenized)
    idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
    query_terms = set(terms(query))
    scores = []
    for doc in tokenized:
        tf = Counter(doc)
        norm = k1 * (1 - b + b * len(doc) / avg_len)
        scores.append(sum(idf[t] * tf[t] * (k1 + 1) / (tf[t] + norm) for t in query_terms if t in tf))
    return scores
