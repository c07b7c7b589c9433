"""How hard the bridge-needed books are, measured on the development split with one-call methods, to fix each
book's distractor density before ExtAgents ever runs on it.

The bar a density must meet, on `n` dev questions with the bundled model and a 1,024-token window:
- oracle: Direct Input given the two hops alone must reach ORACLE_F1: the model can follow the chain once it has
  exactly the evidence, so the book measures finding and joining it, not the model's limits;
- shortcut: Direct Input on a book inside its window (850 tokens) without the first hop (only facts of the second
  hop's kind left) must stay at or below SHORTCUT_F1: the second hop's facts alone do not answer the question;
- retrieval: DRAG (BM25 over the book, one call) at 8x the window must stay RETRIEVAL_GAP below the oracle: the
  question's words do not lead retrieval to both hops.
The density chosen is the lowest that meets all three. Also printed: Direct Input on the whole 850-token book (every
fact inside its window: can one reading join the hops among the distractors?) and the share of questions whose two
hops lie inside what Direct Input keeps, per length (no model call). Rows go to results/dev/book_difficulty/
(resumable).

    .venv/bin/python benchmarks/book_difficulty.py --book zh-bridge --densities 4 8
    .venv/bin/python benchmarks/book_difficulty.py --book hotpotqa-bridge --densities 0.3 0.6
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from extlib.cells import Cell  # noqa: E402
from extlib.chunking import evidence_kept  # noqa: E402
from extlib.datasets import load_tasks  # noqa: E402
from extlib.engine import EngineSettings, clients  # noqa: E402
from extlib.runner import run_cells  # noqa: E402
from extlib.tables import bootstrap_interval  # noqa: E402

WINDOW = 1024
INSIDE = 850  # knowledge that Direct Input's prompt holds whole in a 1,024-token window
ORACLE_F1, SHORTCUT_F1, RETRIEVAL_GAP = 60.0, 25.0, 25.0
DENSITY = {"zh-bridge": "distractors", "en-bridge": "distractors", "hotpotqa-bridge": "wiki_share"}
LENGTHS_X = (1, 2, 4, 8)


def cells(book: str, density: float) -> list[Cell]:
    options = {"split": "dev", DENSITY[book]: density}
    inside = {**options, "min_gap_tokens": INSIDE // 3}  # one reader sees it all: the hops need not be far apart
    oracle = {"split": "dev", "min_gap_tokens": INSIDE // 3, "hops_only": True}  # no distractor: one cell a book
    return [Cell(book, "direct", INSIDE, {}, oracle, label="oracle"),
            Cell(book, "direct", INSIDE, {}, inside, label="whole book"),
            Cell(book, "direct", INSIDE, {}, {**inside, "without_first_hop": True}, label="shortcut"),
            Cell(book, "drag", 8 * WINDOW, {}, options, label="retrieval")]


def report(book: str, density: float, rows, tokenizer, n: int, seed: int) -> None:
    f1 = {label: rows.loc[rows.label == label, "f1"].mul(100).tolist()
          for label in ("oracle", "whole book", "shortcut", "retrieval")}
    line = []
    for label, values in f1.items():
        low, high = bootstrap_interval(values)
        line.append(f"{label} {sum(values) / len(values):.1f} ({low:.0f}-{high:.0f})")
    mean = {k: sum(v) / len(v) for k, v in f1.items()}
    met = (mean["oracle"] >= ORACLE_F1 and mean["shortcut"] <= SHORTCUT_F1
           and mean["retrieval"] <= mean["oracle"] - RETRIEVAL_GAP)
    inside = []
    for x in LENGTHS_X:
        tasks = load_tasks(book, x * WINDOW, n=n, seed=seed, tokenizer=tokenizer, progress=False, split="dev",
                           **{DENSITY[book]: density})
        both = sum(evidence_kept(t.meta, WINDOW - 140, "middle") == 1.0 for t in tasks)
        inside.append(f"{x}x {both}/{len(tasks)}")
    print(f"{book} {DENSITY[book]}={density:g}: " + ", ".join(line) + f"; bar {'met' if met else 'NOT met'}; "
          f"both hops inside Direct Input's window: " + ", ".join(inside))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--book", required=True, choices=sorted(DENSITY))
    parser.add_argument("--densities", type=float, nargs="+", required=True)
    parser.add_argument("--n", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(ROOT / "results" / "dev" / "book_difficulty"))
    args = parser.parse_args()
    densities = [int(d) if DENSITY[args.book] == "distractors" else d for d in args.densities]
    with clients(EngineSettings(context_window=WINDOW)) as (llm, _):
        for density in densities:
            rows = run_cells(cells(args.book, density), llm, args.out, n=args.n, seed=args.seed, window=WINDOW)
            report(args.book, density, rows, llm.tokenizer, args.n, args.seed)


if __name__ == "__main__":
    main()
