"""What every dataset loader shares: input checks with row-level messages, seeded sampling, cache paths."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import UserError
from ..words import CJK
from .sources import data_dir


class DataError(UserError):
    """A dataset file that cannot be used as is; the message names the row and the fix. (A ValueError too, through
    UserError, for callers that catch that.)"""


def json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, record) for each non-blank line of a JSONL file; a line that is not JSON, or text that is not
    UTF-8, is an error naming the file (and the line)."""
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    yield number, json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DataError(f"{path}, line {number}: not valid JSON ({exc.msg})") from exc
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: cannot read it as UTF-8 text: {exc}") from None


def cache_path(dataset: str, name: str) -> Path:
    folder = data_dir() / "cache" / dataset
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


def cached_array(path: Path, compute: Callable[[], np.ndarray]) -> np.ndarray:
    """Load `path`, or compute and save it atomically (an interrupted run leaves no half-written file)."""
    if path.exists():
        return np.load(path)
    array = compute()
    tmp = path.with_name(path.name + ".tmp.npy")
    np.save(tmp, array)
    tmp.replace(path)
    return array


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)[-80:]


def check_rows(rows: list[dict], where: str, lang: str, places: list[str] | None = None) -> None:
    """Every row has a non-empty id, question, answers and context; ids are unique; the language fits. `places`
    name the rows in messages as the file counts them ("line 7"); row numbers by default."""
    places = places or [f"row {i + 1}" for i in range(len(rows))]
    seen: dict[str, str] = {}
    for row, place in zip(rows, places):
        at = f"{where}, {place}"
        for key in ("id", "question", "answers", "context"):
            if key not in row or row[key] in (None, "", []):
                raise DataError(f"{at}: missing or empty field {key!r}")
        if not all(isinstance(a, str) and a.strip() for a in row["answers"]):
            raise DataError(f"{at} (id {row['id']}): an empty or non-text gold answer in {row['answers']!r}")
        if row["id"] in seen:
            raise DataError(f"{at}: duplicate id {row['id']!r} (first at {seen[row['id']]})")
        seen[row["id"]] = place
        sample = row["context"][:20_000]
        cjk_share = len(CJK.findall(sample)) / max(len(sample), 1)
        if (lang == "zh") != (cjk_share > 0.2):
            raise DataError(f"{at} (id {row['id']}): expected a {'Chinese' if lang == 'zh' else 'English'} "
                            f"context but {cjk_share:.0%} of its first characters are Chinese; wrong file?")


def sample(items: list[dict], n: int | None, seed: int, what: str, ids: list[str] | None = None,
           key: str = "id") -> list[dict]:
    """n rows drawn with `seed` (all when n is None), kept in file order; `ids` first restricts the rows
    (for example to the ids an ∞Bench+ filter kept)."""
    if ids is not None:
        wanted = {str(i) for i in ids}
        unknown = wanted - {str(row[key]) for row in items}
        if unknown:
            raise UserError(f"{len(unknown)} requested id(s) are not in {what}, e.g. {sorted(unknown)[:3]}")
        items = [row for row in items if str(row[key]) in wanted]
    if n is None:
        return list(items)
    if n > len(items):
        raise UserError(f"n={n} but {what} has only {len(items)} questions")
    picked = sorted(random.Random(seed).sample(range(len(items)), n))
    return [items[i] for i in picked]
