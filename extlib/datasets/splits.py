"""Disjoint development, test and reserve questions, as id lists committed in data/splits/<list>.json (written once by
data/make_splits.py): the books built to need the bridge (their own lists) and the older sets, `hotpotqa` and
`hotpotqa-longdoc` (one list of HotpotQA question ids, `hotpotqa.json`, as both draw from the same questions) and
`zh-longdoc`. Every choice (prompts, thresholds, densities) is made on `dev`; a frozen version is measured once on
`test`; `reserve` replaces `test` if a change is ever prompted by a failure seen on it."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from ..errors import UserError

SPLITS = ("dev", "test", "reserve")
FOLDER = Path(__file__).resolve().parents[2] / "data" / "splits"
LISTS = {"hotpotqa-longdoc": "hotpotqa"}  # a dataset that reads another's lists (the same questions in another form)
HELD_OUT = ("babilong",)  # kept out of development entirely: every id is a test id, so it has no lists


@cache
def _lists(dataset: str) -> dict[str, list[str]]:
    path = FOLDER / f"{dataset}.json"
    if not path.is_file():
        raise UserError(f"no id lists for {dataset} at {path}; data/make_splits.py writes them")
    return json.loads(path.read_text(encoding="utf-8"))


def split_ids(dataset: str, split: str) -> list[str]:
    """The ids of `split` (dev, test or reserve) of `dataset`."""
    if split not in SPLITS:
        raise UserError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
    return _lists(LISTS.get(dataset, dataset))[split]


def in_split(rows: list[dict], dataset: str, split: str | None, key: str = "id") -> list[dict]:
    """The rows of `split` of `dataset`, in their order; all of them when split is None (the datasets whose lists
    came after their first studies keep drawing from every question by default)."""
    if split is None:
        return rows
    if split not in SPLITS:
        raise UserError(f"split must be one of {', '.join(SPLITS)} or None (every question), got {split!r}")
    wanted = set(split_ids(dataset, split))
    return [row for row in rows if row[key] in wanted]


def drawn_from(dataset: str, options: dict) -> str:
    """The id list a row's question was drawn from: its loader's `split` option (dev, test, reserve), `test` for a
    held-out set, "" for a draw from every question (the studies made before the lists)."""
    return "test" if dataset in HELD_OUT else options.get("split") or ""
