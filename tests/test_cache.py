import json
import multiprocessing as mp
import os
import random
import sqlite3
import time

import pytest

from extlib import ResponseCache
from extlib.cache import cache_key


def _writer(path: str, name: str, n: int) -> None:
    cache = ResponseCache(path)
    for i in range(n):
        cache.put(cache_key("m", [{"role": "user", "content": f"{name}-{i}"}], {}), {"text": f"{name}-{i}"})


def test_two_processes_writing_at_once_lose_nothing(tmp_path):
    path = str(tmp_path / "shared.sqlite")
    ResponseCache(path)
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, name, 300)) for name in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    cache = ResponseCache(path)
    assert len(cache) == 600
    for name in ("a", "b"):
        key = cache_key("m", [{"role": "user", "content": f"{name}-299"}], {})
        assert cache.get(key) == {"text": f"{name}-299"}


def test_cache_survives_a_writer_killed_mid_run(tmp_path):
    path = str(tmp_path / "crash.sqlite")
    ResponseCache(path)
    ctx = mp.get_context("spawn")
    proc = ctx.Process(target=_writer, args=(path, "k", 100_000))
    proc.start()
    deadline = time.monotonic() + 60
    while not os.path.exists(path + "-wal") or len(ResponseCache(path)) < 50:
        assert proc.is_alive() and time.monotonic() < deadline, "the writer died or stalled"
        time.sleep(0.01)
    proc.kill()
    proc.join()
    cache = ResponseCache(path)
    count = len(cache)
    assert count >= 50
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    cache.put("after", {"text": "still writable"})
    assert cache.get("after") == {"text": "still writable"}


def warnings(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if "warning" in line]


def filled_cache(path, rows: int = 500) -> bytes:
    """A cache file of `rows` answers, checkpointed (no -wal left), as bytes to damage."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.executemany("INSERT INTO responses VALUES (?, ?)", [(f"k{i}", json.dumps({"text": "x" * 200}))
                                                          for i in range(rows)])
    db.close()
    return path.read_bytes()


@pytest.mark.parametrize("damage", ["random bytes", "truncated"])
def test_a_corrupt_cache_is_moved_aside_and_replaced_by_an_empty_one(tmp_path, capsys, damage):
    path = tmp_path / "responses.sqlite"
    if damage == "random bytes":
        path.write_bytes(random.Random(0).randbytes(8192))
    else:
        path.write_bytes(filled_cache(path)[:20_000])
    (tmp_path / "responses.sqlite-wal").write_bytes(b"a stale journal")
    damaged = path.read_bytes()
    cache = ResponseCache(path)
    assert cache.get("k1") is None
    cache.put("k1", {"text": "fresh"})
    assert cache.get("k1") == {"text": "fresh"} and len(cache) == 1
    moved = sorted(tmp_path.glob("responses.sqlite.corrupt-*"))  # the database first, then its -shm and -wal
    assert {p.name.removeprefix(moved[0].name) for p in moved} <= {"", "-shm", "-wal"}
    assert moved[0].read_bytes() == damaged
    assert moved[-1].read_bytes() == b"a stale journal"
    [warning] = warnings(capsys)
    assert f"{path} is corrupt" in warning and str(moved[0]) in warning


def test_a_cache_locked_by_another_process_is_a_miss_and_then_off_and_left_in_place(tmp_path, capsys):
    path = tmp_path / "responses.sqlite"
    filled_cache(path, rows=1)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")  # in WAL mode, only an exclusive locking mode keeps readers out
    cache = ResponseCache(path, busy_timeout=0.05)
    assert cache.get("k0") is None
    cache.put("k1", {"text": "lost"})
    holder.execute("ROLLBACK")
    holder.close()
    assert cache.get("k0") is None  # off for the rest of this process: no more waits on the lock
    [warning] = warnings(capsys)
    assert f"{path} is locked by another process" in warning
    assert sorted(p.name for p in tmp_path.iterdir() if "corrupt" in p.name) == []
    assert ResponseCache(path).get("k0") == {"text": "x" * 200}


def test_corruption_found_after_the_start_is_a_miss_with_one_warning(tmp_path, capsys):
    """Pages past the first one damaged: opening reads only the header and schema, the first lookup finds it."""
    path = tmp_path / "responses.sqlite"
    data = filled_cache(path)
    path.write_bytes(data[:4096] + random.Random(0).randbytes(len(data) - 4096))
    cache = ResponseCache(path)
    assert warnings(capsys) == []
    assert cache.get("k5") is None
    cache.put("k", {"text": "w"})
    assert cache.get("k") is None
    [warning] = warnings(capsys)
    assert "is corrupt (database disk image is malformed)" in warning
    assert len(list(tmp_path.glob("responses.sqlite.corrupt-*"))) == 1
    assert ResponseCache(path).get("k5") is None and warnings(capsys) == []  # the next run starts a fresh cache
