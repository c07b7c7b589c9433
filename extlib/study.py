"""A study: the cells of an experiment (method x dataset x length x settings) answered one question at a time
across all cells, so a stop leaves every cell at the same count and each question's rows come from one
sitting; every cell is a resumable run file (extlib.runfile), so a rerun computes only what is missing or
stale. The notebooks build their figures on `run_study`'s rows."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from .datasets import load_tasks
from .datasets.splits import SPLITS
from .errors import UserError
from .experiments import RunSpec, current_rows, pending, run
from .llm import LLMClient
from .methods import METHODS
from .runfile import load_rows
from .trace import Task


@dataclass
class Cell:
    """One setting of an experiment, drawn as one point (or line) of a figure."""

    dataset: str
    method: str
    input_tokens: int
    knobs: dict[str, Any] = field(default_factory=dict)  # method knobs (the window comes from the study)
    options: dict[str, Any] = field(default_factory=dict)  # dataset options, e.g. where evidence is placed
    label: str = ""  # the name in the figure; the method's name by default
    extra: dict[str, Any] = field(default_factory=dict)  # columns copied into the cell's rows (e.g. a depth)
    drawn: bool = False  # drawn from the rows on disk, never computed: an earlier study's cell, kept with its version

    def __post_init__(self) -> None:
        self.label = self.label or self.method


def panel_dataset(panel: str) -> tuple[str, dict[str, Any]]:
    """A study notebook's panel names a dataset, drawn with the notebook's seed from every question it has, or
    `<dataset>:<split>` (e.g. `hotpotqa:test`), drawn from the ids of that split only (data/splits); returns the
    dataset and the loader options the panel implies."""
    dataset, colon, split = panel.partition(":")
    if not colon:
        return dataset, {}
    if split not in SPLITS:
        raise UserError(f"dataset {panel!r}: after the colon comes a split, one of {', '.join(SPLITS)}")
    return dataset, {"split": split}


def check_keyed_by_panel(panels: list[str], **parameters: Any) -> None:
    """A notebook parameter keyed by panel (a dict, or a list of panel names) whose keys name no panel of `panels`
    is a mistake (a misspelling, or a dataset left out): say which parameter and which names."""
    for name, keys in parameters.items():
        if stray := sorted(set(keys) - set(panels)):
            raise UserError(f"{name} names {stray}, not among datasets {panels}: key it by a name in datasets")


def run_study(cells: list[Cell], llm: LLMClient, root: str | Path, n: int, seed: int, window: int,
              repeats: int = 1, reasoning_llm: LLMClient | None = None, progress: bool = True,
              limit: int = 0, compute: bool = True) -> pd.DataFrame:
    """Answer the first n questions (drawn with `seed`) of every cell, question by question across the cells,
    `repeats` times (each repeat its own run file; without the response cache, or the repeats are copies), and
    return every current row with its cell's label and extra columns and its `repeat`. With `limit`, this sitting
    answers only up to question `limit` of every cell (a staged study raises it sitting by sitting, and a stop
    between sittings leaves every cell at the same count); the rows returned are then those of the questions up to
    `limit` (a cell may hold more, e.g. rows a preset reused from another study).

    With `compute=False` nothing is answered: every cell is drawn from the rows on disk (`RunFile.newest`: its newest
    method version, however many questions it has), and a `cell_note` column labels the cells that are not what
    computing would give (fewer questions than asked, or another method version than the code's); the cells so
    labelled are listed (`announce_not_current`). Cells marked `drawn` are drawn so when computing too."""
    if not cells:
        raise UserError("a study needs at least one cell")
    if n <= 0 or repeats <= 0 or limit < 0:
        raise UserError(f"n and repeats must be positive and limit at least 0, got n={n}, repeats={repeats}, "
                        f"limit={limit}")
    if repeats > 1 and llm.cache is not None and compute:
        raise UserError("repeats > 1 needs the response cache off (cache=False): cached answers would repeat")
    root = Path(root)
    tasks: dict[str, list[Task]] = {}  # one draw per (dataset, length, options), shared by the cells
    plan = []  # ((repeat, cell), (its run spec, its questions)), the cells of every repeat in order
    for repeat, cell in ((r, c) for r in range(repeats) for c in cells):
        key = json.dumps([cell.dataset, cell.input_tokens, cell.options], sort_keys=True)
        if key not in tasks:
            tasks[key] = load_tasks(cell.dataset, cell.input_tokens, n=n, seed=seed, tokenizer=llm.tokenizer,
                                    progress=False, **cell.options)
        plan.append(((repeat, cell), (RunSpec(cell.dataset, cell.method, cell.input_tokens, n, seed, llm.model,
                                              window, cell.knobs, cell.options, repeat), tasks[key])))
    most = min(max(len(t) for t in tasks.values()), limit or n)
    if compute:
        _answer([spec for (_, cell), spec in plan if not cell.drawn], most, llm, root, reasoning_llm, progress)
    frames = []
    for (repeat, cell), (spec, cell_tasks) in plan:
        path = spec.path(root)
        asked = {task.id for task in cell_tasks[:most]}
        rows = load_rows([path], newest=not compute or cell.drawn)
        if len(rows):  # the questions the study has reached in every cell, so partial figures compare alike
            rows = rows[rows["id"].isin(asked)]
        frames.append(rows.assign(label=cell.label, repeat=repeat, **cell.extra,
                                  cell_note=cell_note(rows, len(asked)), cell_file=str(path)))
    rows = pd.concat(frames, ignore_index=True)
    if "id" not in rows.columns:
        raise UserError(f"no rows under {root} for any of the {len(cells)} cells: point the study at the folder "
                        "that holds its rows, or compute them (compute=True; cells marked drawn are never computed)")
    if not compute or any(cell.drawn for cell in cells):
        announce_not_current(rows, root)
    return rows


def _answer(specs: list[tuple[RunSpec, list[Task]]], most: int, llm: LLMClient, root: Path,
            reasoning_llm: LLMClient | None, progress: bool) -> None:
    """Question k of every cell before question k+1 of any; cells with nothing pending are left alone, so a
    finished study redraws without reading a file per question."""
    unfinished = [bool(pending(cell_tasks[:most], current_rows(spec, root, llm))) for spec, cell_tasks in specs]
    with tqdm(total=most * len(specs), desc=f"{root.name}: questions x cells", unit="answer",
              disable=not progress) as bar:
        for k in range(1, most + 1):
            for (spec, cell_tasks), work in zip(specs, unfinished):
                if work:
                    run(spec, cell_tasks[:k], llm, root, reasoning_llm, progress=False)
                bar.update(1)


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
    ask for: for tables drawn from a folder of run files rather than from a study's cells."""
    notes = {file: cell_note(group, int(group["expected"].iloc[0])) for file, group in rows.groupby("file")}
    return rows.assign(cell_note=rows["file"].map(notes), cell_file=rows["file"])


NOT_CURRENT_MIME = "application/vnd.extagents.not-current+json"  # read back by extlib.figures from executed copies


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


def evidence_inside(meta: dict[str, Any], keep: int, truncate: str) -> float:
    """Share of a question's gold evidence that a truncation to `keep` tokens keeps: the first `keep` tokens
    (`front`, retrieval order) or the first and last halves (`middle`). Evidence beyond the knowledge (a
    retrieved paragraph ranked too low to be packed) counts as outside."""
    gold, total = meta.get("gold", []), meta["input_tokens"]
    if not gold:
        return float("nan")

    def kept(offset: int | None) -> bool:
        if offset is None:
            return False
        return offset < keep if truncate == "front" else offset < keep // 2 or offset >= total - (keep - keep // 2)
    return sum(kept(g.get("token_offset")) for g in gold) / len(gold)
