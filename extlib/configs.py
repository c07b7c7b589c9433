"""An experiment's settings, from `run`'s flags or a YAML file (`configs/*.yaml`), and the cells they make. A file
holds the settings under the flags' names and is turned into those flags, so a checked-in config is checked exactly
as a command line is; a file may instead list experiment files (`experiments:`) that one run answers together."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from .cells import Cell
from .cli_flags import given_knobs, key_values, knob_fields, method_names
from .datasets import check_options, read_ids
from .engine import DEFAULT_WINDOW, EngineSettings, clients
from .errors import UserError
from .methods import knobs_for
from .runner import run_cells


class SettingsError(UserError):
    """A setting the user can fix; the message names it."""


def _lengths(text: str | None) -> list[int]:
    if not text:
        raise UserError("--lengths is required (here or as lengths: in --config), e.g. --lengths 2000,8000")
    try:
        lengths = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"--lengths {text!r}: give comma-separated token counts, e.g. 2000,8000") from None
    if not lengths or min(lengths) <= 0:
        raise UserError(f"--lengths {text!r}: give positive token counts, e.g. 2000,8000")
    return lengths


def _caps(text: str) -> dict[int, int]:
    caps = {}
    for item in filter(None, text.split(",")):
        length, _, count = item.partition("=")
        try:
            caps[int(length)] = int(count)
        except ValueError:
            raise UserError(f"--cap {text!r}: write LENGTH=QUESTIONS pairs, e.g. 4096=15") from None
    return caps


def experiment_cells(args: argparse.Namespace) -> list[Cell]:
    """One experiment's cells (its lengths x methods), each with the experiment's draw and window."""
    if not args.dataset:
        raise UserError("--dataset is required (here or as dataset: in --config)")
    names = method_names(args.method, allow_all=True)
    lengths = _lengths(args.lengths)
    knobs = given_knobs(args)
    window = knobs.pop("context_window", DEFAULT_WINDOW)
    per_method = knobs_for(names, knobs)
    options = key_values(args.option, "--option")
    check_options(args.dataset, options)
    caps = _caps(args.cap)
    if stray := sorted(set(caps) - set(lengths)):
        raise UserError(f"--cap names lengths {stray} that --lengths {args.lengths} does not have")
    return [Cell(args.dataset, name, length, per_method[name], options, n=args.n, seed=args.seed,
                 context_window=window, cap=caps.get(length, 0)) for length in lengths for name in names]


def run_experiments(runs: list[argparse.Namespace]) -> int:
    """Every experiment's cells answered in one run, question by question across all of them, on one engine (a
    server with the largest window of the experiments; each cell's method keeps to its own); prints their table."""
    cells = [cell for args in runs for cell in experiment_cells(args)]
    first, engines = runs[0], [EngineSettings.from_flags(args) for args in runs]
    for args, engine in zip(runs[1:], engines[1:]):
        if (args.out, args.ids, replace(engine, context_window=0)) != (first.out, first.ids,
                                                                        replace(engines[0], context_window=0)):
            raise UserError(f"the experiments of --config {first.config} differ in their folder (out), ids or engine "
                            f"({args.dataset} against {first.dataset}): one run has one of each")
    ids = read_ids(first.ids)  # a missing or broken ids file is named before any model is loaded
    engine = replace(engines[0], context_window=max(cell.context_window for cell in cells))
    with clients(engine) as (llm, reasoner):
        rows = run_cells(cells, llm, first.out, limit=first.limit or 0, ids=ids, reasoning_llm=reasoner)
    from .tables import collect, markdown

    table = collect(list(dict.fromkeys(map(Path, rows["cell_file"]))))
    print(markdown(table))
    return 1 if table["failed"].any() else 0


def _settings(path: str) -> dict[str, Any]:
    import yaml

    try:
        settings = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise SettingsError(f"cannot read --config {path}: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise SettingsError(f"--config {path} is not valid YAML: {exc}") from exc
    if not isinstance(settings, dict):
        raise SettingsError(f"--config {path}: expected a mapping of settings, e.g. `dataset: hotpotqa`")
    return settings


def config_paths(path: str) -> list[str]:
    """The experiment files a config stands for: the files its `experiments:` list names (paths beside it), all
    answered in one run, or the config itself."""
    settings = _settings(path)
    if "experiments" not in settings:
        return [path]
    listed = settings["experiments"]
    if set(settings) != {"experiments"} or not isinstance(listed, list) or not listed or \
            not all(isinstance(item, str) for item in listed):
        raise SettingsError(f"--config {path}: experiments: is a list of experiment files (paths beside it) and "
                            "the file's only setting")
    paths = [str(Path(path).parent / item) for item in listed]
    if nested := [p for p in paths if "experiments" in _settings(p)]:
        raise SettingsError(f"--config {path}: {nested[0]} lists experiments itself; list experiment files only")
    return paths


def config_argv(path: str, run_parser: argparse.ArgumentParser) -> list[str]:
    """The settings of a YAML experiment file as `run` flags, to be checked by the same parser. Keys are the
    flags' names (`lengths: [2000, 8000]`, `no_cache: true`, `cap: {4096: 15}`), with `knobs:` (method knobs) and
    `options:` (dataset options) as maps."""
    settings = _settings(path)
    flags = {a.dest: a for a in run_parser._actions if a.option_strings and a.dest not in ("help", "config")}
    knobs = {dest for dest in flags if dest in knob_fields()}
    keys = set(flags) - knobs - {"option"}
    argv: list[str] = []
    for key, value in settings.items():
        if key == "knobs" and isinstance(value, dict):
            unknown = sorted(set(value) - knobs)
            if unknown:
                raise SettingsError(f"--config {path}: unknown knob(s) {', '.join(unknown)}; knobs: "
                                    f"{', '.join(sorted(knobs))}")
            argv += [token for k, v in value.items() for token in _as_flag(flags[k], v)]
        elif key == "options" and isinstance(value, dict):
            argv += [token for k, v in value.items() for token in ("--option", f"{k}={json.dumps(v)}")]
        elif key in keys:
            argv += _as_flag(flags[key], value)
        else:
            raise SettingsError(f"--config {path}: unknown setting {key!r}; settings: {', '.join(sorted(keys))}, "
                                "knobs (a map of method knobs), options (a map of dataset options)")
    return argv


def from_config(parser: argparse.ArgumentParser, path: str, given: list[str]) -> argparse.Namespace:
    """An experiment file's settings checked as `run` flags, then the flags given on the command line (they win)."""
    run_parser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["run"]
    from_file = config_argv(path, run_parser)
    try:
        parser.parse_args(["run", *from_file])
    except UserError as exc:
        raise UserError(f"--config {path}: {exc}") from None
    return parser.parse_args(["run", *from_file, *given])


def _as_flag(action: argparse.Action, value: Any) -> list[str]:
    flag = action.option_strings[0]
    if isinstance(action, argparse.BooleanOptionalAction):
        return [flag if value else action.option_strings[1]]
    if action.nargs == 0:  # a store_true flag such as --no-cache
        return [flag] if value else []
    if isinstance(value, list):
        value = ",".join(map(str, value))
    if isinstance(value, dict):
        value = ",".join(f"{k}={v}" for k, v in value.items())
    return [flag, str(value)]


