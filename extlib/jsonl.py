"""Append-only JSONL files that survive a crash mid-write: the run files and the ∞Bench+ log.

A crash can leave the last line partial. Reading skips such a torn last line (its record counts as not
written); before appending, the tail is repaired: a torn line is cut off, and a complete last record that
only lacks its newline gets one (so it is neither lost nor glued to the next record).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO


def read_jsonl(path: Path) -> list[dict]:
    """The records of `path` in order ([] if it does not exist). A broken line other than a torn last
    one is an error that names it."""
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            if number == len(lines) and not text.endswith("\n"):
                break  # torn by a crash mid-write
            raise ValueError(f"{path}, line {number}: not a JSON row ({exc}); remove or repair that line") from exc
    return records


def open_for_append(path: Path) -> IO[str]:
    """`path` opened for appending records, its tail repaired first (see the module docstring)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            last = data[data.rfind(b"\n") + 1:]
            try:
                json.loads(last)
                path.write_bytes(data + b"\n")
            except ValueError:
                path.write_bytes(data[:len(data) - len(last)])
    return open(path, "a", encoding="utf-8")


def append(sink: IO[str], record: dict) -> None:
    """One record as one line, flushed at once, so a crash loses at most the record being written."""
    sink.write(json.dumps(record, ensure_ascii=False) + "\n")
    sink.flush()
