"""ExtAgents' design variants side by side on the development split of a bridge-needed book: every choice of the
issue "ExtAgents keeps what its agents find" (which guard set, which rating, which chunk size) is made from these
rows, never from the test split. Each variant is a cell of one study (question by question across the variants,
rows resumable under results/dev/design/), and the table gives per variant the mean F1, its paired difference with
the first variant (95% bootstrap interval; wins/ties/losses), the share of questions with a second round, and the
prompt tokens (and those computed, not read from the server's prompt cache) and calls per question. No time is
compared here.

    .venv/bin/python benchmarks/design_screen.py --book zh-bridge --length 4096 --limit 10
    .venv/bin/python benchmarks/design_screen.py --book hotpotqa-bridge --length 4096 --limit 10 \\
        --variants small-model evidence evidence-order
    .venv/bin/python benchmarks/design_screen.py --book en-bridge --length 8192 \\
        --variants evidence direct drag mapreduce

Whether the chunk-first layout saves computed tokens needs the server's prompt-state cache, which is off here by
default so that the response cache can replay earlier calls (with it off, a later round computes its whole prompt
whatever the layout: on the first en-bridge dev question, 10,287 computed tokens chunk-first against 9,771
text-first); it decided version 20's default layout:

    .venv/bin/python benchmarks/design_screen.py --book en-bridge --variants evidence evidence-chunk-first \\
        --prompt-cache-mb 512 --out results/dev/design-prompt-cache
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from extlib.cells import Cell  # noqa: E402
from extlib.engine import EngineSettings, clients  # noqa: E402
from extlib.runner import run_cells  # noqa: E402
from extlib.tables import bootstrap_interval  # noqa: E402

WINDOW = 1024
BOOK = {"zh-bridge": {"split": "dev", "distractors": 4},  # densities fixed by benchmarks/book_difficulty.py
        "en-bridge": {"split": "dev", "distractors": 4},
        "hotpotqa-bridge": {"split": "dev", "wiki_share": 0.5},
        # the older datasets' dev lists, for the 1x check that ExtAgents keeps up with Direct Input where both read all
        "hotpotqa": {"split": "dev"}, "hotpotqa-longdoc": {"split": "dev"}, "zh-longdoc": {"split": "dev"}}
PARAGRAPHS = {"hotpotqa", "hotpotqa-longdoc", "hotpotqa-bridge"}  # chunks of whole passages, as the CPU study's
BASE = {"chunk_tokens": 384, "seek_max_tokens": 128}  # eq. 6's room holds about 300 tokens of messages
VARIANTS = {  # the candidates (ExtAgents' knobs beyond BASE, or another method's); the first named is the reference
    "small-model": {"guards": "small-model"},  # the design before this issue (the CPU study's ExtAgents v5)
    "evidence": {"guards": "evidence"},  # messages are their chunk's sentences, chained to the question
    "evidence-order": {"guards": "evidence", "rating": "order"},  # the same, no rating calls
    "paper": {"guards": "none", "prompt_set": "paper"},  # the paper's protocol
    "evidence-no-gks": {"guards": "evidence", "gks": False},
    "evidence-no-kar": {"guards": "evidence", "kar": False},
    "evidence-chunk-first": {"guards": "evidence", "layout": "chunk-first"},  # later rounds reuse the chunk's prefix
    # (the English default from version 20; in English "evidence" is the same method under another run-file name)
    "evidence-facts-first": {"guards": "evidence", "layout": "facts-first"},  # the Chinese default (version 21)
    "evidence-paragraphs": {"guards": "evidence", "paragraphs": True},  # chunks of whole passages: no note cut in two
    "direct": {"method": "direct"},  # the baselines the targets compare with, on the same draw
    "drag": {"method": "drag"},
    "mapreduce": {"method": "mapreduce", "chunk_tokens": BASE["chunk_tokens"]},
}


def cell(book: str, length: int, variant: str) -> Cell:
    knobs = dict(VARIANTS[variant])
    method = knobs.pop("method", "extagents")
    if method in ("extagents", "mapreduce") and book in PARAGRAPHS:
        knobs["paragraphs"] = True
    return Cell(book, method, length, {**BASE, **knobs} if method == "extagents" else knobs, BOOK[book],
                label=variant)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--book", required=True, choices=sorted(BOOK))
    parser.add_argument("--length", type=int, default=4 * WINDOW)
    parser.add_argument("--variants", nargs="+", default=["small-model", "evidence", "evidence-order"],
                        choices=sorted(VARIANTS))
    parser.add_argument("--n", type=int, default=30)
    parser.add_argument("--limit", type=int, default=0, help="answer only the first LIMIT questions now")
    parser.add_argument("--out", default=str(ROOT / "results" / "dev" / "design"))
    parser.add_argument("--prompt-cache-mb", type=int, default=0,
                        help="the server keeps each prompt's KV state in this much RAM, so a later round computes only "
                             "what its prompt does not share with an earlier one (what --layout chunk-first is for; "
                             "about 15 MB a 512-token state on the 1.5B model); the response cache is then off, so "
                             "every call reaches the server and the computed tokens are measured, not replayed. Use "
                             "its own --out: the rows' computed tokens depend on it")
    args = parser.parse_args()
    cells = [cell(args.book, args.length, v) for v in args.variants]
    if args.prompt_cache_mb and args.out == parser.get_default("out"):
        parser.error("--prompt-cache-mb needs its own --out (e.g. results/dev/design-prompt-cache)")
    settings = EngineSettings(context_window=WINDOW, prompt_cache_mb=args.prompt_cache_mb,
                              cache=not args.prompt_cache_mb)
    with clients(settings) as (llm, _):
        rows = run_cells(cells, llm, args.out, n=args.n, seed=0, window=WINDOW, limit=args.limit)
    reference = rows[rows.label == args.variants[0]].set_index("id")["f1"]
    print(f"{args.book} at {args.length} tokens, dev split, {len(reference)} questions")
    for variant in args.variants:
        own = rows[rows.label == variant].set_index("id")
        shared = reference.index.intersection(own.index)
        diffs = (own.loc[shared, "f1"] - reference.loc[shared]).mul(100)
        low, high = bootstrap_interval(diffs.tolist())
        usage = own["usage"].tolist()
        print(f"  {variant:16} F1 {100 * own['f1'].mean():5.1f}  vs {args.variants[0]} {diffs.mean():+5.1f} "
              f"({low:+.0f} to {high:+.0f}; {(diffs > 0).sum()}/{(diffs == 0).sum()}/{(diffs < 0).sum()})  "
              f"round 2 in {(own['rounds'] > 1).sum()}/{len(own)}  "
              f"{sum(u['prompt_tokens'] for u in usage) / len(usage):,.0f} prompt tokens "
              f"({sum(u['prompt_tokens'] - u['cached_tokens'] for u in usage) / len(usage):,.0f} computed), "
              f"{sum(u['calls'] for u in usage) / len(usage):.1f} calls a question")


if __name__ == "__main__":
    main()
