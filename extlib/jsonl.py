"""Append-only JSONL files that survive a crash mid-write: the run files and the ∞Bench+ log.

A crash can leave the last line partial. Reading skips such a torn last line (its record counts as not
written); before appending, the tail is repaired: a torn line is cut off, and a complete last record that
only lacks its newline gets one (so it is neither lost nor glued to the next record).

One process writes a file at a time: `open_for_append` holds an exclusive lock on a sidecar `<name>.lock` (the
owner's pid, command and start time) before it touches the file, so it never cuts another writer's half-written
line as a torn tail. The kernel drops the lock when its owner dies, however it dies, so a sidecar left behind by a
killed process does not block anyone.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import IO

from .errors import RunFileBusy, UserError


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
            raise UserError(f"{path}, line {number}: not a JSON row ({exc}); remove or repair that line") from exc
    return records


def open_for_append(path: Path) -> IO[str]:
    """`path` opened for appending records, locked for this process and its tail repaired first (see the module
    docstring); closing it releases the lock. RunFileBusy (and nothing written) while another process has it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock_path = path.with_suffix(".lock")  # never matches the *.jsonl or *.json* globs of the readers
    lock = _lock(path, lock_path)
    try:
        _repair_tail(path)
        return _LockedFile(path, lock, lock_path)
    except BaseException:
        _unlock(lock, lock_path)
        raise


def _repair_tail(path: Path) -> None:
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        last = data[data.rfind(b"\n") + 1:]
        try:
            json.loads(last)
            path.write_bytes(data + b"\n")
        except ValueError:
            path.write_bytes(data[:len(data) - len(last)])


def _lock(path: Path, lock_path: Path) -> int:
    """The descriptor of `lock_path`, exclusively locked and holding our pid, command and start time."""
    while True:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = os.read(fd, 65536).decode("utf-8", errors="replace")
            os.close(fd)
            raise RunFileBusy(_busy_message(path, owner)) from None
        try:
            same = os.fstat(fd).st_ino == os.stat(lock_path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # its owner removed it between our open and our lock: the lock is on a file no one sees
    owner = {"pid": os.getpid(), "command": " ".join(sys.argv),
             "since": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")}
    os.ftruncate(fd, 0)
    os.write(fd, json.dumps(owner).encode("utf-8"))
    return fd


def _busy_message(path: Path, owner_text: str) -> str:
    try:
        owner = json.loads(owner_text)
        who = f"another process (pid {owner['pid']}, `{owner['command']}`, since {owner['since']})"
        stop = f"stop it (kill {owner['pid']})"
    except (ValueError, KeyError, TypeError):  # it has locked the file but not yet written who it is
        who, stop = "another process", "stop it"
    return f"{path} is being written by {who}; wait for it to finish or {stop}, then run again"


def _unlock(lock: int, lock_path: Path) -> None:
    lock_path.unlink(missing_ok=True)  # before the release, so no one can lock a sidecar we then remove
    os.close(lock)


class _LockedFile(io.TextIOWrapper):
    """A text file open for appending whose close also removes the sidecar and releases the lock."""

    def __init__(self, path: Path, lock: int, lock_path: Path) -> None:
        super().__init__(open(path, "ab"), encoding="utf-8")  # noqa: SIM115 (this object is its context manager)
        self._lock = lock
        self._lock_path = lock_path

    def close(self) -> None:
        if self.closed:
            return
        try:
            super().close()
        finally:
            _unlock(self._lock, self._lock_path)


def append(sink: IO[str], record: dict) -> None:
    """One record as one line, flushed at once, so a crash loses at most the record being written."""
    sink.write(json.dumps(record, ensure_ascii=False) + "\n")
    sink.flush()
