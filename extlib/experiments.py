"""Experiments HELMET-style: every (dataset, method, length, settings) run is one JSONL file named by its
settings (extlib.runfile), one row per question, appended as each finishes (extlib.results turns run files into
one table).

A question that fails (an LLM call exhausted its retries, an unexpected error) is written as a row with its
error and scores 0; a later run of the same settings retries it (up to `max_attempts` in all) and skips the
rows already answered, so an interrupted run resumes where it stopped and no question is ever dropped.

Every row carries the method's version, the model's sha256 (bundled models) and the date. A row answered by
another version of the method or other weights is stale (extlib.runfile.is_current): the run answers its question
again, and the tables (extlib.results) leave stale rows out and count them.
"""

from __future__ import annotations

import datetime
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from .budget import PromptTooLong
from .datasets import truncation
from .errors import ModelCallRefused, SetupError
from .llm import LLMClient
from .methods import knob_names, knobs_for, make_method
from .methods.base import run_sync
from .metrics import score
from .runfile import RunFile, current_versions
from .trace import Prediction, Task


@dataclass
class RunSpec:
    dataset: str
    method: str
    input_tokens: int
    n: int
    seed: int
    model: str
    context_window: int
    knobs: dict[str, Any] = field(default_factory=dict)  # method knobs beyond the window and the length
    options: dict[str, Any] = field(default_factory=dict)  # dataset options (e.g. where the evidence is placed)
    repeat: int = 0  # a repeated run of the same settings (the paper reports the median of three): its own file

    def __post_init__(self) -> None:
        knobs_for([self.method], self.knobs)  # a knob this method does not take is an error, not a new file name

    def path(self, root: Path) -> Path:
        """root/<dataset>/<file named by the settings> (extlib.runfile.file_name)."""
        return RunFile.locate(root, asdict(self)).path

    def make_method(self):
        """The method with the spec's window, length and knobs; the dataset's truncation unless a knob says."""
        settings = {"context_window": self.context_window, "input_tokens": self.input_tokens}
        if "truncate" in knob_names(self.method):
            settings["truncate"] = truncation(self.dataset)
        return make_method(self.method, **{**settings, **self.knobs})


def current_rows(spec: RunSpec, root: Path, llm: LLMClient) -> dict[str, dict]:
    """The rows of spec's file answered by the method's current version (and these weights), by question id."""
    return RunFile.locate(root, asdict(spec)).current(current_versions(), llm.model_sha256)


def pending(tasks: list[Task], done: dict[str, dict], max_attempts: int = 2) -> list[Task]:
    """The tasks without a current row, or whose row failed and has attempts left."""
    return [t for t in tasks if t.id not in done or (done[t.id]["error"] and done[t.id]["attempt"] < max_attempts)]


def run(spec: RunSpec, tasks: list[Task], llm: LLMClient, root: Path, reasoning_llm: LLMClient | None = None,
        max_attempts: int = 2, progress: bool = True) -> Path:
    """Answer every task not yet answered (or answered by another version) in spec's file; returns the file."""
    run_file = RunFile.locate(root, asdict(spec))
    path = run_file.path
    method = spec.make_method()
    done = current_rows(spec, root, llm)
    todo = pending(tasks, done, max_attempts)
    header = {"spec": asdict(spec), "method_version": method.version, "model_sha256": llm.model_sha256}
    with run_file.appending() as write:
        for task in tqdm(todo, desc=f"{spec.method} L={spec.input_tokens:,}", unit="question", disable=not progress):
            start = time.time()
            try:
                prediction = method.run(task, llm, reasoning_llm)
            except (PromptTooLong, ModelCallRefused):
                raise  # a setting no question can run with, or no model call allowed: stop and say so
            except Exception as exc:  # one question's failure must not end the run or lose its row
                prediction = Prediction(task.id, "", 0, [], error=f"{type(exc).__name__}: {exc} "
                                        f"({traceback.format_exc(limit=2).splitlines()[-1]})")
            attempt = done.get(task.id, {}).get("attempt", 0)
            server_gone = bool(prediction.error) and not run_sync(llm.reachable())
            if server_gone:  # not the question's failure: it keeps its attempts, and the run stops here
                prediction.error = f"the model server stopped answering: {prediction.error}"
            write(row(task, prediction, attempt + (not server_gone), time.time() - start,
                             {**header, "date": datetime.date.today().isoformat()}))
            if server_gone:
                raise SetupError(f"the model server at {llm.base_url} stopped answering during question {task.id} of "
                                 f"{path.name} (its row records the failure); every answered row is kept, and the "
                                 "same command run again starts a server and continues from this question")
    return path


def row(task: Task, prediction: Prediction, attempt: int, seconds: float, header: dict) -> dict:
    scores = score(prediction.answer, task.answers, task.metric) if not prediction.error else {"f1": 0.0, "em": 0.0}
    return {"id": task.id, "question": task.question, "answers": task.answers, "answer": prediction.answer,
            **scores, "error": prediction.error, "attempt": attempt, "rounds": prediction.rounds,
            "seconds": round(seconds, 3), "usage": prediction.usage, "extra": prediction.extra,
            "meta": {k: v for k, v in task.meta.items() if k != "passages"}, **header,
            "calls": [asdict(c) for c in prediction.calls]}
