"""The one way questions are answered: `run_cells` takes an experiment's cells (extlib.cells) and answers question k
of every cell before question k+1 of any, so a stop leaves every cell at the same count and each question's rows
come from one sitting. Every cell is a resumable run file (extlib.runfile): a rerun computes only what is missing
or stale, a finished experiment redraws without a model call, and drawing a committed study (`compute=False`)
reads the rows on disk whatever the code's method versions are.

A question that fails (an LLM call exhausted its retries, an unexpected error) is written as a row with its error
and scores 0; a later run retries it (up to `max_attempts` in all), so no question is ever dropped. A server that
stops answering stops the run (the question keeps its attempts), and the same command run again continues there.
"""

from __future__ import annotations

import datetime
import json
import time
import traceback
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import pandas as pd

from .budget import PromptTooLong
from .cells import Cell
from .datasets import load_tasks
from .errors import ModelCallRefused, SetupError, UserError
from .fan_out import progress_bar
from .llm import LLMClient
from .methods import METHODS
from .methods.base import run_sync
from .metrics import score
from .runfile import current_versions, load_rows
from .trace import Prediction, Task


def run_cells(cells: Sequence[Cell], llm: LLMClient, root: str | Path, *, n: int | None = None,
              seed: int | None = None, window: int | None = None, repeats: int = 1, limit: int = 0,
              compute: bool = True, ids: list[str] | None = None, reasoning_llm: LLMClient | None = None,
              max_attempts: int = 2, progress: bool = True) -> pd.DataFrame:
    """Answer the first n questions (drawn with `seed`, or from the `ids` given) of every cell, question by question
    across the cells, `repeats` times (each repeat its own run file; without the response cache, or the repeats are
    copies), and return every current row with its cell's label and extra columns, its `repeat`, a `cell_note` and
    its `cell_file`. A cell that names its own n, seed or window keeps them; `n`, `seed` and `window` fill in the
    rest. With `limit`, this sitting answers only up to question `limit` of every cell (a staged study raises it
    sitting by sitting), and a cell's `cap` stops it early for good; the rows returned are those of the questions
    up to there.

    With `compute=False` nothing is answered: every cell is drawn from the rows on disk (`RunFile.newest`: its
    newest method version, however many questions it has), and `cell_note` labels the cells that are not what
    computing would give (fewer questions than asked, or another method version than the code's); the cells so
    labelled are listed (`announce_not_current`). Cells marked `drawn` are drawn so when computing too."""
    if not cells:
        raise UserError("an experiment needs at least one cell")
    if (n is not None and n <= 0) or repeats <= 0 or limit < 0:
        raise UserError(f"n and repeats must be positive and limit at least 0, got n={n}, repeats={repeats}, "
                        f"limit={limit}")
    if repeats > 1 and llm.cache is not None and compute:
        raise UserError("repeats > 1 needs the response cache off (cache=False): cached answers would repeat")
    root = Path(root)
    model = llm.model if reasoning_llm is None else f"{llm.model}+{reasoning_llm.model}"
    draws: dict[str, list[Task]] = {}  # one draw per (dataset, length, options, n, seed), shared by the cells
    plan = []  # (bound cell, the questions it answers), the cells of every repeat in order
    for repeat, cell in ((r, c) for r in range(repeats) for c in cells):
        bound = cell.bind(n, seed, model, window, repeat)
        if None in (bound.n, bound.seed, bound.context_window):
            raise UserError(f"cell {cell.label} L={cell.input_tokens} has no n, seed or window: give them to "
                            "run_cells (n=, seed=, window=) or to the cell")
        spec = bound.spec()
        key = json.dumps([spec["dataset"], spec["input_tokens"], spec["options"], spec["n"], spec["seed"]],
                         sort_keys=True)
        if key not in draws:
            draws[key] = load_tasks(cell.dataset, cell.input_tokens, n=spec["n"], seed=spec["seed"],
                                    tokenizer=llm.tokenizer, progress=False, ids=ids, **cell.options)
        plan.append((bound, draws[key][:min(spec["n"], limit or spec["n"], cell.cap or spec["n"])]))
    if compute:
        _question_by_question([p for p in plan if not p[0].drawn], llm, root, reasoning_llm, max_attempts, progress)
    frames = []
    for cell, tasks in plan:
        path = cell.run_file(root).path
        asked = {task.id for task in tasks}
        rows = load_rows([path], newest=not compute or cell.drawn)
        if len(rows):  # the questions the experiment has reached in every cell, so partial figures compare alike
            rows = rows[rows["id"].isin(asked)]
        frames.append(rows.assign(label=cell.label, repeat=cell.repeat, **cell.extra,
                                  cell_note=cell_note(rows, len(asked)), cell_file=str(path)))
    rows = pd.concat(frames, ignore_index=True)
    if "id" not in rows.columns:
        raise UserError(f"no rows under {root} for any of the {len(cells)} cells: point the study at the folder "
                        "that holds its rows, or compute them (compute=True; cells marked drawn are never computed)")
    if not compute or any(cell.drawn for cell in cells):
        announce_not_current(rows, root)
    return rows


def _question_by_question(plan: list[tuple[Cell, list[Task]]], llm: LLMClient, root: Path,
                          reasoning_llm: LLMClient | None, max_attempts: int, progress: bool) -> None:
    """Question k of every cell before question k+1 of any; cells with nothing pending are left alone, so a
    finished experiment redraws without reading a file per question."""
    unfinished = [bool(pending(tasks, _done(cell, root, llm), max_attempts)) for cell, tasks in plan]
    with progress_bar(progress, total=sum(len(tasks) for _, tasks in plan), desc=f"{root.name}: questions x cells",
                      unit="answer") as bar:
        for k in range(1, max((len(tasks) for _, tasks in plan), default=0) + 1):
            for (cell, tasks), work in zip(plan, unfinished):
                if k > len(tasks):
                    continue
                if work:
                    bar.set_postfix_str(f"{cell.label} L={cell.input_tokens:,}", refresh=False)
                    answer_cell(cell, tasks[:k], llm, root, reasoning_llm, max_attempts)
                bar.update(1)


def _done(cell: Cell, root: Path, llm: LLMClient) -> dict[str, dict]:
    """The cell's questions whose latest row is current (these weights, the code's method version)."""
    return cell.run_file(root).current(current_versions(), llm.model_sha256)


def pending(tasks: list[Task], done: dict[str, dict], max_attempts: int = 2) -> list[Task]:
    """The tasks without a current row, or whose row failed and has attempts left."""
    return [t for t in tasks if t.id not in done or (done[t.id]["error"] and done[t.id]["attempt"] < max_attempts)]


def answer_cell(cell: Cell, tasks: list[Task], llm: LLMClient, root: str | Path,
                reasoning_llm: LLMClient | None = None, max_attempts: int = 2) -> Path:
    """Answer every task of a bound cell not yet answered (or answered by another version) in its run file;
    returns the file."""
    run_file = cell.run_file(root)
    method = cell.make_method()
    done = run_file.current(current_versions(), llm.model_sha256)
    header = {"spec": cell.spec(), "method_version": method.version, "model_sha256": llm.model_sha256}
    with run_file.appending() as write:
        for task in pending(tasks, done, max_attempts):
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
                                 f"{run_file.path.name} (its row records the failure); every answered row is kept, "
                                 "and the same command run again starts a server and continues from this question")
    return run_file.path


def row(task: Task, prediction: Prediction, attempt: int, seconds: float, header: dict) -> dict:
    scores = score(prediction.answer, task.answers, task.metric) if not prediction.error else {"f1": 0.0, "em": 0.0}
    return {"id": task.id, "question": task.question, "answers": task.answers, "answer": prediction.answer,
            **scores, "error": prediction.error, "attempt": attempt, "rounds": prediction.rounds,
            "seconds": round(seconds, 3), "usage": prediction.usage, "extra": prediction.extra,
            "meta": {k: v for k, v in task.meta.items() if k != "passages"}, **header,
            "calls": [asdict(c) for c in prediction.calls]}


def cell_note(rows: pd.DataFrame, asked: int) -> str:
    """How a cell drawn from its rows differs from a computed one: "12/30 questions" when fewer are answered than
    asked, "v5, code v6" when its rows come from another version of the method than the code's ("" when neither)."""
    notes = []
    if len(rows) < asked:
        notes.append(f"{len(rows)}/{asked} questions")
    if len(rows) and rows["stale"].any():
        notes.append(f"v{int(rows['method_version'].iloc[0])}, code v{METHODS[rows['method'].iloc[0]][0].version}")
    return ", ".join(notes)


def note_files(rows: pd.DataFrame) -> pd.DataFrame:
    """`rows` (of load_rows) with each run file's `cell_note` and `cell_file`, against the questions its settings
    ask for: for tables drawn from a folder of run files rather than from an experiment's cells."""
    notes = {file: cell_note(group, int(group["expected"].iloc[0])) for file, group in rows.groupby("file")}
    return rows.assign(cell_note=rows["file"].map(notes), cell_file=rows["file"])


NOT_CURRENT_MIME = "application/vnd.extagents.not-current+json"  # read back by extlib.presets from executed copies


def announce_not_current(rows: pd.DataFrame, root: Path) -> None:
    """List the cells drawn with a note (in a notebook as Markdown, and as data that `extagents figures` reads from
    the executed copy to print the command that computes them)."""
    noted = rows[rows["cell_note"] != ""].drop_duplicates("cell_file")
    cells = [{"file": str(Path(f).relative_to(root)) if Path(f).is_relative_to(root) else f, "note": note}
             for f, note in zip(noted["cell_file"], noted["cell_note"])]
    if not cells:
        return
    text = (f"**Drawn from the rows on disk; {len(cells)} cell(s) are not what computing them now would give** "
            "(their points are labelled):\n" + "\n".join(f"- `{c['file']}`: {c['note']}" for c in cells))
    try:
        from IPython.display import display

        display({NOT_CURRENT_MIME: {"root": str(root), "cells": cells}, "text/markdown": text}, raw=True)
    except ImportError:
        print(text)
