"""Run files into tables: every question's row (`load_rows`), one summary row per run file with a bootstrap
interval (`collect`), ExtAgents paired with each method on the same questions (`paired_differences`), and the
Markdown that `extagents report` prints. Rows of another version of their method than the code's are stale:
left out of every summary, and counted. A committed study of an older version is read by pinning it
(`versions={"extagents": 3}`, `extagents report --versions extagents=3`): then that version's rows are the current
ones and the code's are stale."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from .runfile import load_rows, settings_apart

COLUMNS = ["study", "dataset", "method", "setting", "model", "input_tokens", "window", "questions", "expected",
           "failed", "stale", "f1", "f1_low", "f1_high", "em", "calls", "prompt_tokens", "completion_tokens",
           "seconds", "cache_hits", "measures", "f1_by_id", "knobs", "options", "placement", "file"]
KNOWLEDGE = ["study", "dataset", "input_tokens", "model", "window"]  # what one study's files of a length share
# what the files of one cell share (their questions are paired): the knowledge, and the dataset options in which
# files of the study differ (a robustness placement), whichever the method
CELL = [*KNOWLEDGE, "placement"]
LEAD = ("study", "setting", "placement")  # the columns a paired row takes from its reference's file


def bootstrap_interval(values: list[float], resamples: int = 2000, seed: int = 0) -> tuple[float, float]:
    """95% percentile-bootstrap interval of the mean over questions: with 20 questions one question is 5 F1
    points, so a table without it invites reading noise as a ranking."""
    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        return 0.0, 0.0
    if np.all(values == values[0]):  # no spread to resample (and one question has none)
        return _exact(values[0]), _exact(values[0])
    result = stats.bootstrap((values,), np.mean, n_resamples=resamples, confidence_level=0.95,
                             method="percentile", random_state=np.random.default_rng(seed))
    return _exact(result.confidence_interval.low), _exact(result.confidence_interval.high)


def _exact(value: float) -> float:
    """An interval end of 0 as 0: a resample of ties and opposite scores can sum to -1e-17 instead, and -0.0 prints
    as "-0" too, which reads as an interval that excludes 0. Other ends are kept as they are (a mean drawn with its
    interval must stay inside it)."""
    return 0.0 if abs(value) < 1e-9 else float(value)


def collect(paths: list[Path], versions: Mapping[str, int] | None = None) -> pd.DataFrame:
    """One summary row per run file: F1/EM over all its questions (failed ones score 0 and are counted),
    and the mean cost per question; rows of other versions than the code's (or than `versions` pins) left out.
    A file's study is the folder its dataset folder is in (results/cpu/<study>/<dataset>/<file>.jsonl), and its
    setting names the knobs and dataset options in which it differs from the other files of its study, dataset,
    length and method (the ablation's variants, the robustness placements), so one table holds every study."""
    everything = load_rows(paths, include_stale=True, versions=versions)
    stale = everything.groupby("file")["stale"].sum().to_dict() if len(everything) else {}
    rows = everything[~everything["stale"]] if len(everything) else everything
    table = []
    for file, run in (rows.groupby("file", sort=False) if len(rows) else []):
        usage = pd.DataFrame(list(run["usage"]))
        first = run.iloc[0]
        f1_low, f1_high = bootstrap_interval(run["f1"].tolist())
        table.append({
            "dataset": first["dataset"], "method": first["method"],
            **dict(zip(("knobs", "options"), settings_apart(first["spec"]))), "model": first["model"],
            "input_tokens": first["input_tokens"], "window": first["window"], "questions": len(run),
            "expected": first["expected"], "failed": int(run["failed"].sum()), "stale": int(stale.get(file, 0)),
            "f1": run["f1"].mean(),
            "f1_low": f1_low, "f1_high": f1_high, "em": run["em"].mean(), "calls": usage["calls"].mean(),
            "prompt_tokens": usage["prompt_tokens"].mean(), "completion_tokens": usage["completion_tokens"].mean(),
            "seconds": run["seconds"].mean(), "cache_hits": usage["cache_hits"].mean(),
            "measures": _extra_means(run), "f1_by_id": dict(zip(run["id"], run["f1"])), "file": file})
    out = pd.DataFrame(table, columns=COLUMNS)
    out["study"] = _studies(out["file"].tolist())
    out["placement"] = _apart(out, KNOWLEDGE, "options")
    knobs = _apart(out, [*KNOWLEDGE, "method"], "knobs")
    out["setting"] = [", ".join(label for label in pair if label) for pair in zip(knobs, out["placement"])]
    # stale rows by method, including files with no current row at all (which have no summary row)
    out.attrs["stale"] = (everything[everything["stale"]].groupby("method").size().to_dict()
                          if len(everything) else {})
    return out


def _studies(files: list[str]) -> list[str]:
    """Each run file's study: the folder its dataset folder is in, named from the folder all the studies share
    (results/cpu/03_latency/concurrency_1/<dataset>/<file> -> 03_latency/concurrency_1, given results/cpu)."""
    folders = [Path(f).parent.parent for f in files]
    if not folders:
        return []
    shared = Path(os.path.commonpath(folders))
    return [str(f.relative_to(shared)) if f != shared else f.name for f in folders]


def _apart(table: pd.DataFrame, group: list[str], column: str) -> list[str]:
    """Per file, "key=value" for each setting of `column` (knobs or options) whose value differs among the files
    of its `group` ("" for a file alike its peers in them)."""
    labels = []
    for _, file in table.iterrows():
        peers = table.loc[(table[group] == file[group]).all(axis=1), column].tolist()
        apart = sorted({k for settings in peers for k in settings if any(p.get(k) != settings.get(k) for p in peers)})
        labels.append(", ".join(f"{k}={file[column].get(k)}" for k in apart))
    return labels


def _extra_means(run: pd.DataFrame) -> dict[str, float]:
    """Means of the numeric method measures (e.g. search turns, decomposition ratio) over the answered rows;
    a measure a row lacks counts 0."""
    answered = pd.DataFrame(list(run.loc[~run["failed"], "extra"]))
    numeric = [c for c in sorted(answered.columns) if answered[c].map(
        lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)).any()]
    return {c: float(pd.to_numeric(answered[c], errors="coerce").fillna(0).mean()) for c in numeric}


def paired_differences(table: pd.DataFrame, reference: str = "extagents") -> pd.DataFrame:
    """F1 of `reference` minus each other method's on the questions both answered (same dataset, length,
    model, window), with a paired bootstrap interval and the reference's per-question wins, ties, losses."""
    out = []
    cell = [c for c in CELL if c in table]
    for _, ref in table[table["method"] == reference].iterrows():
        same_cell = (table[cell] == ref[cell]).all(axis=1) & (table["method"] != reference)
        for _, other in table[same_cell].iterrows():
            shared = sorted(ref["f1_by_id"].keys() & other["f1_by_id"].keys())
            if not shared:
                continue
            diffs = np.array([ref["f1_by_id"][q] - other["f1_by_id"][q] for q in shared])
            low, high = bootstrap_interval(diffs)
            out.append({**{c: ref[c] for c in LEAD if c in ref},
                        "dataset": ref["dataset"], "input_tokens": ref["input_tokens"], "method": other["method"],
                        "questions": len(shared), "difference": diffs.mean(), "low": low, "high": high,
                        "wins": int((diffs > 0).sum()), "ties": int((diffs == 0).sum()),
                        "losses": int((diffs < 0).sum())})
    return pd.DataFrame(out, columns=[*(c for c in LEAD if c in table), "dataset",
                                      "input_tokens", "method", "questions", "difference", "low", "high", "wins",
                                      "ties", "losses"])


def paired_by_question(rows: pd.DataFrame, by: list[str], hue: str, reference: str,
                       value: str = "f1") -> pd.DataFrame:
    """Per group of `by` and each `hue` value other than `reference`: the mean over the questions both answered of
    `reference`'s `value` minus the other's (a question's median over repeats), its paired 95% bootstrap interval,
    and the reference's wins, ties and losses. What a notebook's paired table and the ablation's figure show."""
    if rows.empty or reference not in set(rows[hue]):
        raise ValueError(f"no rows of {reference!r} in {hue!r} to pair the others with "
                         f"(there are {sorted(set(rows[hue])) if len(rows) else 'no rows'})")
    per_question = rows.groupby([*by, hue, "id"], sort=True)[value].median()
    out = []
    for keys, group in per_question.groupby(level=list(range(len(by))), sort=True):
        keys = keys if isinstance(keys, tuple) else (keys,)
        by_hue = {h: g.droplevel(list(range(len(by) + 1))) for h, g in group.groupby(level=len(by))}
        if reference not in by_hue:
            continue
        for other, scores in by_hue.items():
            shared = by_hue[reference].index.intersection(scores.index)
            if other == reference or shared.empty:
                continue
            diffs = (by_hue[reference][shared] - scores[shared]).to_numpy(dtype=float)
            low, high = bootstrap_interval(diffs.tolist())
            out.append({**dict(zip(by, keys)), hue: other, "questions": len(shared), "difference": diffs.mean(),
                        "low": low, "high": high, "wins": int((diffs > 0).sum()), "ties": int((diffs == 0).sum()),
                        "losses": int((diffs < 0).sum())})
    return pd.DataFrame(out, columns=[*by, hue, "questions", "difference", "low", "high", "wins", "ties", "losses"])


def markdown(table: pd.DataFrame, reference: str = "extagents") -> str:
    """The tables `extagents report` prints: one row per run file, its method measures, and `reference` paired with
    every other method of its cell. A study column appears when the files come from several studies, a setting
    column when files of one cell differ in their knobs or options."""
    shows_study = "study" in table and table["study"].nunique() > 1
    shows_setting = "setting" in table and table["setting"].astype(bool).any()

    def first(r: tuple) -> str:  # the study (if shown), dataset, length, method and setting (if shown) of row r
        study, setting = f"{r.study} | " if shows_study else "", f" | {r.setting}" if shows_setting else ""
        return f"| {study}{r.dataset} | {r.input_tokens:,} | {r.method}{setting} |"

    names = ("study | " if shows_study else "") + "dataset | L | method" + (" | setting" if shows_setting else "")
    rule = "|---" * (3 + shows_study + shows_setting)
    head = (f"| {names} | F1 | F1 95% CI | EM | questions (failed) | LLM calls | prompt tokens | completion tokens "
            f"| wall s | calls from cache |\n{rule}|---|---|---|---|---|---|---|---|---|\n")
    stale = table.attrs.get("stale", {})
    order = [c for c in ("study", "dataset", "input_tokens", "placement") if c in table]
    ties = [c for c in ("method", "setting") if c in table]  # rows that tie are ordered by what they are
    ordered = table.assign(_f1=-table["f1"]).sort_values([*order, "_f1", *ties], kind="stable")
    lines = [f"{first(r)} {100 * r.f1:.1f} | "
             f"{100 * r.f1_low:.0f}–{100 * r.f1_high:.0f} | {100 * r.em:.1f} | "
             f"{r.questions}/{r.expected} ({r.failed}) | {r.calls:.1f} | {r.prompt_tokens:,.0f} | "
             f"{r.completion_tokens:,.0f} | {r.seconds:.1f} | {r.cache_hits:.1f} |" for r in ordered.itertuples()]
    has_measures = table["measures"].map(bool).astype(bool)
    measured = table[has_measures].sort_values([*order, *ties], kind="stable")
    if len(measured):
        lines.append(f"\n| {names} | method measures (mean per answered question) |\n{rule}|---|")
        lines += [f"{first(r)} " + ", ".join(f"{k} {v:.2f}" for k, v in r.measures.items()) + " |"
                  for r in measured.itertuples()]
    paired = paired_differences(table, reference)
    if len(paired):
        paired = paired.assign(_d=-paired["difference"]).sort_values([*order, "_d", "method"], kind="stable")
        lines.append(f"\n| {names.replace('method', f'{reference} F1 minus')} | same questions | difference | 95% CI "
                     f"| {reference} better / tie / worse |\n{rule}|---|---|---|---|")
        lines += [f"{first(d)} {d.questions} | {100 * d.difference:+.1f} | {100 * d.low:+.0f} to {100 * d.high:+.0f} | "
                  f"{d.wins} / {d.ties} / {d.losses} |" for d in paired.itertuples()]
    note = (f"\n\n{sum(stale.values())} stale rows ({', '.join(f'{m} {n}' for m, n in sorted(stale.items()))}: "
            "answered by another version of their method) are left out; run the experiment again to answer them "
            "anew." if stale else "")
    return head + "\n".join(lines) + note


def write_csv(table: pd.DataFrame, path: str | Path) -> None:
    """The summary table without its per-question columns."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    table.drop(columns=["measures", "f1_by_id", "knobs", "options"]).to_csv(path, index=False)
