"""Run files, HELMET-style: every run of one setting (dataset, method, length, window, draw, knobs, options) is one
JSONL file named by that setting, one row per question, appended as each question finishes. `RunFile` is the one
place that names, reads, judges and writes them:

- **Names a person can read**: `<method>__<model>__L<length>__W<window>__n<n>__s<seed>[__<settings>][__r<repeat>]`,
  the settings being the knobs and dataset options that differ from their defaults spelled out as `key-value`
  tokens (`chunk_tokens-384_split-test`); only a name past `LONGEST_NAME` characters, or a value that is not a
  plain word or number, writes them as `settings-<digest>`. Files named by the older scheme (an 8-character digest
  alone) are still found under that name, and `python -m extlib.runfile rename` renames them in git.
- **One rule for stale rows**: a row is current when the version of the method that answered it is the code's (or
  the one pinned) and the weights that answered it are the ones expected (`is_current`). Computing answers stale
  rows again; tables leave them out and count them; a committed study is drawn from each file's newest version.
- **Appending under a lock** (`extlib.jsonl`), and the **reuse** of rows between studies (`adopt`).

Every row carries its setting (`spec`), the method's version, the weights' sha256 (bundled models) and the date.
Rows written before versions existed are version 1.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from .datasets import DATASETS
from .datasets import options as dataset_options
from .errors import MissingFile, UserError
from .jsonl import append, open_for_append, read_jsonl
from .methods import METHODS, knob_defaults
from .models import MODELS

LONGEST_NAME = 180  # characters of a file name; past it the settings are a digest (file systems stop at 255)
WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+-]*\Z")  # a value written as it is: no "_" (it joins tokens), no "/"
KEY = re.compile(r"[a-z0-9_]+\Z")  # a setting's name: no "-" (it ends the name in a token)


# --- names ---------------------------------------------------------------------------------------------------

def not_default(settings: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """The settings that are not at their default value (a setting without a default always counts)."""
    return {k: v for k, v in settings.items() if k not in defaults or v != defaults[k]}


def settings_apart(spec: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A run's knobs and dataset options that differ from their defaults: what its file name spells out, so one
    run written with or without its defaults (a notebook names them all, a config file few) is one file."""
    options = dataset_options(spec["dataset"]) if spec["dataset"] in DATASETS else {}
    return (not_default(spec.get("knobs") or {}, knob_defaults(spec["method"])),
            not_default(spec.get("options") or {}, options))


def _stem(spec: Mapping[str, Any]) -> str:
    return (f"{spec['method']}__{spec['model']}__L{spec['input_tokens']}__W{spec['context_window']}"
            f"__n{spec['n']}__s{spec['seed']}")


def _digest(knobs: Mapping[str, Any], options: Mapping[str, Any]) -> str:
    settings = {"knobs": knobs, "options": options} if options else knobs
    return hashlib.sha1(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:8]


def _token(key: str, value: Any) -> str | None:
    """`key-value`, or None when the value would not read back as itself: a string is written bare only when it is
    no JSON literal (so "384" and 384, "true" and True never share a name), anything else as its JSON."""
    if isinstance(value, str):
        try:
            json.loads(value)
            return None
        except json.JSONDecodeError:
            text = value
    else:
        text = json.dumps(value)
    return f"{key}-{text}" if KEY.match(key) and WORD.match(text) else None


def _finish(stem: str, settings: str, repeat: int) -> str:
    name = stem + (f"__{settings}" if settings else "") + (f"__r{repeat}" if repeat else "")
    return f"{name.replace('/', '_')}.jsonl"


def file_name(spec: Mapping[str, Any]) -> str:
    """The run file's name: its fixed settings, then its non-default knobs and dataset options as `key-value` tokens
    (knobs, then options, each in alphabetical order; knob and option names never coincide), joined by "_"."""
    knobs, options = settings_apart(spec)
    tokens = [_token(k, v) for part in (knobs, options) for k, v in sorted(part.items())]
    settings = "_".join(t for t in tokens if t)
    name = _finish(_stem(spec), settings, spec.get("repeat", 0))
    if None in tokens or len(name) > LONGEST_NAME:
        name = _finish(_stem(spec), f"settings-{_digest(knobs, options)}", spec.get("repeat", 0))
    return name


def legacy_name(spec: Mapping[str, Any]) -> str:
    """The name the older scheme gave the same run: the settings as an 8-character digest alone."""
    knobs, options = settings_apart(spec)
    return _finish(_stem(spec), _digest(knobs, options) if knobs or options else "", spec.get("repeat", 0))


# --- staleness -----------------------------------------------------------------------------------------------

def row_version(row: Mapping[str, Any]) -> int:
    """The version of the method that answered a row (rows from before versions existed: 1)."""
    return row.get("method_version", 1)


def check_versions(pins: Mapping[str, int]) -> dict[str, int]:
    """Pinned method versions, checked: known methods, versions from 1 to the code's."""
    for method, version in pins.items():
        if method not in METHODS:
            raise UserError(f"cannot pin the version of {method!r}: no such method; choose from {', '.join(METHODS)}")
        code = METHODS[method][0].version
        if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= code:
            raise UserError(f"cannot pin {method} to version {version!r}: a whole number from 1 to {code} "
                            "(the code's version)")
    return dict(pins)


def parse_pins(text: str) -> dict[str, int]:
    """`extagents=3,mapreduce=2` -> {"extagents": 3, "mapreduce": 2} (an argparse type; checked by check_versions)."""
    pins = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        method, _, version = item.partition("=")
        if not version.strip().isdigit():
            raise argparse.ArgumentTypeError(f"{item!r}: write METHOD=VERSION, e.g. extagents=3")
        pins[method.strip()] = int(version)
    return pins


def current_versions(pins: Mapping[str, int] | None = None) -> dict[str, int]:
    """The version whose rows are current, per method: the code's, or the one pinned (to read an older study)."""
    return {name: entry[0].version for name, entry in METHODS.items()} | check_versions(pins or {})


def expected_sha256(model: str) -> str | None:
    """The sha256 of the weights a run of `model` answers with, when it is a bundled model (the reasoning model of
    a `main+reasoner` run is not checked); None for an endpoint's model, whose weights are not known."""
    bundled = MODELS.get(model.split("+")[0])
    return bundled.sha256 if bundled else None


def is_current(row: Mapping[str, Any], current: Mapping[str, int], model_sha256: str | None) -> bool:
    """Whether a row was answered by the current version of its method and, when the row says which weights
    answered it, by the weights expected."""
    return (row_version(row) == current[row["spec"]["method"]]
            and row.get("model_sha256") in (None, model_sha256))


# --- one file ------------------------------------------------------------------------------------------------

class RunFile:
    """One run file: its rows, which of them are current, and appending under its lock."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @classmethod
    def locate(cls, root: str | Path, spec: Mapping[str, Any]) -> RunFile:
        """`root/<dataset>/<file_name>`, or the file the older scheme named (`legacy_name`) when only that one is
        there; both there is an error (a sitting of an older checkout wrote beside renamed rows)."""
        folder = Path(root) / spec["dataset"]
        readable, legacy = folder / file_name(spec), folder / legacy_name(spec)
        if readable != legacy and legacy.exists():
            if readable.exists():
                raise UserError(f"two run files hold the same run: {readable} and {legacy} (its older name); merge "
                                "them, or commit every row and run `python -m extlib.runfile rename results --apply`")
            return cls(legacy)
        return cls(readable)

    def __repr__(self) -> str:
        return f"RunFile({str(self.path)!r})"

    def rows(self) -> list[dict]:
        """Every row in order ([] for a file not yet written); a last line torn by a crash mid-write is no row."""
        return read_jsonl(self.path)

    def latest(self) -> dict[str, dict]:
        """The latest row per question id (a retried question appears more than once)."""
        return {row["id"]: row for row in self.rows()}

    def current(self, current: Mapping[str, int], model_sha256: str | None) -> dict[str, dict]:
        """The questions whose latest row is current (`is_current`): what computing does not answer again."""
        return {i: r for i, r in self.latest().items() if is_current(r, current, model_sha256)}

    def for_tables(self, current: Mapping[str, int]) -> dict[str, dict]:
        """Per question, its latest current row, else its latest row (stale): a file that two versions answered
        keeps both, and pinning the older version reads the older rows."""
        latest, latest_current = {}, {}
        for row in self.rows():
            latest[row["id"]] = row
            if is_current(row, current, expected_sha256(row["spec"]["model"])):
                latest_current[row["id"]] = row
        return latest | latest_current

    def newest(self) -> dict[str, dict]:
        """The rows a committed study is drawn from: per question, its latest row of the newest method version in
        the file (a rerun staged over many sittings holds the new version's first questions beside the old
        version's complete set: the new ones are drawn, partial, never mixed with the old)."""
        rows = self.rows()
        newest = max((row_version(r) for r in rows), default=1)
        return {r["id"]: r for r in rows if row_version(r) == newest}

    @contextmanager
    def appending(self) -> Iterator[Callable[[dict], None]]:
        """A function that appends one row (flushed at once), with the file locked against every other process
        until the block ends; RunFileBusy, and nothing written, while another process holds it."""
        with open_for_append(self.path) as sink:
            yield lambda row: append(sink, row)

    def adopt(self, source: RunFile) -> int:
        """Copy the latest row of every question of `source` that this file lacks (a question this file has,
        answered or failed, is left as it is): a preset's reuse of another study's rows. Returns how many."""
        have = self.latest()
        new = [row for question, row in source.latest().items() if question not in have]
        if new:
            with self.appending() as write:
                for row in new:
                    write(row)
        return len(new)


# --- many files ----------------------------------------------------------------------------------------------

def run_files(items: list[str | Path]) -> list[Path]:
    """Run files named directly or found (recursively) in the folders named; a missing one is an error."""
    paths: list[Path] = []
    for item in map(Path, items):
        if item.is_dir():
            paths += sorted(item.rglob("*.jsonl"))
        elif item.is_file():
            paths.append(item)
        else:
            raise MissingFile(f"no such run file or folder: {item}")
    return paths


def load_rows(paths: list[Path], include_stale: bool = False, versions: Mapping[str, int] | None = None,
              newest: bool = False) -> pd.DataFrame:
    """Every question's latest row of every run file, one row per (file, question), with the run's settings
    as columns (dataset, method, model, input_tokens, window), the file it came from, whether it failed, and
    whether it is stale (`is_current`, against the code's versions or those `versions` pins); stale rows only with
    `include_stale`. With `newest`, each file's rows of its newest version (`RunFile.newest`), stale or not: what a
    committed study is drawn from."""
    current = current_versions(versions)
    records = []
    for path in paths:
        run_file = RunFile(path)
        for row in (run_file.newest() if newest else run_file.for_tables(current)).values():
            spec = row["spec"]
            records.append({"dataset": spec["dataset"], "method": spec["method"], "model": spec["model"],
                            "input_tokens": spec["input_tokens"], "window": spec["context_window"],
                            "expected": spec["n"], "file": str(path), **row, "method_version": row_version(row),
                            "failed": bool(row["error"]),
                            "stale": not is_current(row, current, expected_sha256(spec["model"]))})
    rows = pd.DataFrame(records)
    return rows if include_stale or newest or rows.empty else rows[~rows["stale"]].reset_index(drop=True)


# --- renaming files named by the older scheme ----------------------------------------------------------------

def _as_named(spec: dict[str, Any]) -> dict[str, Any]:
    """A header's setting as its file was named: rows written before runs took only their own method's knobs carry
    every knob of their config (a `rating` beside Direct Input), which their names left out; a knob no method takes
    any more (`restated`) is kept."""
    every = {k for method in METHODS for k in knob_defaults(method)}
    own = knob_defaults(spec["method"])
    return {**spec, "knobs": {k: v for k, v in (spec.get("knobs") or {}).items() if k in own or k not in every}}


def renames(folders: list[str | Path]) -> tuple[list[tuple[Path, Path, bool]], list[str]]:
    """(old path, new path, whether the old name is the older scheme's under today's defaults) for every run file
    under `folders` not named as its rows' settings name it today, and why any other is left as it is. A file named
    when a default was another (its rows spell the setting out) is renamed by its rows' settings too."""
    moves, left = [], []
    for path in run_files(folders):
        headers = list({json.dumps(row["spec"], sort_keys=True): _as_named(row["spec"]) for row in RunFile(path).rows()
                        if "spec" in row}.values())
        if not headers:
            continue  # not a run file (a benchmark's own records)
        new = {file_name(h) for h in headers}
        if len(new) > 1:
            left.append(f"{path}: its rows' settings disagree on its name ({', '.join(sorted(new))})")
        elif (target := path.with_name(new.pop())) != path:
            moves.append((path, target, path.name in {legacy_name(h) for h in headers}))
    taken = [new for _, new, _ in moves]
    if clashes := sorted({str(p) for p in taken if taken.count(p) > 1 or p.exists()}):
        raise UserError(f"renaming would merge run files into {clashes}; merge them by hand first")
    return moves, left


def main(argv: list[str] | None = None) -> int:
    """`python -m extlib.runfile rename FOLDER... [--apply]`: list (or, with --apply, `git mv`) the renames."""
    import argparse
    import subprocess

    parser = argparse.ArgumentParser(prog="python -m extlib.runfile", description=main.__doc__)
    parser.add_argument("verb", choices=["rename"])
    parser.add_argument("folders", nargs="+", help="folders of run files, e.g. results docs/results")
    parser.add_argument("--apply", action="store_true", help="git mv each file (every row committed first)")
    args = parser.parse_args(argv)
    busy = [p for f in args.folders for p in [*Path(f).rglob("*.lock"), *Path(f).rglob(".*.running.ipynb")]]
    if busy:
        raise UserError(f"a sitting is running or was killed ({busy[0]}): let it finish, or remove its leftovers")
    moves, left = renames(args.folders)
    for old, new, older_scheme in moves:
        print(f"{old}\t{new.name}" + ("" if older_scheme else "\t(named when a default was another)"))
    for reason in left:
        print(f"left as it is: {reason}")
    if args.apply and moves:
        dirty = subprocess.run(["git", "status", "--porcelain", *args.folders], capture_output=True, text=True,
                               check=True).stdout
        if dirty:
            raise UserError(f"commit the rows first; git status shows:\n{dirty}")
        for old, new, _ in moves:
            subprocess.run(["git", "mv", str(old), str(new)], check=True)
    print(f"{len(moves)} run files {'renamed' if args.apply else 'to rename (--apply renames them)'}, "
          f"{len(left)} left as they are")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
