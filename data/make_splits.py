"""Write the disjoint development, test and reserve id lists of the bridge-needed books (data/splits/*.json).

Run once, before any method is measured on these books, and committed; the lists never change afterwards (a test set
that prompted a change is replaced by `reserve`, never redrawn). Deterministic: the same lists on any machine.

    .venv/bin/python data/make_splits.py
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from extlib.datasets import en_bridge, hotpotqa, zh_bridge  # noqa: E402
from extlib.datasets.splits import FOLDER, SPLITS  # noqa: E402

PER_SPLIT = 200


def split(ids: list[str], seed: int) -> dict[str, list[str]]:
    """PER_SPLIT ids per split, drawn without replacement, each list in the source's order."""
    picked = random.Random(seed).sample(range(len(ids)), PER_SPLIT * len(SPLITS))
    return {name: [ids[i] for i in sorted(picked[k * PER_SPLIT:(k + 1) * PER_SPLIT])] for k, name in enumerate(SPLITS)}


def main() -> None:
    rows, pool = hotpotqa.load_pool()
    bridge = [r["_id"] for r in rows if r.get("type") == "bridge" and len(pool.gold[r["_id"]]) == 2]
    lists = {"zh-bridge": split([q["id"] for q in zh_bridge.questions()], seed=1),
             "hotpotqa-bridge": split(bridge, seed=2),
             "en-bridge": split([q["id"] for q in en_bridge.questions()], seed=3)}
    FOLDER.mkdir(parents=True, exist_ok=True)
    for dataset, splits in lists.items():
        assert not set(splits["dev"]) & set(splits["test"]) and not set(splits["test"]) & set(splits["reserve"])
        path = FOLDER / f"{dataset}.json"
        path.write_text(json.dumps(splits, indent=1) + "\n", encoding="utf-8")
        print(f"{path}: " + ", ".join(f"{k} {len(v)}" for k, v in splits.items()))


if __name__ == "__main__":
    main()
