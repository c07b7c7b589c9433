"""The toolkit's BM25 (extlib.retrieval.BM25Index) side by side with the bm25s library on the whole HotpotQA
dev paragraph pool (66,581 passages), with the same word tokenizer and Lucene's BM25 in both: index build
time, time to rank the whole pool for one question, on-disk index size, and whether the rankings agree.
The toolkit keeps its own index unless bm25s is clearly better; the numbers go to docs/data.md.

    .venv/bin/pip install bm25s && .venv/bin/python benchmarks/retrieval.py [--questions 200]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np


def folder_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=200)
    args = parser.parse_args()
    import bm25s

    from extlib.datasets import hotpotqa
    from extlib.retrieval import BM25Index
    from extlib.words import terms

    rows, pool = hotpotqa.load_pool()
    questions = [r["question"] for r in rows[:args.questions]]

    start = time.perf_counter()
    ours = BM25Index.build(pool.passages, progress=False)
    ours_build = time.perf_counter() - start
    start = time.perf_counter()
    tokenized = [terms(p) for p in pool.passages]
    theirs = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    theirs.index(tokenized, show_progress=False)
    theirs_build = time.perf_counter() - start

    timings: dict[str, list[float]] = {"ours": [], "bm25s": []}
    agree_top10, agree_top100, spearman = [], [], []
    for question in questions:
        start = time.perf_counter()
        ranked_ours = ours.rank(question)
        timings["ours"].append(time.perf_counter() - start)
        start = time.perf_counter()
        scores = theirs.get_scores(list(set(terms(question))))
        ranked_theirs = np.argsort(-scores, kind="stable")
        timings["bm25s"].append(time.perf_counter() - start)
        agree_top10.append(ranked_ours[:10].tolist() == ranked_theirs[:10].tolist())
        agree_top100.append(len(set(ranked_ours[:100].tolist()) & set(ranked_theirs[:100].tolist())) / 100)
        top = ranked_ours[:100]
        ratio = ours.scores(question)[top] / np.maximum(scores[top], 1e-9)
        spearman.append(float(np.median(ratio)))

    with tempfile.TemporaryDirectory() as tmp:
        ours.save(Path(tmp) / "ours.npz")
        theirs.save(str(Path(tmp) / "bm25s"))
        sizes = {"ours": folder_mb(Path(tmp)) - folder_mb(Path(tmp) / "bm25s"), "bm25s": folder_mb(Path(tmp) / "bm25s")}
        files = sorted(p.name for p in (Path(tmp) / "bm25s").iterdir())

    print(json.dumps({
        "passages": len(pool.passages), "questions": len(questions), "bm25s_version": bm25s.__version__,
        "build_s": {"ours": round(ours_build, 2), "bm25s (tokenizing included)": round(theirs_build, 2)},
        "rank_all_ms_median": {k: round(1000 * statistics.median(v), 2) for k, v in timings.items()},
        "index_on_disk_mb": {k: round(v, 1) for k, v in sizes.items()}, "bm25s_files": files,
        "same_top10_order": f"{sum(agree_top10)}/{len(agree_top10)}",
        "top100_overlap_mean": round(statistics.mean(agree_top100), 4),
        "score_ratio_ours_over_bm25s_median": round(statistics.median(spearman), 3),
    }, indent=1))


if __name__ == "__main__":
    main()
