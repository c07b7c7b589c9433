"""Experiments HELMET-style: every (dataset, method, length, settings) run is one JSONL file named by its
settings, one row per question, appended as each finishes (extlib.results turns run files into one table).

A question that fails (an LLM call exhausted its retries, an unexpected error) is written as a row with its
error and scores 0; a later run of the same settings retries it (up to `max_attempts` in all) and skips the
rows already answered, so an interrupted run resumes where it stopped and no question is ever dropped.

Every row carries the method's version, the model's sha256 (bundled models) and the date. A row answered by
another version of the method or other weights is stale: the run answers its question again, and the tables
(extlib.results) leave stale rows out and count them. Rows written before versions existed are version 1, the
behaviour checked unchanged when versions were introduced.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from .budget import PromptTooLong
from .datasets import DATASETS, truncation
from .datasets import options as dataset_options
from .errors import ModelCallRefused, SetupError
from .jsonl import append, open_for_append, read_jsonl
from .llm import LLMClient
from .methods import METHODS, knob_defaults, knob_names, knobs_for, make_method
from .methods.base import run_sync
from .metrics import score
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
        """runs/<dataset>/<method>__<model>__L<len>__W<window>__n<n>__s<seed>[__<settings digest>][__r<repeat>].jsonl,
        the digest over the knobs and dataset options that differ from their defaults (over the knobs alone when
        no option does), so that one run named with or without its defaults (a notebook names them all, a config
        file few) is one file."""
        name = f"{self.method}__{self.model}__L{self.input_tokens}__W{self.context_window}__n{self.n}__s{self.seed}"
        knobs = not_default(self.knobs, knob_defaults(self.method))
        options = not_default(self.options, dataset_options(self.dataset) if self.dataset in DATASETS else {})
        settings = {"knobs": knobs, "options": options} if options else knobs
        if settings:
            name += "__" + hashlib.sha1(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:8]
        if self.repeat:
            name += f"__r{self.repeat}"
        return root / self.dataset / f"{name.replace('/', '_')}.jsonl"

    def make_method(self):
        """The method with the spec's window, length and knobs; the dataset's truncation unless a knob says."""
        settings = {"context_window": self.context_window, "input_tokens": self.input_tokens}
        if "truncate" in knob_names(self.method):
            settings["truncate"] = truncation(self.dataset)
        return make_method(self.method, **{**settings, **self.knobs})


def not_default(settings: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """The settings that are not at their default value (a setting without a default always counts)."""
    return {k: v for k, v in settings.items() if k not in defaults or v != defaults[k]}


def read_rows(path: Path) -> dict[str, dict]:
    """The latest row per question id (a retried question appears more than once). A last line torn by a
    crash mid-write is no row: its question counts as not answered."""
    return {row["id"]: row for row in read_jsonl(path)}


def row_version(row: dict) -> int:
    """The version of the method that answered a row (rows from before versions existed: 1)."""
    return row.get("method_version", 1)


def is_current(row: dict, version: int, model_sha256: str | None) -> bool:
    """Whether a row was answered by this version of its method (and, when known, these weights)."""
    return row_version(row) == version and row.get("model_sha256") in (None, model_sha256)


def newest_rows(path: Path) -> dict[str, dict]:
    """The rows a committed study is drawn from: per question, its latest row of the newest method version in the
    file (a rerun staged over many sittings holds the new version's first questions beside the old version's
    complete set: the new ones are drawn, partial, never mixed with the old)."""
    rows = read_jsonl(path)
    newest = max((row_version(r) for r in rows), default=1)
    return {r["id"]: r for r in rows if row_version(r) == newest}


def current_rows(spec: RunSpec, root: Path, llm: LLMClient) -> dict[str, dict]:
    """The rows of spec's file answered by the method's current version (and these weights), by question id."""
    version = METHODS[spec.method][0].version
    return {i: r for i, r in read_rows(spec.path(root)).items() if is_current(r, version, llm.model_sha256)}


def pending(tasks: list[Task], done: dict[str, dict], max_attempts: int = 2) -> list[Task]:
    """The tasks without a current row, or whose row failed and has attempts left."""
    return [t for t in tasks if t.id not in done or (done[t.id]["error"] and done[t.id]["attempt"] < max_attempts)]


def run(spec: RunSpec, tasks: list[Task], llm: LLMClient, root: Path, reasoning_llm: LLMClient | None = None,
        max_attempts: int = 2, progress: bool = True) -> Path:
    """Answer every task not yet answered (or answered by another version) in spec's file; returns the file."""
    path = spec.path(root)
    method = spec.make_method()
    done = current_rows(spec, root, llm)
    todo = pending(tasks, done, max_attempts)
    header = {"spec": asdict(spec), "method_version": method.version, "model_sha256": llm.model_sha256}
    with open_for_append(path) as sink:
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
            append(sink, row(task, prediction, attempt + (not server_gone), time.time() - start,
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
