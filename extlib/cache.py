"""A persistent response cache in SQLite, safe with concurrent writers and after a crash.

WAL journaling lets readers and one writer work at once across processes; every write is its own
committed transaction, so a crash loses at most the call in flight, never the file.

A cache is never worth a failed question: a corrupt file is moved aside (kept for a look, replaced by an empty
cache), and a cache another process keeps locked is skipped for the rest of this process.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import sys
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any


def cache_key(model_id: str, messages: list[dict], params: dict[str, Any]) -> str:
    blob = json.dumps({"model": model_id, "messages": messages, "params": params},
                      sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """Answers by cache_key, shared by every process on the machine. Failures are misses with one warning on stderr:

    - a corrupt file (not a database, or malformed) is renamed to `<name>.corrupt-<UTC time>`, with its -wal and
      -shm files; at start an empty cache takes its place, later on the cache is off for the rest of the process;
    - a cache locked by another process beyond `busy_timeout` seconds is off for the rest of this process, so
      later calls do not each wait the timeout again. It is not moved aside: a live process is using it.
    """

    def __init__(self, path: str | Path, busy_timeout: float = 60.0) -> None:
        self.path = Path(path)
        self.busy_timeout = busy_timeout
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._warned = False
        self._off = False
        try:
            self._create()
        except sqlite3.DatabaseError as exc:
            if not _corrupt(exc):
                self._turn_off(exc)
                return
            moved = self._move_aside()
            try:
                self._create()
            except sqlite3.DatabaseError as again:
                self._turn_off(again)
                return
            print(f"extagents: warning: response cache {self.path} is corrupt ({exc}); moved it to {moved} and "
                  "started an empty one", file=sys.stderr)

    def _create(self) -> None:
        db = self._connect()
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)")

    def _connect(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None)
            db.execute(f"PRAGMA busy_timeout={int(self.busy_timeout * 1000)}")
            db.execute("PRAGMA synchronous=NORMAL")
            self._local.db = db
        return db

    def get(self, key: str) -> dict | None:
        """A broken or locked cache is a miss, never a failed question."""
        if self._off:
            return None
        try:
            row = self._connect().execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
            return json.loads(row[0]) if row else None
        except sqlite3.Error as exc:
            self._fail(exc)
        except ValueError as exc:
            self._warn(exc)
        return None

    def put(self, key: str, value: dict) -> None:
        if self._off:
            return
        try:
            self._connect().execute("INSERT OR REPLACE INTO responses (key, value) VALUES (?, ?)",
                                    (key, json.dumps(value, ensure_ascii=False)))
        except sqlite3.Error as exc:
            self._fail(exc)

    def _fail(self, exc: sqlite3.Error) -> None:
        """Corrupt or locked: off for good (retrying would fail, or wait the busy timeout, on every call)."""
        if _corrupt(exc) or _locked(exc):
            self._turn_off(exc)
        else:
            self._warn(exc)

    def _turn_off(self, exc: sqlite3.Error) -> None:
        if self._off:
            return
        self._off = True
        if _corrupt(exc):
            what = f"is corrupt ({exc}); moved it to {self._move_aside()}"
        elif _locked(exc):
            what = f"is locked by another process for more than {self.busy_timeout:g} s"
        else:
            what = f"is unusable ({exc})"
        print(f"extagents: warning: response cache {self.path} {what}; continuing without it in this process",
              file=sys.stderr)

    def _move_aside(self) -> Path:
        """Rename the database and its -wal and -shm files to `<name>.corrupt-<UTC time>[-wal|-shm]`."""
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):  # absent, or another process moved it first
                self.path.with_name(self.path.name + suffix).rename(target.with_name(target.name + suffix))
        return target

    def _warn(self, exc: Exception) -> None:
        if not self._warned:
            self._warned = True
            print(f"extagents: warning: response cache {self.path} unusable ({exc}); continuing without it",
                  file=sys.stderr)

    def __len__(self) -> int:
        return self._connect().execute("SELECT COUNT(*) FROM responses").fetchone()[0]


def _corrupt(exc: sqlite3.Error) -> bool:
    return "not a database" in str(exc) or "malformed" in str(exc)


def _locked(exc: sqlite3.Error) -> bool:
    return "locked" in str(exc)
