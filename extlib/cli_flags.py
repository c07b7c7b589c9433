"""The command line's settings, each written once: method knobs become flags from the methods' configuration
classes (type, bounds, choices, help and every method's default); extlib.configs turns an experiment file into the
same flags."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import typing
from typing import Any

from .errors import UserError
from .methods import METHODS, knob_names
from .methods.base import knob_types


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


def flag_type(kind: Any, meta: dict) -> tuple[type | None, Any]:
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
        scalar, convert = flag_type(kind, meta)
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


def given_knobs(args: argparse.Namespace) -> dict[str, Any]:
    return {name: getattr(args, name) for name in knob_fields() if getattr(args, name, None) is not None}


def key_values(pairs: list[str], flag: str) -> dict:
    """["k=v", ...] -> {k: v}, each value read as JSON when it is (a number, true, a list), else as text."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UserError(f"{flag} {pair!r}: write KEY=VALUE")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value  # a bare word such as reverse or a path
    return out


def method_names(text: str | None, allow_all: bool) -> list[str]:
    """A comma list of methods (or all), checked."""
    if text == "all" and allow_all:
        return list(METHODS)
    names = [m.strip() for m in (text or "").split(",") if m.strip()]
    unknown = [m for m in names if m not in METHODS]
    if unknown or not names:
        raise UserError(f"unknown method(s) {unknown or '(none given)'}; choose from: {', '.join(METHODS)}"
                        + (", or all" if allow_all else ""))
    return names
