"""Run files: one writer at a time, across processes, and a dead writer's lock never blocks the next one."""

import json
import subprocess
import sys

import pytest

from extlib import jsonl
from extlib.errors import RunFileBusy
from extlib.jsonl import append, open_for_append, read_jsonl

WRITER = """
import sys, time
from pathlib import Path
from extlib.jsonl import append, open_for_append
with open_for_append(Path(sys.argv[1])) as sink:
    append(sink, {"writer": "child"})
    sink.write('{"writer": "chi')  # the next row, half written
    sink.flush()
    print("ready", flush=True)
    time.sleep(600)
"""


def test_a_file_another_process_writes_is_refused_untouched_and_free_once_it_dies(tmp_path):
    path = tmp_path / "direct__run.jsonl"
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        before = path.read_bytes()
        with pytest.raises(RunFileBusy) as busy:
            open_for_append(path)
        message = str(busy.value)
        assert str(path) in message and f"pid {child.pid}," in message and "since" in message
        assert "wait for it" in message and f"kill {child.pid}" in message
        assert path.read_bytes() == before  # its half-written line was not cut as a torn tail
        assert read_jsonl(path) == [{"writer": "child"}]
    finally:
        child.kill()  # SIGKILL: no cleanup runs, its sidecar stays
        child.wait()
    assert json.loads(path.with_suffix(".lock").read_text())["pid"] == child.pid
    with open_for_append(path) as sink:
        assert json.loads(path.with_suffix(".lock").read_text())["pid"] != child.pid
        append(sink, {"writer": "test"})
    assert read_jsonl(path) == [{"writer": "child"}, {"writer": "test"}]
    assert not path.with_suffix(".lock").exists()


def test_the_sidecar_is_locked_again_when_its_owner_removes_it_before_our_lock(tmp_path, monkeypatch):
    """The previous owner closing between our open and our flock: a lock on its removed file would guard nothing."""
    path = tmp_path / "run.jsonl"
    lock_path = path.with_suffix(".lock")
    real_flock = jsonl.fcntl.flock
    calls = []

    def owner_closes_first(fd, operation):
        calls.append(fd)
        if len(calls) == 1:
            lock_path.unlink()
        real_flock(fd, operation)

    monkeypatch.setattr(jsonl.fcntl, "flock", owner_closes_first)
    with open_for_append(path) as sink:
        assert len(calls) == 2
        assert json.loads(lock_path.read_text())["pid"] > 0  # the sidecar others see is the one we hold
        with pytest.raises(RunFileBusy):
            open_for_append(path)  # and it excludes a second writer, even in this process
        append(sink, {"a": 1})
    assert read_jsonl(path) == [{"a": 1}] and not lock_path.exists()


def test_a_torn_tail_is_still_repaired_and_the_lock_released_on_close(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text('{"a": 1}\n{"a": ')
    with open_for_append(path) as sink:
        append(sink, {"a": 2})
    assert read_jsonl(path) == [{"a": 1}, {"a": 2}]
    with open_for_append(path) as sink:
        append(sink, {"a": 3})
    assert read_jsonl(path) == [{"a": 1}, {"a": 2}, {"a": 3}]
