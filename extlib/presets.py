"""`make figures`: every experiment notebook executed with papermill under one preset's parameters, one after
another, with the executed copies in results/<preset>/notebooks/, the rows in results/<preset>/<notebook>/ and
the figures in figures/<preset>/. Every notebook's rows are resumable run files, so a stopped run continues
where it stopped. Like make, a notebook whose executed copy is newer than everything it depends on (the
notebook, the preset, the library, its rows) and ran with the same parameters is not run again; an executed copy
is written only when its notebook ran to the end, so an interrupted one never counts as up to date.

A **committed** preset (one with a `committed:` block: the method versions and model its rows were made with, the
rows in git) is drawn, never computed, unless `compute` is asked for: its notebooks get `compute=False` and
read the rows on disk whatever the code's versions are, no server starts, and EXTAGENTS_OFFLINE=1 refuses any
model call. Cells that are partial or of another method version than the code's are drawn with a label, and
listed at the end with the command that computes them.

A preset may name committed rows to reuse (`reuse: {<notebook>: [<dataset folder>, ...]}`, folders of run files
as `extagents run` writes them, one per dataset): before the notebook runs, every row of such a folder whose
question its namesake file under results/<preset>/<notebook>/<dataset>/ lacks is copied in, so settings shared
with another study are not answered twice (a copied row of another method version is stale and answered again,
as any row)."""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from .cells import Cell
from .engine import DEFAULT_WINDOW, EngineSettings, clients
from .errors import ModelCallRefused, SetupError, UserError
from .fan_out import progress_bar
from .llm import LLMError
from .methods import METHODS
from .plans import PLANS, notebook_cells
from .runfile import RunFile
from .runner import NOT_CURRENT_MIME, run_cells
from .serve import LocalServer

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ["00_lesson", "01_scaling", "02_ablation", "03_latency", "04_cost", "05_robustness", "06_survey"]
PRESETS = ROOT / "configs" / "presets"


class PresetError(UserError):
    """A preset or parameter the notebooks do not have; the message lists what they have."""


def load_preset(preset: str) -> dict[str, Any]:
    path = PRESETS / f"{preset}.yaml"
    if not path.is_file():
        have = sorted(p.stem for p in PRESETS.glob("*.yaml"))
        raise PresetError(f"no preset {preset!r}; presets: {', '.join(have)} (files in {PRESETS})")
    config = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    unknown = set(config) - {"engine", "common", "notebooks", "reuse", "committed"}
    if unknown or set(config.get("notebooks", {})) - set(NOTEBOOKS) or set(config.get("reuse", {})) - set(NOTEBOOKS):
        raise PresetError(f"{path}: top-level keys are engine, common, notebooks, reuse, committed; notebooks (and the "
                          f"keys of reuse) are {NOTEBOOKS}")
    committed = config.get("committed")
    if committed is not None and not (isinstance(committed, dict) and isinstance(committed.get("method_versions"), dict)
                                      and isinstance(committed.get("model"), str)):
        raise PresetError(f"{path}: committed records what the rows were made with: model (a bundled model's name or "
                          "the endpoint's) and method_versions ({method: version}); got {committed!r}")
    for name, folders in config.get("reuse", {}).items():
        missing = [f for f in folders if not (ROOT / f).is_dir()] if isinstance(folders, list) else [folders]
        if missing:
            raise PresetError(f"{path}: reuse of {name} is a list of folders of {ROOT}; {missing} is not")
    return config


def reuse_rows(source: Path, target: Path) -> int:
    """Copy every row of the run files under `source` whose question id its namesake file under `target` lacks
    (`RunFile.adopt`: a question `target` has, answered or failed, is left as it is); returns how many were copied."""
    return sum(RunFile(target / run_file.relative_to(source)).adopt(RunFile(run_file))
               for run_file in sorted(source.rglob("*.jsonl")))


def reuse(config: dict[str, Any], names: list[str], results: Path) -> None:
    """Copy the rows a preset reuses (its `reuse:` folders) into the notebooks' folders, before computing."""
    for name in set(names) & set(config.get("reuse", {})):
        for folder in config["reuse"][name]:
            if copied := reuse_rows(ROOT / folder, results / name / Path(folder).name):
                print(f"{name}: {copied} rows reused from {folder}")


def preset_cells(preset: str, only: list[str], results_root: Path = ROOT / "results"
                 ) -> tuple[list[Cell], EngineSettings, Path]:
    """The cells that notebooks `only` build under `preset` (each in its notebook's folder, with the notebook's
    draw and window), the engine they share, and the preset's results folder: what `extagents run --preset`
    answers (after `reuse`)."""
    import ast

    import papermill

    config = load_preset(preset)
    results = Path(results_root) / preset
    cells, engines = [], {}
    for name in only:
        if name not in PLANS:
            raise PresetError(f"run --preset computes the study notebooks {', '.join(PLANS)}; {name} is computed by "
                              f"extagents figures --preset {preset} --compute --only {name}")
        declared = papermill.inspect_notebook(str(ROOT / "notebooks" / f"{name}.ipynb"))
        values = {key: ast.literal_eval(p["default"]) for key, p in declared.items()} | \
            parameters(name, config, {}, results, Path(), compute=True)
        if values.get("repeats", 1) != 1:
            raise PresetError(f"{name} repeats its cells {values['repeats']} times: compute it with extagents figures")
        engines[name] = EngineSettings(base_url=values["base_url"] or None, model=values["model"] or None,
                                       local_model=values["local_model"], context_window=values["window"],
                                       concurrency=values["concurrency"], cache=values["cache"],
                                       prompt_cache_mb=config.get("engine", {}).get("prompt_cache_mb",
                                                                                    EngineSettings.prompt_cache_mb))
        cells += [replace(cell, n=values["n"], seed=values["seed"], context_window=values["window"], folder=name)
                  for cell in notebook_cells(name, values)]
    if any(engine != engines[only[0]] for engine in engines.values()):
        raise PresetError(f"the notebooks {', '.join(only)} use different engines under {preset} ({engines}): run "
                          "them one at a time")
    return cells, next(iter(engines.values())), results


def run_preset(preset: str, only: list[str], limit: int = 0) -> int:
    """`extagents run --preset`: the cells of a preset's study notebooks `only`, question by question across all of
    them up to question `limit` (0: all), on one server; `extagents figures --preset` then draws them."""
    if not only:
        raise PresetError("--preset needs --only, the study notebooks to compute, e.g. --only 01_scaling,02_ablation")
    cells, engine, results = preset_cells(preset, only)
    reuse(load_preset(preset), only, results)  # rows of another study with the same settings, copied in
    with clients(engine) as (llm, _):
        rows = run_cells(cells, llm, results, limit=limit)
    print(f"{rows['cell_file'].nunique()} run files under {results}, {len(rows)} rows up to question {limit or 'n'}; "
          f"extagents figures --preset {preset} draws them")
    return 1 if rows["failed"].any() else 0


def notebook_overrides(settings: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """{"01_scaling.n": 5} (from `--set 01_scaling.n=5`) -> {"01_scaling": {"n": 5}}."""
    overrides: dict[str, dict[str, Any]] = {}
    for key, value in settings.items():
        notebook, _, name = key.partition(".")
        if not notebook or not name:
            raise PresetError(f"--set {key}: write NOTEBOOK.KEY=VALUE, e.g. 01_scaling.n=5")
        overrides.setdefault(notebook, {})[name] = value
    return overrides


def parameters(name: str, config: dict[str, Any], overrides: dict[str, Any], results: Path,
               figures: Path, compute: bool = True) -> dict[str, Any]:
    """A notebook's parameters: the preset's engine and common settings it declares, its own settings, where its
    rows and figures go, whether it may compute, then `overrides`. A setting of its own or an override it does not
    declare is an error."""
    import papermill

    declared = papermill.inspect_notebook(str(ROOT / "notebooks" / f"{name}.ipynb"))
    shared = {**config.get("engine", {}), **config.get("common", {}), "results_dir": str(results / name),
              "figure_dir": str(figures), "scaling_dir": str(results / "01_scaling"), "compute": compute}
    own = {**config.get("notebooks", {}).get(name, {}), **overrides}
    unknown = sorted(set(own) - set(declared))
    if unknown:
        raise PresetError(f"{name} has no parameter {', '.join(unknown)}; its parameters: {', '.join(declared)}")
    return {**{k: v for k, v in shared.items() if k in declared}, **own}


def up_to_date(target: Path, name: str, plan: dict[str, Any], preset: str, results: Path) -> bool:
    """Whether `target`, the executed copy of notebook `name`, ran without error with `plan` and is newer than
    the notebook, the preset, every library file and every row it read."""
    if not target.exists():
        return False
    meta = json.loads(target.read_text(encoding="utf-8")).get("metadata", {}).get("papermill", {})
    if meta.get("exception") or meta.get("parameters") != plan:
        return False
    sources = [ROOT / "notebooks" / f"{name}.ipynb", PRESETS / f"{preset}.yaml", *(ROOT / "extlib").rglob("*.py"),
               *(results / name).rglob("*.json*"), *((results / "01_scaling").rglob("*.jsonl") if name == "04_cost"
                                                     else [])]
    return target.stat().st_mtime > max(p.stat().st_mtime for p in sources)


def render(preset: str = "quick", only: list[str] | None = None, overrides: dict[str, dict[str, Any]] | None = None,
           results_root: Path = ROOT / "results", figures_root: Path = ROOT / "figures",
           force: bool = False, compute: bool = False, out: Path | None = None) -> list[Path]:
    """Execute the notebooks (all, or `only`) under `preset`, rows in results_root/<preset>/, executed copies in
    results_root/<preset>/notebooks/ and figures in figures_root/<preset>/ (both under `out` instead, when given);
    with `force`, also those up to date (a staged study computes question by question with `extagents run
    --preset`, then draws here). A committed preset is only drawn from its rows unless `compute`; any other
    preset computes what is missing. Returns the executed copies."""
    import papermill

    config = load_preset(preset)
    names = only or NOTEBOOKS
    unknown = sorted(set(names) - set(NOTEBOOKS)) + sorted(set(overrides or {}) - set(NOTEBOOKS))
    if unknown:
        raise PresetError(f"no notebook {', '.join(unknown)}; notebooks: {', '.join(NOTEBOOKS)}")
    drawing = "committed" in config and not compute
    results = Path(results_root) / preset
    figures, executed = ((Path(out) / "figures", Path(out) / "notebooks") if out else
                         (Path(figures_root) / preset, results / "notebooks"))
    plans = {name: parameters(name, config, (overrides or {}).get(name, {}), results, figures, compute=not drawing)
             for name in names}
    executed.mkdir(parents=True, exist_ok=True)
    if drawing:
        say_versions(preset, config["committed"])
    else:
        reuse(config, names, results)
    todo = [n for n in names if force or not up_to_date(executed / f"{n}.ipynb", n, plans[n], preset, results)]
    for name in sorted(set(names) - set(todo), key=names.index):
        print(f"{name}: up to date (its executed copy is newer than all it depends on); --force runs it again")
    engine = config.get("engine", {})
    with contextlib.ExitStack() as stack:
        if drawing:
            stack.enter_context(environment("EXTAGENTS_OFFLINE", "1"))
        elif todo and not engine.get("base_url"):  # one local server for all notebooks: each reuses it
            stack.enter_context(LocalServer(engine.get("local_model", EngineSettings.local_model),
                                            context_window=config.get("common", {}).get("window", DEFAULT_WINDOW),
                                            prompt_cache_mb=engine.get("prompt_cache_mb",
                                                                       EngineSettings.prompt_cache_mb),
                                            persistent=True))
        for name in progress_bar(True, iterable=todo, desc=f"preset {preset}: notebooks", unit="notebook"):
            execute(papermill, name, executed / f"{name}.ipynb", plans[name])
    not_current = {name: cells for name in names if (cells := cells_not_current(executed / f"{name}.ipynb"))}
    if not_current:
        say_not_current(preset, not_current)
    return [executed / f"{name}.ipynb" for name in names]


def execute(papermill: Any, name: str, target: Path, plan: dict[str, Any]) -> None:
    """Run notebook `name` into `target`. Papermill saves its output even when interrupted, so it writes a
    temporary copy that replaces `target` only when the notebook ran to its end or stopped on an error in a cell
    (that copy records the error, so it is never up to date); Ctrl-C or a crash leaves `target` as it was."""
    running = target.with_name(f".{target.stem}.running.ipynb")
    try:
        with environment("TQDM_DISABLE", "1"):
            papermill.execute_notebook(str(ROOT / "notebooks" / f"{name}.ipynb"), str(running), parameters=plan,
                                       cwd=str(ROOT / "notebooks"), progress_bar=True, kernel_name="python3")
    except papermill.PapermillExecutionError as exc:  # its rows so far are kept; a rerun continues
        os.replace(running, target)
        where = f"notebook {name} stopped in cell {exc.exec_count}: {exc.ename}: {exc.evalue} (the executed copy, " \
                f"with the error: {target})"
        actionable = next((kind for kind in (UserError, SetupError, ModelCallRefused, LLMError)
                           if exc.ename in _names(kind)), None)
        if actionable is LLMError:
            raise SetupError(where) from None
        if actionable:  # one clear line, as the same error raised here would give
            raise actionable(where) from None
        raise RuntimeError(f"{where}\n{strip_ansi(''.join(exc.traceback))}") from None  # a bug: its traceback
    except BaseException:
        running.unlink(missing_ok=True)
        raise
    os.replace(running, target)


def _names(kind: type) -> set[str]:
    """The names of `kind` and its subclasses: a notebook's error arrives as its class name only."""
    return {kind.__name__} | {name for sub in kind.__subclasses__() for name in _names(sub)}


def strip_ansi(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


@contextlib.contextmanager
def environment(name: str, value: str) -> Iterator[None]:
    """`name`=`value` in this process's environment, and so in the notebook kernels it starts, inside the block;
    as it was after. EXTAGENTS_OFFLINE=1: every model call is refused. TQDM_DISABLE=1: tqdm reads it when a process
    imports it, so the kernels' bars are off while this process's own (already imported) keep showing on the
    terminal, and a saved notebook holds results, not bars."""
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            del os.environ[name]
        else:
            os.environ[name] = before


def say_versions(preset: str, committed: dict[str, Any]) -> None:
    """Say that a committed preset is drawn, and which methods the code has changed since its rows were made."""
    changed = {m: (v, METHODS[m][0].version) for m, v in committed["method_versions"].items()
               if m in METHODS and METHODS[m][0].version != v}
    print(f"preset {preset}: drawing the committed rows (made with {committed['model']}); no model is called")
    if changed:
        print("  the code has changed since: " + ", ".join(f"{m} v{old} -> v{new}" for m, (old, new) in changed.items())
              + "; cells of those methods are drawn from their rows and labelled")


def cells_not_current(executed: Path) -> list[dict[str, str]]:
    """The cells an executed notebook drew with a note (extlib.runner.announce_not_current), each once (a notebook
    may draw one cell in several figures)."""
    if not executed.exists():
        return []
    cells = json.loads(executed.read_text(encoding="utf-8"))["cells"]
    found = [cell for c in cells for output in c.get("outputs", [])
             for cell in output.get("data", {}).get(NOT_CURRENT_MIME, {}).get("cells", [])]
    return list({cell["file"]: cell for cell in found}.values())


def say_not_current(preset: str, not_current: dict[str, list[dict[str, str]]]) -> None:
    count = sum(map(len, not_current.values()))
    print(f"\n{count} cell(s) were drawn from rows that are not what computing them now would give (labelled on the "
          "figures):")
    for name, cells in not_current.items():
        for cell in cells[:8]:
            print(f"  {name}/{cell['file']}: {cell['note']}")
        if len(cells) > 8:
            print(f"  ... and {len(cells) - 8} more of {name}")
    planned = [name for name in not_current if name in PLANS]
    others = [name for name in not_current if name not in PLANS]
    if planned:
        print(f"compute them (hours of model calls): extagents run --preset {preset} --only {','.join(planned)}")
    if others:
        print(f"compute them (hours of model calls): extagents figures --preset {preset} --compute --only "
              f"{','.join(others)}")
