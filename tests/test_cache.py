import multiprocessing as mp
import os
import sqlite3
import time

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
