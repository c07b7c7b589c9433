"""Exact-length knowledge: packing passages in rank order and placing evidence inside filler text."""

import math
from collections import Counter

import numpy as np
import pytest

from extlib.datasets.packing import SEPARATOR, TooLong, cut_document, cut_text, pack, unit_counts
from extlib.datasets.placement import place
from extlib.retrieval import BM25Index, bm25_scores
from extlib.testing import ByteTokenizer
from extlib.words import terms

TOK = ByteTokenizer()
PASSAGES = [f"Passage {i} says {'word ' * (i % 7)}and ends." for i in range(40)]
COUNTS = unit_counts(TOK, PASSAGES)


@pytest.mark.parametrize("n_tokens", [1, 10, 37, 500, int(COUNTS.sum()) - 1, int(COUNTS.sum())])
def test_pack_gives_exactly_the_requested_length_in_the_given_order(n_tokens):
    order = np.arange(len(PASSAGES))[::-1]
    packed = pack(PASSAGES, COUNTS, order, n_tokens, TOK)
    assert packed.tokens == n_tokens == len(TOK.encode(packed.text))
    assert packed.passage_ids == [int(i) for i in order[:len(packed.passage_ids)]]
    for pid, offset in zip(packed.passage_ids, packed.offsets):  # offsets point at each passage's start
        assert packed.text.encode()[offset:].startswith(PASSAGES[pid].encode()[:n_tokens - offset])


def test_pack_says_how_much_there_is_when_asked_for_more():
    with pytest.raises(TooLong, match=f"hold {int(COUNTS.sum()):,}; ask for at most that") as info:
        pack(PASSAGES, COUNTS, np.arange(len(PASSAGES)), int(COUNTS.sum()) + 1, TOK)
    assert info.value.available == int(COUNTS.sum())


def test_cut_text_never_splits_a_character():
    text = "清河镇位于群山之间"  # three bytes a character
    assert cut_text(TOK, text, 7) == "清河"
    assert cut_text(TOK, text, 100) == text


def test_cut_document_middle_keeps_both_ends_and_reports_a_short_document():
    text = "A" * 50 + "B" * 50 + "C" * 50
    cut, tokens = cut_document(TOK, text, 60, "middle")
    assert (cut, tokens) == ("A" * 30 + "C" * 30, 60)
    with pytest.raises(TooLong, match="document has 150"):
        cut_document(TOK, text, 151, "middle")


def test_evidence_lands_at_its_depth_in_an_exact_length_document():
    filler = [f"Filler paragraph number {i} about nothing much." for i in range(300)]
    counts = unit_counts(TOK, filler)
    evidence = ["EVIDENCE ONE: Ann was born in Kettleby.", "EVIDENCE TWO: Kettleby lies in Rutland."]
    placed = place(evidence, [0.2, 0.7], filler, counts, 6000, TOK, start=17)
    data = placed.text.encode()
    assert placed.tokens == 6000 == len(data)
    for text, offset, depth in zip(evidence, placed.offsets, [0.2, 0.7]):
        assert data[offset:].startswith((text + SEPARATOR).encode())
        assert abs(offset / 6000 - depth) < 0.02  # nearest paragraph boundary
    assert placed.text.startswith(filler[17])
    reverse = place(evidence[::-1], [0.2, 0.7], filler, counts, 6000, TOK)
    assert reverse.offsets[0] < reverse.offsets[1]
    assert reverse.text.find("EVIDENCE TWO") < reverse.text.find("EVIDENCE ONE")
    with pytest.raises(TooLong, match="cannot hold the evidence"):
        place(evidence, [0.1, 0.2], filler, counts, 50, TOK)
    with pytest.raises(ValueError, match="depths"):
        place(evidence, [0.1, 1.2], filler, counts, 6000, TOK)


def reference_bm25(query: str, docs: list[str], k1: float = 1.5, b: float = 0.75) -> list[float]:
    """Okapi BM25 written out term by term (Lucene's idf), independent of the index's vectorized form."""
    tokenized = [terms(d) for d in docs]
    avg_len = sum(map(len, tokenized)) / len(tokenized)
    df = Counter(t for doc in tokenized for t in set(doc))
    idf = {t: math.log(1 + (len(docs) - f + 0.5) / (f + 0.5)) for t, f in df.items()}
    out = []
    for doc in tokenized:
        tf = Counter(doc)
        norm = k1 * (1 - b + b * len(doc) / avg_len)
        out.append(sum(idf[t] * tf[t] * (k1 + 1) / (tf[t] + norm) for t in set(terms(query)) if t in tf))
    return out


def test_bm25_index_matches_the_reference_scores_and_survives_a_round_trip(tmp_path):
    docs = ["the cat sat on the mat", "dogs chase cats", "a bird in the hand", "cat cat cat", "清河镇的灯塔"]
    index = BM25Index.build(docs, progress=False)
    for query in ("cat on a mat", "bird hand", "灯塔", "unknown words"):
        assert np.allclose(index.scores(query), reference_bm25(query, docs), atol=1e-5)
        assert np.allclose(bm25_scores(query, docs), reference_bm25(query, docs), atol=1e-5)
    assert bm25_scores("cat", []) == []
    path = tmp_path / "index.npz"
    index.save(path)
    loaded = BM25Index.load(path)
    assert loaded.rank("cat on a mat").tolist() == index.rank("cat on a mat").tolist()
    assert index.rank("unknown")[:3].tolist() == [0, 1, 2]  # ties keep pool order
