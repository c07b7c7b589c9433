"""Disjoint development, test and reserve questions of the books built to need the bridge, as id lists committed in
data/splits/<dataset>.json (written once by data/make_splits.py). Every choice (prompts, thresholds, densities) is
made on `dev`; a frozen version is measured once on `test`; `reserve` replaces `test` if a change is ever prompted
by a failure seen on it."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from ..errors import UserError

SPLITS = ("dev", "test", "reserve")
FOLDER = Path(__file__).resolve().parents[2] / "data" / "splits"


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
    return _lists(dataset)[split]
