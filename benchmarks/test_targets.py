"""Issue 42's targets, read from the committed test study (results/cpu/01_scaling and 02_ablation, the `:test`
panels and the held-out BABILong-style set): each target as the paired mean difference over the questions both
sides answered, with its 95% bootstrap interval, wins/ties/losses and whether it is met; the share of questions
with a second round (one starts only when the round before found no answer); and the
computed prompt tokens per question against LLMxMapReduce's on the same cells (the paper's Table 8); and the minutes
each question took across the cells (the rows' summed seconds; the sittings in results/cpu/README.md). Reads run
files only (no model call); a target whose rows are not there yet says so.

    .venv/bin/python benchmarks/test_targets.py

Rows are those the figures are drawn from (each question's latest row of its file's newest method version), and
only those of the code's method versions count: a test row of another version would be a different method.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from extlib.datasets.splits import drawn_from  # noqa: E402
from extlib.methods import METHODS  # noqa: E402
from extlib.methods.extagents import ablation_variant  # noqa: E402
from extlib.runfile import load_rows, run_files  # noqa: E402
from extlib.tables import bootstrap_interval  # noqa: E402

CPU = ROOT / "results" / "cpu"
BRIDGE = ["en-bridge", "zh-bridge", "babilong"]
NAMES = {"extagents": "ExtAgents", "direct": "Direct Input", "mapreduce": "LLMxMapReduce", "drag": "DRAG",
         "no GKS": "no GKS", "no KAR": "no KAR"}


@dataclass
class Target:
    study: str  # 01_scaling or 02_ablation
    dataset: str
    x: int
    other: str  # a method (scaling) or an ablation variant
    at_least: float  # the paired mean difference ExtAgents (full) - other must reach, in F1 points
    low_above: float | None = None  # ... and its interval's low end must lie above this

    def label(self) -> str:
        low = f", low end > {self.low_above:+g}" if self.low_above is not None else ""
        return (f"{self.dataset} {self.x}x: {'full' if self.study == '02_ablation' else 'ExtAgents'} - "
                f"{NAMES[self.other]} >= {self.at_least:+g}{low}")


TARGETS = (
    [Target("01_scaling", d, 1, "direct", -5) for d in ["hotpotqa", "hotpotqa-longdoc", "zh-longdoc"]]
    + [t for d in BRIDGE for t in (Target("01_scaling", d, 8, "direct", 25, 10), Target("01_scaling", d, 8,
                                                                                           "mapreduce", 10),
                                   Target("01_scaling", d, 8, "drag", 0))]
    + [t for d in ["en-bridge", "zh-bridge"] for x in (4, 8)
       for t in (Target("02_ablation", d, x, "no GKS", 10, 0), Target("02_ablation", d, x, "no KAR", 0))]
    + [Target("01_scaling", "hotpotqa", x, "direct", 0) for x in (2, 4, 8)]
)


def in_test_study(row: pd.Series) -> bool:
    """A row of the test study: a `:test` panel's (loader option split=test) or the held-out BABILong-style set's.
    The first study's rows have neither."""
    return drawn_from(row["dataset"], row["spec"].get("options", {})) == "test"


def test_rows(study: str) -> pd.DataFrame:
    """The study's test rows of the code's method versions: the `:test` panels' (loader option split=test) and the
    BABILong-style set's (every id a test id), labelled by method or, in the ablation, by variant."""
    folder = CPU / study
    if not folder.exists():
        return pd.DataFrame()
    rows = load_rows(run_files([folder]), newest=True)
    if rows.empty:
        return rows
    current = rows["method"].map(lambda m: METHODS[m][0].version)
    rows = rows[rows.apply(in_test_study, axis=1) & (rows["method_version"] == current)]
    variant = rows["spec"].map(lambda s: ablation_variant(s.get("knobs", {})))
    return rows.assign(x=rows["input_tokens"] // rows["window"],
                       label=variant if study == "02_ablation" else rows["method"])


def cell(rows: pd.DataFrame, dataset: str, x: int, label: str) -> pd.DataFrame:
    if rows.empty:
        return rows
    return rows[(rows["dataset"] == dataset) & (rows["x"] == x) & (rows["label"] == label)].set_index("id")


def both(rows: pd.DataFrame, dataset: str, x: int, mine: str, theirs: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two cells' rows on the questions both answered, in the same order (empty when either has none)."""
    a, b = cell(rows, dataset, x, mine), cell(rows, dataset, x, theirs)
    shared = a.index.intersection(b.index) if len(a) and len(b) else []
    return a.loc[shared], b.loc[shared]


def paired(rows: pd.DataFrame, target: Target) -> str:
    mine, theirs = both(rows, target.dataset, target.x, "full" if target.study == "02_ablation" else "extagents",
                        target.other)
    if mine.empty:
        return f"{target.label():62s} no rows yet"
    diffs = (100 * (mine["f1"] - theirs["f1"])).tolist()
    mean, (low, high) = sum(diffs) / len(diffs), bootstrap_interval(diffs)
    met = mean >= target.at_least and (target.low_above is None or low > target.low_above)
    wins, losses = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
    return (f"{target.label():62s} {mean:+6.1f} ({low:+.0f} to {high:+.0f}; {wins}/{len(diffs) - wins - losses}/"
            f"{losses}) over {len(diffs)} questions: {'met' if met else 'NOT met'}")


def computed(usage: dict) -> int:
    return usage["prompt_tokens"] - usage.get("cached_tokens", 0)


def second_rounds(rows: pd.DataFrame) -> list[str]:
    """Per ExtAgents cell, the questions with a second round. A round t+1 starts only when round t's reasoning
    gave no accepted answer (`ExtAgents.arun`: it returns at the first answer), so a second round is never forced."""
    own = rows[rows["label"].isin(["extagents", "full"])] if len(rows) else rows
    return [f"{dataset} {x}x: a second round in {(part['rounds'] > 1).sum()}/{len(part)} questions"
            for (dataset, x), part in (own.groupby(["dataset", "x"]) if len(own) else [])]


def minutes_per_question(rows: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per question number k (the k-th row of every run file, the order the study answers them in), the minutes its
    rows took in each study (summed seconds) and how many cells have answered it."""
    parts = []
    for study, part in rows.items():
        if part.empty:
            continue
        numbered = part.assign(question=part.groupby("file").cumcount() + 1).groupby("question")
        parts.append(pd.DataFrame({f"{study} min": (numbered["seconds"].sum() / 60).round(1),
                                   f"{study} cells": numbered["file"].nunique()}))
    if not parts:
        return pd.DataFrame()
    table = pd.concat(parts, axis=1).fillna(0)
    cells = table.filter(like=" cells").columns
    table[cells] = table[cells].astype(int)
    return table.assign(total=table.filter(like=" min").sum(axis=1).round(0).astype(int))


def main() -> None:
    rows = {study: test_rows(study) for study in ("01_scaling", "02_ablation")}
    print("Targets (paired mean difference in F1 points, 95% bootstrap interval; wins/ties/losses)")
    for target in TARGETS:
        print("  " + paired(rows[target.study], target))
    print("\nSecond rounds (ExtAgents in the scaling study, the full variant in the ablation)")
    for study, part in rows.items():
        for line in second_rounds(part):
            print(f"  {study}: {line}")
    print("\nComputed prompt tokens per question (prompt tokens less those the server's prompt cache held), 8x")
    scaling = rows["01_scaling"]
    for dataset in ["hotpotqa", *BRIDGE]:
        mine, theirs = both(scaling, dataset, 8, "extagents", "mapreduce")
        if mine.empty:
            print(f"  {dataset:10s} no rows yet")
            continue
        a, b = mine["usage"].map(computed).mean(), theirs["usage"].map(computed).mean()
        print(f"  {dataset:10s} ExtAgents {a:8,.0f}  LLMxMapReduce {b:8,.0f}  over {len(mine)} questions: "
              f"{'met' if a <= b else 'NOT met'}")
    print("\nMinutes per question across the cells (summed seconds of its rows) and cells that answered it")
    print(minutes_per_question(rows).to_string())


if __name__ == "__main__":
    main()
