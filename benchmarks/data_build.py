"""Data-side costs, measured in fresh processes on this machine: building the BM25 index over the whole
HotpotQA dev paragraph pool, counting its tokens, loading the index, building inputs of 64k and 1M tokens
once the index exists, and the size of everything `make data` writes. Numbers go to docs/data.md.

    .venv/bin/python benchmarks/data_build.py [--questions 5]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import statistics
import time
import tracemalloc


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build_index(queue: multiprocessing.Queue) -> None:
    from extlib.datasets import hotpotqa
    from extlib.retrieval import BM25Index

    _, pool = hotpotqa.load_pool()
    start = time.perf_counter()
    index = BM25Index.build(pool.passages, progress=False)
    seconds = time.perf_counter() - start
    del index
    tracemalloc.start()  # a second, traced build: peak Python + numpy allocations of the build alone
    index = BM25Index.build(pool.passages, progress=False)
    build_peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    index_mb = (index.postings.nbytes + index.weights.nbytes + index.indptr.nbytes) / 1e6
    queue.put({"passages": len(pool.passages), "terms": len(index.vocab), "postings": int(len(index.postings)),
               "build_s": seconds, "build_peak_mb": build_peak, "index_arrays_mb": index_mb,
               "peak_rss_mb": _rss_mb()})


def count_tokens(queue: multiprocessing.Queue) -> None:
    from extlib.datasets import default_tokenizer, hotpotqa
    from extlib.datasets.packing import unit_counts

    tokenizer = default_tokenizer()
    _, pool = hotpotqa.load_pool()
    start = time.perf_counter()
    counts = unit_counts(tokenizer, pool.passages)
    queue.put({"tokens": int(counts.sum()), "count_s": time.perf_counter() - start})


def build_inputs(queue: multiprocessing.Queue, questions: int) -> None:
    from extlib.datasets import DATASETS, default_tokenizer, hotpotqa

    tokenizer = default_tokenizer()
    start = time.perf_counter()
    rows, pool = hotpotqa.load_pool()
    index = hotpotqa.bm25_index(pool, progress=False)
    counts = hotpotqa.token_counts(pool, tokenizer, progress=False)
    load_s = time.perf_counter() - start
    out = {"load_s": load_s, "peak_rss_mb": _rss_mb()}
    for n_tokens in (64_000, 1_000_000):
        times = []
        for row in rows[:questions]:
            t0 = time.perf_counter()
            task = hotpotqa.build_task(row, pool, index, counts, n_tokens, tokenizer)
            times.append(time.perf_counter() - t0)
        out[f"hotpotqa_{n_tokens}_s"] = statistics.median(times)
        t0 = time.perf_counter()
        exact = len(tokenizer.encode(task.knowledge))  # checks the length claim once per size
        out[f"encode_{n_tokens}_s"] = time.perf_counter() - t0
        out[f"hotpotqa_{n_tokens}_exact"] = exact == n_tokens
        for name in ("hotpotqa-longdoc", "zh-longdoc"):
            DATASETS[name](n_tokens, 1, 0, tokenizer, progress=False)  # warm the filler caches
            t0 = time.perf_counter()
            DATASETS[name](n_tokens, questions, 1, tokenizer, progress=False)
            out[f"{name}_{n_tokens}_s"] = (time.perf_counter() - t0) / questions
    out["peak_rss_after_mb"] = _rss_mb()
    queue.put(out)


def in_fresh_process(target, *args) -> dict:
    queue: multiprocessing.Queue = multiprocessing.get_context("spawn").Queue()
    process = multiprocessing.get_context("spawn").Process(target=target, args=(queue, *args))
    process.start()
    result = queue.get()
    process.join()
    return result


def data_sizes() -> dict[str, int]:
    from extlib.datasets.sources import data_dir

    root = data_dir()
    return {str(f.relative_to(root)): f.stat().st_size for part in ("downloads", "cache")
            for f in sorted((root / part).rglob("*")) if f.is_file() and not f.name.startswith(".")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=5, help="questions timed per input size")
    args = parser.parse_args()
    from extlib.datasets import prepare

    prepare(progress=True)  # everything exists before timing; the index build below is timed from scratch
    index = in_fresh_process(build_index)
    counting = in_fresh_process(count_tokens)
    inputs = in_fresh_process(build_inputs, args.questions)
    sizes = data_sizes()
    print(json.dumps({"index": index, "token_counts": counting, "inputs": inputs, "sizes": sizes}, indent=1))
    print(f"\n| step | time | memory |\n|---|---|---|\n"
          f"| BM25 index over {index['passages']:,} paragraphs ({index['terms']:,} terms, {index['postings']:,} "
          f"postings) | {index['build_s']:.1f} s | build peak {index['build_peak_mb']:.0f} MB allocated; the index "
          f"arrays hold {index['index_arrays_mb']:.0f} MB; process peak RSS {index['peak_rss_mb']:.0f} MB with "
          f"all 7,405 questions loaded |\n"
          f"| token counts of the pool ({counting['tokens']:,} Qwen tokens, once per tokenizer) | "
          f"{counting['count_s']:.1f} s | |\n"
          f"| load questions + cached index + counts | {inputs['load_s']:.2f} s | peak RSS "
          f"{inputs['peak_rss_mb']:.0f} MB |")
    for n in (64_000, 1_000_000):
        print(f"| one HotpotQA input of {n:,} tokens (rank 66k paragraphs, pack, cut; median of "
              f"{args.questions}) | {inputs[f'hotpotqa_{n}_s'] * 1000:.0f} ms | exact length: "
              f"{inputs[f'hotpotqa_{n}_exact']} (re-encoding it to check: {inputs[f'encode_{n}_s']:.2f} s) |")
        for name in ("hotpotqa-longdoc", "zh-longdoc"):
            print(f"| one {name} input of {n:,} tokens | {inputs[f'{name}_{n}_s'] * 1000:.0f} ms | |")
    total = sum(sizes.values())
    print(f"\n`make data` writes {total / 1e6:.1f} MB:")
    for name, size in sizes.items():
        print(f"- {name}: {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
