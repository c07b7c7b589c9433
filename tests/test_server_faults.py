"""A llama.cpp server killed in the middle of a run: the question in flight is recorded as failed without using up
its attempts, the run stops with a clear message instead of failing every later question, and the rerun (a new
server) completes every question."""

import os
import signal
import threading
import time

import pytest

from extlib import LocalServer, Task
from extlib.cells import Cell
from extlib.errors import SetupError
from extlib.jsonl import read_jsonl
from extlib.runner import answer_cell

from .conftest import TEST_MODEL

pytestmark = pytest.mark.local_model
WINDOW = 2048


def kill_after_first_row(server: LocalServer, path, deadline_s: float = 600) -> threading.Thread:
    """SIGKILL the server (no chance to clean up) as soon as the run file holds its first row."""
    def watch() -> None:
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            if path.exists() and path.read_text().count("\n") >= 1:
                os.kill(server.process.pid, signal.SIGKILL)
                return
            time.sleep(0.02)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_a_server_killed_mid_run_leaves_the_question_recorded_and_the_rerun_completes_it(tmp_path):
    tasks = [Task(f"q{i}", f"Who keeps light {i}?", f"Light {i} is kept by Ann Vale {i}. " + "The sea is grey. " * 60,
                  [f"Ann Vale {i}"]) for i in range(4)]
    spec = Cell("toy", "direct", 700, n=len(tasks), seed=0, model=TEST_MODEL, context_window=WINDOW)
    path = spec.run_file(tmp_path).path
    with LocalServer(TEST_MODEL, context_window=WINDOW) as server:
        watcher = kill_after_first_row(server, path)
        with pytest.raises(SetupError, match="stopped answering") as stopped:
            answer_cell(spec, tasks, server.client(backoff_s=0.05, max_retries=2), tmp_path)
        watcher.join(timeout=5)
    assert "the same command run again" in str(stopped.value)
    rows = read_jsonl(path)
    failed = [r for r in rows if r["error"]]
    assert 1 <= len(rows) - len(failed) < len(tasks) and len(failed) == 1  # the run stopped at the dead server
    assert "stopped answering" in failed[0]["error"] and failed[0]["attempt"] == 0  # its attempts are intact

    with LocalServer(TEST_MODEL, context_window=WINDOW) as server:
        answer_cell(spec, tasks, server.client(), tmp_path)
    latest = {r["id"]: r for r in read_jsonl(path)}
    assert sorted(latest) == [t.id for t in tasks] and not any(r["error"] for r in latest.values())
    assert sum(r["f1"] for r in latest.values()) > 0  # real answers, not empty rows
