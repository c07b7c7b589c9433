"""A persistent response cache in SQLite, safe with concurrent writers and after a crash.

WAL journaling lets readers and one writer work at once across processes; every write is its own
committed transaction, so a crash loses at most the call in flight, never the file.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any


def cache_key(model_id: str, messages: list[dict], params: dict[str, Any]) -> str:
    blob = json.dumps({"model": model_id, "messages": messages, "params": params},
                      sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._warned = False
        with self._connect() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)")

    def _connect(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            db.execute("PRAGMA busy_timeout=60000")
            db.execute("PRAGMA synchronous=NORMAL")
            self._local.db = db
        return db

    def get(self, key: str) -> dict | None:
        """A broken or locked cache is a miss, never a failed question."""
        try:
            row = self._connect().execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
            return json.loads(row[0]) if row else None
        except (sqlite3.Error, ValueError) as exc:
            self._warn(exc)
            return None

    def put(self, key: str, value: dict) -> None:
        try:
            self._connect().execute("INSERT OR REPLACE INTO responses (key, value) VALUES (?, ?)",
                                    (key, json.dumps(value, ensure_ascii=False)))
        except sqlite3.Error as exc:
            self._warn(exc)

    def _warn(self, exc: Exception) -> None:
        if not self._warned:
            self._warned = True
            print(f"extagents: warning: response cache {self.path} unusable ({exc}); continuing without it",
                  file=sys.stderr)

    def __len__(self) -> int:
        return self._connect().execute("SELECT COUNT(*) FROM responses").fetchone()[0]
