"""Write the disjoint development, test and reserve id lists (data/splits/*.json).

The bridge-needed books got theirs before any method was measured on them. The older sets got theirs after their
studies (`hotpotqa` and `hotpotqa-longdoc` share one list, hotpotqa.json: both draw from the same 7,405 HotpotQA dev
questions; zh-longdoc.json for the 200 Chinese questions): every question a committed row, a labelled fixture, a
documented development draw or the committed study's draws looked at is in `dev` (choices were made on it), never
in `test` or `reserve`; no question of a hotpotqa-bridge list is in hotpotqa's `test` or `reserve`, and only
hotpotqa-bridge's `dev` questions are in its `dev`.

Run once and committed; the lists never change afterwards (a test set that prompted a change is replaced by
`reserve`, never redrawn; a rerun must leave every file byte-identical: `git diff --stat data/splits`).
Deterministic: the same lists on any machine with the same repository.

    .venv/bin/python data/make_splits.py
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from extlib.datasets import en_bridge, hotpotqa, zh_bridge, zh_longdoc  # noqa: E402
from extlib.datasets.common import sample  # noqa: E402
from extlib.datasets.splits import FOLDER, SPLITS  # noqa: E402

PER_SPLIT = 200
RESULTS = ROOT / "results"
FIXTURES = (ROOT / "tests" / "data" / "seeker_replies.jsonl",)  # labelled replies, each row with its dataset and id
# The datasets each older list serves (a question seen in one form is seen).
GROUPS = {"hotpotqa": ("hotpotqa", "hotpotqa-longdoc"), "zh-longdoc": ("zh-longdoc",)}
# Draws (n, seed) looked at that no committed row file names (the committed rows' draws are read from their specs):
# seed 1 is the development draw of the beyond-window settings (configs/beyond_window: 30 questions, ExtAgents runs
# in runs/; benchmarks/prefix_reuse.py 30, kar_pipeline.py 10, seek_prompts.py 8, docs/vllm.md 5, engines.py 1);
# seed 0: the datasets notebook's 200-question gold-recall curve (docs/data.md), the infbench-plus check (6), the
# quick and smoke presets and the notebooks' example task (1).
LOOKED_AT = {"hotpotqa": ((200, 0), (6, 0), (1, 0), (30, 1), (10, 1), (8, 1), (5, 1), (1, 1)),
             "zh-longdoc": ((1, 0), (30, 1), (8, 1))}
SEEDS = {"hotpotqa": 4, "zh-longdoc": 5}
LEAST_TEST = 60  # zh-longdoc: test at least this many questions, then test and reserve as equal as possible


def split(ids: list[str], seed: int) -> dict[str, list[str]]:
    """PER_SPLIT ids per split, drawn without replacement, each list in the source's order."""
    picked = random.Random(seed).sample(range(len(ids)), PER_SPLIT * len(SPLITS))
    return {name: [ids[i] for i in sorted(picked[k * PER_SPLIT:(k + 1) * PER_SPLIT])] for k, name in enumerate(SPLITS)}


def rows_of(paths: Iterable[Path]) -> Iterable[dict]:
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                yield json.loads(line)


def dataset_of(row: dict) -> str | None:
    return (row.get("spec") or {}).get("dataset") or (row.get("meta") or {}).get("dataset") or row.get("dataset")


def committed_rows(datasets: tuple[str, ...]) -> list[dict]:
    """Every row of `datasets` drawn from all their questions (no `split` option: a row drawn from a split is in it
    already) in a run file under results/ (any study, any folder)."""
    return [r for r in rows_of(sorted(RESULTS.rglob("*.jsonl")))
            if "id" in r and dataset_of(r) in datasets and split_of(r) is None]


def split_of(row: dict) -> str | None:
    return ((row.get("spec") or {}).get("options") or {}).get("split") or (row.get("meta") or {}).get("split")


def seen(list_name: str, items: list[dict], key: str) -> dict[str, set[str]]:
    """The ids of `list_name`'s questions that were looked at, by where from."""
    datasets = GROUPS[list_name]
    rows = committed_rows(datasets)
    draws = {(r["spec"]["n"], r["spec"]["seed"]) for r in rows if r.get("spec")} | set(LOOKED_AT[list_name])
    known = {str(r[key]) for r in items}
    other_files = [p for p in sorted(RESULTS.rglob("*")) if p.suffix in (".json", ".csv")]
    pattern = re.compile(r"[0-9a-f]{24}" if list_name == "hotpotqa" else r"zh-\d{3}")
    return {
        "committed rows": {r["id"] for r in rows},
        "draws": {str(r[key]) for n, s in sorted(draws) for r in sample(items, n, s, list_name, key=key)},
        "other result files": {m for p in other_files for m in pattern.findall(p.read_text(encoding="utf-8"))} & known,
        "fixtures": {r["id"] for r in rows_of(FIXTURES) if r.get("dataset") in datasets},
    }


def split_after_use(ids: list[str], used: set[str], barred: set[str], seed: int, test: int, reserve: int,
                    more_dev: int) -> dict[str, list[str]]:
    """`used` ids in dev; then, walking one seeded permutation of the rest (ids in `barred` passed over), `test`
    ids to test, `reserve` to reserve and `more_dev` to dev; each list in the source's order."""
    order = random.Random(seed).sample(range(len(ids)), len(ids))
    fresh = [i for i in order if ids[i] not in used and ids[i] not in barred]
    picked = {"test": set(fresh[:test]), "reserve": set(fresh[test:test + reserve]),
              "dev": {i for i, x in enumerate(ids) if x in used} | set(fresh[test + reserve:test + reserve + more_dev])}
    return {name: [ids[i] for i in sorted(picked[name])] for name in SPLITS}


def report(name: str, found: dict[str, set[str]]) -> None:
    every = set().union(*found.values())
    print(f"{name}: {len(every)} seen ids (" + ", ".join(f"{k} {len(v)}" for k, v in found.items()) + ")")


def main() -> None:
    rows, pool = hotpotqa.load_pool()
    bridge = [r["_id"] for r in rows if r.get("type") == "bridge" and len(pool.gold[r["_id"]]) == 2]
    lists = {"zh-bridge": split([q["id"] for q in zh_bridge.questions()], seed=1),
             "hotpotqa-bridge": split(bridge, seed=2),
             "en-bridge": split([q["id"] for q in en_bridge.questions()], seed=3)}

    found = seen("hotpotqa", rows, "_id")
    found["hotpotqa-bridge dev"] = set(lists["hotpotqa-bridge"]["dev"])
    report("hotpotqa", found)
    used = set().union(*found.values())
    bridge_lists = set().union(*lists["hotpotqa-bridge"].values())
    lists["hotpotqa"] = split_after_use([r["_id"] for r in rows], used, bridge_lists, SEEDS["hotpotqa"],
                                        PER_SPLIT, PER_SPLIT, PER_SPLIT)

    questions = zh_longdoc.questions()
    found = seen("zh-longdoc", questions, "id")
    report("zh-longdoc", found)
    used = set().union(*found.values())
    fresh = len(questions) - len(used)
    test = fresh // 2 if fresh >= 2 * LEAST_TEST else min(LEAST_TEST, fresh)
    if fresh < 2 * LEAST_TEST:
        print(f"zh-longdoc: only {fresh} questions unseen, fewer than {2 * LEAST_TEST}: test takes {test} first")
    lists["zh-longdoc"] = split_after_use([q["id"] for q in questions], used, set(), SEEDS["zh-longdoc"], test,
                                          min(test, fresh - test), fresh)

    FOLDER.mkdir(parents=True, exist_ok=True)
    for dataset, splits in lists.items():
        assert not set(splits["dev"]) & set(splits["test"]) and not set(splits["test"]) & set(splits["reserve"]) \
            and not set(splits["dev"]) & set(splits["reserve"])
        path = FOLDER / f"{dataset}.json"
        path.write_text(json.dumps(splits, indent=1) + "\n", encoding="utf-8")
        print(f"{path}: " + ", ".join(f"{k} {len(v)}" for k, v in splits.items()))


if __name__ == "__main__":
    main()
