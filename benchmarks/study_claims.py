"""The numbers behind results/cpu/README.md's account of the first CPU study that are not plain F1 means of a figure:
where the gold evidence sits relative to what Direct Input keeps, how often ExtAgents reads the knowledge, and
which ExtAgents version answered the committed rows. Each section is labelled with the paragraph (and
docs/methods.md sentence) whose numbers it prints, so a reader can check each sentence against the rows rather
than trust a figure's reading, and a sentence can be kept right when the rows change.

    .venv/bin/python benchmarks/study_claims.py

It reads only the committed rows under results/cpu/ and calls no model. Rows are those the figures are
drawn from (`extlib.runfile.load_rows(..., newest=True)`: each question's latest row of its file's newest method
version); questions are matched by id, never by position. Evidence counts use `extlib.chunking.evidence_kept`, the
rule of the scaling figure's bar: Direct Input keeps `window - 140` tokens of the knowledge, the first ones (`front`,
HotpotQA in retrieval order) or the first and last halves (`middle`, the books), and a gold paragraph is inside when
its first token is.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.test_targets import in_test_study  # noqa: E402
from extlib.chunking import evidence_kept  # noqa: E402
from extlib.datasets import truncation  # noqa: E402
from extlib.methods.extagents import ExtAgents  # noqa: E402
from extlib.runfile import RunFile, load_rows, row_version, run_files  # noqa: E402
from extlib.tables import bootstrap_interval, paired_by_question  # noqa: E402

CPU = ROOT / "results" / "cpu"
PROMPT_PRICE, COMPLETION_PRICE = 0.15, 0.60  # dollars per 1M tokens, gpt-4o-mini (the cost notebook's)
METHOD_NAMES = {"direct": "Direct Input", "extagents": "ExtAgents", "chain-of-agents": "Chain of Agents",
                "mapreduce": "LLMxMapReduce", "drag": "DRAG"}


def rows_of(study: str, test: bool = False) -> pd.DataFrame:
    """The current rows of one study, with the knowledge length as a multiple of the window: the first study's, or
    with `test` the test study's (a split's test ids, or the BABILong-style set; test_targets.py reads targets)."""
    rows = load_rows(run_files([CPU / study]), newest=True)
    rows = rows[rows.apply(in_test_study, axis=1) == test]
    return rows.assign(x=rows["input_tokens"] // rows["window"])


def keep_of(row: pd.Series) -> int:
    """The knowledge tokens Direct Input keeps (the figures' rule: the window less its prompt and answer)."""
    return int(row["spec"]["context_window"]) - 140


def hops_inside(row: pd.Series) -> int:
    """How many of a question's gold paragraphs Direct Input's truncation keeps."""
    return round(evidence_kept(row["meta"], keep_of(row), truncation(row["dataset"])) * len(row["meta"]["gold"]))


def f1_with_interval(rows: pd.DataFrame) -> str:
    low, high = bootstrap_interval(rows["f1"].tolist())
    return f"{100 * rows['f1'].mean():4.1f} [{100 * low:.1f}-{100 * high:.1f}]"


def minus_direct(rows: pd.DataFrame, method: str) -> dict[str, str]:
    """Per placement, a method's F1 minus Direct Input's over the questions both answered (matched by id), with the
    95% bootstrap interval and wins/ties/losses: `extlib.tables.paired_by_question`, the notebooks' paired tables."""
    paired = paired_by_question(rows[rows["method"].isin([method, "direct"])], ["placement"], "method", method)
    return {r.placement: f"{100 * r.difference:+.1f} [{100 * r.low:+.0f} to {100 * r.high:+.0f}] "
                         f"({r.wins}/{r.ties}/{r.losses})" for r in paired.itertuples()}


def placement_label(options: dict) -> str:
    return (f"first hop at {options['position']:.0%}, distance {options['distance']:.0%}, "
            f"{options.get('order', 'forward')}")


def sweep_of(options: dict, placements: list[dict]) -> str:
    """Which sweep a placement belongs to: the order pair (two placements differing only in the order), the depth
    sweep (forward placements at one distance, the first hop moving) or the distance sweep (forward placements
    with the first hop at one position, the distance changing)."""
    position, distance = options["position"], options["distance"]
    forward = [p for p in placements if p.get("order", "forward") == "forward" and p != options]
    if any(p.get("order", "forward") != options.get("order", "forward") and (p["position"], p["distance"])
           == (position, distance) for p in placements):
        return "order"
    if any(p["distance"] == distance and p["position"] != position for p in forward):
        return "depth"
    if any(p["position"] == position and p["distance"] != distance for p in forward):
        return "distance"
    return "alone"


def readings_of(calls: list[dict]) -> float:
    """How many times a question's seekers read the knowledge: seeking calls over chunks (round 1 reads each once)."""
    seeks = [c for c in calls if c["role"] == "seek"]
    return len(seeks) / len({c["chunk"] for c in seeks if c["round"] == 1})


def hops_kept(row: pd.Series) -> tuple[bool, bool]:
    """Whether Direct Input keeps the earlier and the later (in the text) of a question's two hops."""
    gold = sorted(row["meta"]["gold"], key=lambda g: float("inf") if g["token_offset"] is None else g["token_offset"])
    return tuple(evidence_kept({**row["meta"], "gold": [g]}, keep_of(row), truncation(row["dataset"])) == 1
                 for g in (gold[0], gold[-1]))


def robustness(test: bool) -> None:
    """(a) 05_robustness, the first study's or the test study's: per placement, Direct Input's F1 and how many
    questions have 2, 1 or 0 hops inside what middle truncation keeps (and which: the earlier or the later in the
    text), and the other methods' F1 and their paired difference from Direct Input's."""
    rows = rows_of("05_robustness", test)
    options = {placement_label(s["options"]): s["options"] for s in rows["spec"]}
    rows["placement"] = rows["spec"].map(lambda s: placement_label(s["options"]))
    sweep = {label: sweep_of(o, list(options.values())) for label, o in options.items()}
    others = {method: minus_direct(rows, method) for method in sorted(set(rows["method"]) - {"direct"})}
    study = "the test study, hotpotqa-longdoc:test" if test else "the first study, hotpotqa-longdoc"
    print(f"== results/cpu/README.md 'Robustness' (05_robustness, {study} at 4x, middle truncation) ==")
    first = rows.iloc[0]
    keep, total = keep_of(first), first["meta"]["input_tokens"]
    print(f"Direct Input keeps {keep} of {total} tokens: tokens 0-{keep // 2 - 1} and "
          f"{total - (keep - keep // 2)}-{total - 1} (window {first['spec']['context_window']} - 140)")
    order = sorted(options, key=lambda p: (sweep[p], options[p]["position"], options[p]["distance"],
                                           options[p].get("order", "forward")))
    for placement in order:
        cell = rows[rows["placement"] == placement]
        direct = cell[cell["method"] == "direct"]
        counts = Counter(hops_inside(r) for _, r in direct.iterrows())
        kept = [hops_kept(r) for _, r in direct.iterrows()]
        ids = [set(cell.loc[cell["method"] == m, "id"]) for m in METHOD_NAMES if (cell["method"] == m).any()]
        same = "the same ids for every method" if all(i == ids[0] for i in ids) else "ids DIFFER between methods"
        offsets = sorted(g["token_offset"] for g in direct.iloc[0]["meta"]["gold"])
        print(f"  [{sweep[placement]}] {placement}: {len(direct)} questions ({same}); first question's hops at "
              f"tokens {offsets}")
        print(f"    Direct Input F1 {f1_with_interval(direct)}; questions with both hops inside {counts[2]}, one "
              f"{counts[1]}, none {counts[0]} (earlier hop inside {sum(k[0] for k in kept)}, later hop inside "
              f"{sum(k[1] for k in kept)})")
        for method, difference in others.items():
            print(f"    {METHOD_NAMES[method]} F1 {f1_with_interval(cell[cell['method'] == method])}; minus Direct "
                  f"Input on the same questions {difference[placement]}")
    direct = rows[rows["method"] == "direct"]
    nothing = [p for p in order if (direct.loc[direct["placement"] == p].apply(hops_inside, axis=1) == 0).all()]
    answers = [dict(zip(direct.loc[direct["placement"] == p, "id"], direct.loc[direct["placement"] == p, "answer"]))
               for p in nothing]
    print(f"  Direct Input with no hop inside ({'; '.join(nothing)}): the same answer to every question in all of "
          f"them: {all(a == answers[0] for a in answers)}")
    print()


def readings() -> None:
    """(b) 01_scaling ExtAgents: how often a second round ran, and how many times the seekers read the knowledge
    (seeking calls over chunks), with LLMxMapReduce's prompt tokens beside ExtAgents'; then the cost paragraph's
    means over the three datasets."""
    rows = rows_of("01_scaling")
    print("== results/cpu/README.md 'Cost' (01_scaling: ExtAgents' rounds and readings of the knowledge) ==")
    for (dataset, x), cell in rows[rows["method"] == "extagents"].groupby(["dataset", "x"]):
        second = int((cell["rounds"] >= 2).sum())
        mapreduce = rows[(rows["method"] == "mapreduce") & (rows["dataset"] == dataset) & (rows["x"] == x)]
        print(f"  {dataset} {x}x: second round in {second} of {len(cell)}; knowledge read "
              f"{cell['calls'].map(readings_of).mean():.2f} times a question; prompt tokens ExtAgents "
              f"{cell['usage'].map(lambda u: u['prompt_tokens']).mean():,.0f}, LLMxMapReduce "
              f"{mapreduce['usage'].map(lambda u: u['prompt_tokens']).mean():,.0f}")
    print("  means per question over the three datasets (the cost figure):")
    usage = pd.DataFrame(list(rows["usage"]))[["calls", "prompt_tokens", "completion_tokens"]]
    usage["dollars"] = (usage["prompt_tokens"] * PROMPT_PRICE + usage["completion_tokens"] * COMPLETION_PRICE) / 1e6
    table = pd.concat([rows[["method", "x"]], usage], axis=1).groupby(["method", "x"]).mean()
    for (method, x), r in table.iterrows():
        print(f"    {METHOD_NAMES[method]} {x}x: {r['prompt_tokens']:,.0f} prompt tokens, {r['calls']:.1f} calls, "
              f"{r['completion_tokens']:,.0f} completion tokens, ${r['dollars']:.5f}")
    print()


def scaling() -> None:
    """(c) 01_scaling: the gold paragraphs inside Direct Input's kept window on HotpotQA (retrieval order, front
    truncation), and every method's F1 per dataset and length for the scaling paragraph."""
    rows = rows_of("01_scaling")
    print("== results/cpu/README.md and README 'Scaling' (01_scaling) ==")
    direct = rows[(rows["method"] == "direct") & (rows["dataset"] == "hotpotqa")]
    for x, cell in direct.groupby("x"):
        inside = cell.apply(hops_inside, axis=1)
        gold = cell["meta"].map(lambda m: len(m["gold"]))
        print(f"  hotpotqa {x}x ({truncation('hotpotqa')} truncation, keep {keep_of(cell.iloc[0])}): "
              f"{inside.sum()} of {gold.sum()} gold paragraphs inside ({100 * inside.sum() / gold.sum():.0f}%); "
              f"all gold inside for {int((inside == gold).sum())} of {len(cell)} questions")
    print("  F1 [95% interval] per dataset, method and length:")
    for (dataset, method), cell in rows.groupby(["dataset", "method"]):
        print(f"    {dataset} {METHOD_NAMES[method]}: "
              + ", ".join(f"{x}x {f1_with_interval(c)}" for x, c in cell.groupby("x")))
    print()


def versions() -> None:
    """(d) The ExtAgents version of the committed rows (every stored row, and the current ones) and the code's."""
    print("== results/cpu/beyond_window/README.md 'Why' bullet and docs/methods.md (ExtAgents versions) ==")
    print(f"  code: extlib/methods/extagents.py ExtAgents.version = {ExtAgents.version}")
    for study in ("01_scaling", "02_ablation", "05_robustness"):
        stored = Counter(row_version(row) for path in run_files([CPU / study])
                         for row in RunFile(path).rows() if row["spec"]["method"] == "extagents")
        current = load_rows(run_files([CPU / study]), include_stale=True)
        current = current[current["method"] == "extagents"]
        print(f"  {study}: stored ExtAgents rows by version {dict(sorted(stored.items()))}; each question's row read "
              f"(latest of the code's version) {dict(sorted(Counter(current['method_version']).items()))}")
    print()


if __name__ == "__main__":
    robustness(test=False)
    robustness(test=True)
    readings()
    scaling()
    versions()
