"""Experiments HELMET-style: every (dataset, method, length, settings) run is one JSONL file named by its
settings, one row per question, appended as each finishes; `collect` turns run files into one table.

A question that fails (an LLM call exhausted its retries, an unexpected error) is written as a row with its
error and scores 0; a later run of the same settings retries it (up to `max_attempts` in all) and skips the
rows already answered, so an interrupted run resumes where it stopped and no question is ever dropped.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from .datasets import truncation
from .llm import LLMClient
from .methods import make_method
from .methods.base import PromptTooLong
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

    def path(self, root: Path) -> Path:
        """runs/<dataset>/<method>__<model>__L<len>__W<window>__n<n>__s<seed>[__<knobs digest>].jsonl"""
        name = f"{self.method}__{self.model}__L{self.input_tokens}__W{self.context_window}__n{self.n}__s{self.seed}"
        if self.knobs:
            name += "__" + hashlib.sha1(json.dumps(self.knobs, sort_keys=True).encode()).hexdigest()[:8]
        return root / self.dataset / f"{name.replace('/', '_')}.jsonl"


def read_rows(path: Path) -> dict[str, dict]:
    """The latest row per question id (a retried question appears more than once). A last line torn by a
    crash mid-write is no row: its question counts as not answered."""
    rows: dict[str, dict] = {}
    if path.exists():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                if number == len(lines) and not text.endswith("\n"):
                    break
                raise ValueError(f"{path}, line {number}: not a JSON row ({exc}); remove or repair that line") from exc
            rows[row["id"]] = row
    return rows


def _drop_torn_tail(path: Path) -> None:
    """Appending after a partial last line would glue the next row onto it and lose both."""
    if path.exists():
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            path.write_bytes(data[:data.rfind(b"\n") + 1])


def run(spec: RunSpec, tasks: list[Task], llm: LLMClient, root: Path, reasoning_llm: LLMClient | None = None,
        max_attempts: int = 2, progress: bool = True) -> Path:
    """Answer every task not yet answered in spec's file; returns the file."""
    path = spec.path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    method = make_method(spec.method, **{"context_window": spec.context_window, "input_tokens": spec.input_tokens,
                                         "truncate": truncation(spec.dataset), **spec.knobs})
    done = read_rows(path)
    todo = [t for t in tasks if t.id not in done or (done[t.id]["error"] and done[t.id]["attempt"] < max_attempts)]
    header = {"spec": spec.__dict__}
    _drop_torn_tail(path)
    with open(path, "a", encoding="utf-8") as sink:
        for task in tqdm(todo, desc=f"{spec.method} L={spec.input_tokens:,}", unit="question", disable=not progress):
            start = time.time()
            try:
                prediction = method.run(task, llm, reasoning_llm)
            except PromptTooLong:
                raise  # a setting no question can run with: stop and say so
            except Exception as exc:  # one question's failure must not end the run or lose its row
                prediction = Prediction(task.id, "", 0, [], error=f"{type(exc).__name__}: {exc} "
                                        f"({traceback.format_exc(limit=2).splitlines()[-1]})")
            attempt = done.get(task.id, {}).get("attempt", 0) + 1
            sink.write(json.dumps(row(task, prediction, attempt, time.time() - start, header),
                                  ensure_ascii=False) + "\n")
            sink.flush()
    return path


def row(task: Task, prediction: Prediction, attempt: int, seconds: float, header: dict) -> dict:
    scores = score(prediction.answer, task.answers, task.metric) if not prediction.error else {"f1": 0.0, "em": 0.0}
    return {"id": task.id, "question": task.question, "answers": task.answers, "answer": prediction.answer,
            **scores, "error": prediction.error, "attempt": attempt, "rounds": prediction.rounds,
            "seconds": round(seconds, 3), "usage": prediction.usage, "extra": prediction.extra,
            "meta": {k: v for k, v in task.meta.items() if k != "passages"}, **header,
            "calls": [asdict(c) for c in prediction.calls]}


def collect(paths: list[Path]) -> list[dict]:
    """One summary row per run file: F1/EM over all its questions (failed ones score 0 and are counted),
    and the mean cost per question."""
    table = []
    for path in paths:
        rows = list(read_rows(path).values())
        if not rows:
            continue
        spec = rows[0]["spec"]
        n = len(rows)

        def mean(key, rows=rows, n=n) -> float:
            return sum(key(r) for r in rows) / n

        f1_low, f1_high = bootstrap_interval([r["f1"] for r in rows])
        table.append({
            "dataset": spec["dataset"], "method": spec["method"], "model": spec["model"],
            "input_tokens": spec["input_tokens"], "window": spec["context_window"], "questions": n,
            "expected": spec["n"], "failed": sum(bool(r["error"]) for r in rows),
            "f1": mean(lambda r: r["f1"]), "f1_low": f1_low, "f1_high": f1_high, "em": mean(lambda r: r["em"]),
            "calls": mean(lambda r: r["usage"]["calls"]), "prompt_tokens": mean(lambda r: r["usage"]["prompt_tokens"]),
            "completion_tokens": mean(lambda r: r["usage"]["completion_tokens"]),
            "seconds": mean(lambda r: r["seconds"]), "cache_hits": mean(lambda r: r["usage"]["cache_hits"]),
            "measures": _extra_means(rows), "f1_by_id": {r["id"]: r["f1"] for r in rows}, "file": str(path)})
    return table


def bootstrap_interval(values: list[float], resamples: int = 2000, seed: int = 0) -> tuple[float, float]:
    """95% percentile-bootstrap interval of the mean over questions: with 20 questions one question is 5 F1
    points, so a table without it invites reading noise as a ranking."""
    if not values:
        return 0.0, 0.0
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(values, k=len(values))) / len(values) for _ in range(resamples))
    return means[int(0.025 * resamples)], means[int(0.975 * resamples) - 1]


def paired_differences(table: list[dict], reference: str = "extagents") -> list[dict]:
    """F1 of `reference` minus each other method's on the questions both answered (same dataset, length,
    model, window), with a paired bootstrap interval and the reference's per-question wins, ties, losses."""
    out = []
    for ref in (r for r in table if r["method"] == reference):
        for other in table:
            same_cell = all(other[k] == ref[k] for k in ("dataset", "input_tokens", "model", "window"))
            if other["method"] == reference or not same_cell:
                continue
            shared = sorted(ref["f1_by_id"].keys() & other["f1_by_id"].keys())
            if not shared:
                continue
            diffs = [ref["f1_by_id"][q] - other["f1_by_id"][q] for q in shared]
            low, high = bootstrap_interval(diffs)
            out.append({"dataset": ref["dataset"], "input_tokens": ref["input_tokens"], "method": other["method"],
                        "questions": len(shared), "difference": sum(diffs) / len(diffs), "low": low, "high": high,
                        "wins": sum(d > 0 for d in diffs), "ties": sum(d == 0 for d in diffs),
                        "losses": sum(d < 0 for d in diffs)})
    return out


def _extra_means(rows: list[dict]) -> dict[str, float]:
    """Means of the numeric method measures (e.g. search turns, decomposition ratio) over the answered rows."""
    answered = [r["extra"] for r in rows if not r["error"]]
    keys = sorted({k for e in answered for k, v in e.items()
                   if isinstance(v, (int, float)) and not isinstance(v, bool)})
    return {k: sum(e.get(k, 0) for e in answered) / len(answered) for k in keys} if answered else {}


def markdown(table: list[dict], reference: str = "extagents") -> str:
    head = ("| dataset | L | method | F1 | F1 95% CI | EM | questions (failed) | LLM calls | prompt tokens "
            "| completion tokens | wall s | calls from cache |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    lines = [f"| {r['dataset']} | {r['input_tokens']:,} | {r['method']} | {100 * r['f1']:.1f} | "
             f"{100 * r['f1_low']:.0f}–{100 * r['f1_high']:.0f} | {100 * r['em']:.1f} | "
             f"{r['questions']}/{r['expected']} ({r['failed']}) | {r['calls']:.1f} | {r['prompt_tokens']:,.0f} | "
             f"{r['completion_tokens']:,.0f} | {r['seconds']:.1f} | {r['cache_hits']:.1f} |"
             for r in sorted(table, key=lambda r: (r["dataset"], r["input_tokens"], -r["f1"]))]
    measured = [r for r in table if r.get("measures")]
    if measured:
        lines.append("\n| dataset | L | method | method measures (mean per answered question) |\n|---|---|---|---|")
        lines += [f"| {r['dataset']} | {r['input_tokens']:,} | {r['method']} | "
                  + ", ".join(f"{k} {v:.2f}" for k, v in r["measures"].items()) + " |"
                  for r in sorted(measured, key=lambda r: (r["dataset"], r["input_tokens"], r["method"]))]
    paired = paired_differences(table, reference)
    if paired:
        lines.append(f"\n| dataset | L | {reference} F1 minus | same questions | difference | 95% CI "
                     f"| {reference} better / tie / worse |\n|---|---|---|---|---|---|---|")
        lines += [f"| {d['dataset']} | {d['input_tokens']:,} | {d['method']} | {d['questions']} | "
                  f"{100 * d['difference']:+.1f} | {100 * d['low']:+.0f} to {100 * d['high']:+.0f} | "
                  f"{d['wins']} / {d['ties']} / {d['losses']} |"
                  for d in sorted(paired, key=lambda d: (d["dataset"], d["input_tokens"], -d["difference"]))]
    return head + "\n".join(lines)
