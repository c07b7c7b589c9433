"""The command line's settings, each written once: method knobs become flags from the methods' configuration
classes (type, bounds, choices, help and every method's default), and an experiment file (YAML) becomes the
same flags, so a checked-in config is checked exactly as a command line is."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import typing
from pathlib import Path
from typing import Any

from .errors import UserError
from .methods import METHODS, knob_names
from .methods.base import knob_types


class SettingsError(UserError):
    """A setting the user can fix; the message names it."""


def bounded(cast: type, low: float | None, high: float | None, what: str):
    """An argparse type: `cast` the text and check low <= value <= high, or say what was expected."""
    def parse(value: str):
        try:
            number = cast(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {value!r}") from None
        if (low is not None and number < low) or (high is not None and number > high):
            raise argparse.ArgumentTypeError(f"expected {what}, got {number}")
        return number
    return parse


positive = bounded(int, 1, None, "a positive integer")


@functools.cache
def knob_fields() -> dict[str, tuple[Any, dict, dict[str, Any]]]:
    """Knob name -> (its type, its metadata, {method: default}) over every method that takes it."""
    found: dict[str, tuple[Any, dict, dict[str, Any]]] = {}
    for name, (method, _) in METHODS.items():
        kinds = knob_types(method.config_class)
        taken = set(knob_names(name))
        for f in dataclasses.fields(method.config_class):
            if f.name in taken:
                default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
                found.setdefault(f.name, (kinds[f.name], dict(f.metadata), {}))[2][name] = default
    return found


def _flag_type(kind: Any, meta: dict) -> tuple[type | None, Any]:
    """The scalar type of a knob (bool, int, float, str) and its argparse converter; (None, None) for knobs
    that are no command-line value (e.g. DRAG's demonstrations)."""
    base = next((t for t in typing.get_args(kind) if t is not type(None)), kind)
    if base is bool:
        return bool, None
    if base is int:
        low = 1 if meta.get("low") is None else meta["low"]
        return int, bounded(int, low, None, "a positive integer" if low == 1 else f"an integer >= {low:g}")
    if base is float:
        low, high = meta.get("low"), meta.get("high")
        what = f"a number between {low:g} and {high:g}" if low is not None and high is not None else "a number"
        return float, bounded(float, low, high, what)
    if base is str:
        return str, str
    return None, None


def add_knob_flags(parser: argparse.ArgumentParser, exclude: tuple[str, ...] = ()) -> None:
    """One flag per method knob (--chunk-tokens, --gks/--no-gks, ...), default unset: a method not told
    otherwise keeps its own default, which the help shows."""
    group = parser.add_argument_group("method knobs (each method takes the ones it has; defaults by method)")
    for name, (kind, meta, defaults) in sorted(knob_fields().items()):
        scalar, convert = _flag_type(kind, meta)
        if name in exclude or scalar is None:
            continue
        values = set(map(repr, defaults.values()))
        owners = "" if len(defaults) == len(METHODS) else ", ".join(defaults) + "; "
        shown = (f"{owners}default {next(iter(defaults.values()))}" if len(values) == 1 else
                 "defaults: " + ", ".join(f"{m} {d}" for m, d in defaults.items()))
        options: dict[str, Any] = {"dest": name, "default": None, "help": f"{meta.get('help', '')} ({shown})"}
        if scalar is bool:
            options["action"] = argparse.BooleanOptionalAction
        else:
            options["type"] = convert
            if meta.get("choices"):
                options["choices"] = meta["choices"]
        group.add_argument("--" + name.replace("_", "-"), **options)


def add_config_flags(parser: argparse.ArgumentParser, config_class: type, title: str) -> None:
    """One flag per field of one configuration class (e.g. the survey's), its default shown, unset by default."""
    group = parser.add_argument_group(title)
    kinds = knob_types(config_class)
    for f in dataclasses.fields(config_class):
        scalar, convert = _flag_type(kinds[f.name], f.metadata)
        options: dict[str, Any] = {"dest": f.name, "default": None,
                                   "help": f"{f.metadata.get('help', '')} (default {f.default})"}
        if scalar is bool:
            options["action"] = argparse.BooleanOptionalAction
        else:
            options["type"] = convert
        group.add_argument("--" + f.name.replace("_", "-"), **options)


def config_from_flags(args: argparse.Namespace, config_class: type) -> Any:
    """The configuration with the fields given as flags; the rest keep their defaults."""
    return config_class(**{f.name: getattr(args, f.name) for f in dataclasses.fields(config_class)
                           if getattr(args, f.name, None) is not None})


def given_knobs(args: argparse.Namespace) -> dict[str, Any]:
    return {name: getattr(args, name) for name in knob_fields() if getattr(args, name, None) is not None}


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


