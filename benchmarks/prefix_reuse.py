"""Issue 14: where ExtAgents' time goes, and what reusing each chunk's KV state across rounds saves.

Two arms, side by side in one run on the bundled model (response cache off, one question at a time across both):
  facts-first   the small prompts as they are: the facts found so far, then the chunk; no prompt-state cache
  chunk-first   the chunk leads every round's prompt and the server keeps prompt states (--cache-mb), so an
                agent's round t+1 computes only the new messages and the instruction
Material: the two-hop demo (56,541 tokens, window 8,192, 2,048-token chunks; the question `make demo` asks) and
the development draw (seed 1) of the beyond-window settings (configs/beyond_window, whose test draw is seed 2).
Rows go to docs/results/prefix_reuse/<arm>/ as `extagents run` writes them (a rerun continues), with every call's
computed and cached prompt tokens and the server's prefill and generation time; the server's peak memory per
question (and ExtAgents version) goes to <arm>/server_memory.jsonl. `--report` prints the tables.

    .venv/bin/python benchmarks/prefix_reuse.py [--sets demo,hotpotqa,hotpotqa-longdoc,zh-longdoc] [--n 10]
    .venv/bin/python benchmarks/prefix_reuse.py --report
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from extlib.cells import Cell
from extlib.datasets import load_tasks
from extlib.machine import cpu_name
from extlib.methods import ExtAgents
from extlib.models import DEFAULT_MODEL
from extlib.runfile import RunFile, load_rows
from extlib.runner import answer_cell
from extlib.samples import demo_task
from extlib.serve import LocalServer
from extlib.tables import bootstrap_interval

ROOT = Path(__file__).parents[1]
OUT = ROOT / "docs" / "results" / "prefix_reuse"


@dataclass(frozen=True)
class Arm:
    layout: str
    prompt_cache: bool


ARMS = {"facts-first": Arm("facts-first", False), "chunk-first": Arm("chunk-first", True)}


@dataclass
class Setting:
    window: int
    input_tokens: int
    knobs: dict = field(default_factory=dict)
    seed: int = 1  # the development draw


DRAW = 30  # questions in a set's development draw; --n answers its first n, so raising --n later continues the run


SETTINGS = {  # the demo as `make demo` runs it; the rest as configs/beyond_window at 8x / 4x
    "demo": Setting(8192, 57000),
    "hotpotqa": Setting(2048, 8000, {"chunk_tokens": 512, "paragraphs": True, "rating": "order"}),
    "hotpotqa-longdoc": Setting(1024, 8192, {"chunk_tokens": 512, "paragraphs": True}),
    "zh-longdoc": Setting(1024, 8192, {"chunk_tokens": 512}),
}


def peak_rss_mb(pid: int) -> float:
    """The server's peak resident memory so far (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for process {pid}")


def measure(sets: list[str], n: int, cache_mb: int, model: str, out: Path) -> None:
    for name in sets:
        setting = SETTINGS[name]
        with LocalServer(model, context_window=setting.window) as plain, \
                LocalServer(model, context_window=setting.window, prompt_cache_mb=cache_mb) as cached:
            servers = {"facts-first": plain, "chunk-first": cached}
            if any(server.process is None for server in servers.values()):
                raise SystemExit("a server of `extagents serve` was reused; stop it, so that both arms run on servers "
                                 "started here with known settings")
            llms = {arm: server.client(concurrency=1) for arm, server in servers.items()}
            tokenizer = llms["facts-first"].tokenizer
            draw = [demo_task()] if name == "demo" else \
                load_tasks(name, setting.input_tokens, n=DRAW, seed=setting.seed, tokenizer=tokenizer)
            tasks = draw[:n]
            for k in range(1, len(tasks) + 1):  # one question at a time across both arms
                for arm, llm in llms.items():
                    knobs = {**setting.knobs, "layout": ARMS[arm].layout}
                    cell = Cell(name, "extagents", setting.input_tokens, knobs, n=len(draw), seed=setting.seed,
                                model=llm.model, context_window=setting.window)
                    path = answer_cell(cell, tasks[:k], llm, out / arm)
                    memory = out / arm / "server_memory.jsonl"
                    seen = {(p["set"], p["id"]) for p in memory_rows(memory)}
                    if (name, tasks[k - 1].id) not in seen and tasks[k - 1].id in RunFile(path).latest():
                        with memory.open("a") as sink:
                            sink.write(json.dumps({"id": tasks[k - 1].id, "set": name, "cache_mb": cache_mb if
                                                   ARMS[arm].prompt_cache else 0,
                                                   "peak_rss_mb": round(peak_rss_mb(servers[arm].process.pid)),
                                                   "machine": cpu_name(), "version": ExtAgents.version}) + "\n")


def memory_rows(path: Path) -> list[dict]:
    """The server's peak memory rows of the code's ExtAgents version (a row without a version is older)."""
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [r for r in rows if r.get("version") == ExtAgents.version]


def calls_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One line per call: its set, arm, question, role, round, computed and cached prompt tokens, server times."""
    records = []
    for _, row in rows.iterrows():
        for call in row["calls"]:
            records.append({"set": row["set"], "arm": row["arm"], "id": row["id"], "role": call["role"],
                            "round": call["round"], "prompt": call["prompt_tokens"],
                            "computed": call["prompt_tokens"] - call["cached_tokens"], "cached": call["cached_tokens"],
                            "prefill_s": call.get("prefill_seconds") or 0.0,
                            "generation_s": call.get("generation_seconds") or 0.0,
                            "cache_s": call.get("cache_seconds") or 0.0,
                            "call_s": call["end"] - call["start"]})
    return pd.DataFrame(records)


def load(out: Path) -> pd.DataFrame:
    """The rows of the code's ExtAgents version (older versions' rows stay in the files, left out and counted)."""
    frames, stale = [], 0
    for arm in ARMS:
        paths = [p for p in sorted((out / arm).rglob("*.jsonl")) if p.name != "server_memory.jsonl"]
        rows = load_rows(paths, include_stale=True)
        if len(rows):
            stale += int(rows["stale"].sum())
            frames.append(rows[~rows["stale"]].assign(set=rows["dataset"], arm=arm))
    if stale:
        print(f"({stale} rows of other ExtAgents versions than {ExtAgents.version} left out)\n")
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True).drop_duplicates(["set", "arm", "id"], keep="last")


def report(out: Path) -> None:
    rows = load(out)
    if rows.empty:
        raise SystemExit(f"no rows of ExtAgents version {ExtAgents.version} under {out}; run the measurement first")
    calls = calls_table(rows)
    both = rows.pivot_table(index=["set", "id"], columns="arm", values="f1").reindex(columns=list(ARMS)).dropna()
    print("## Accuracy and time per question (mean), the two arms side by side\n")
    print("| set | questions | arm | F1 | rounds | wall s | prompt tokens | computed | prefill s | generation s | "
          "cache s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (name, arm), group in rows.groupby(["set", "arm"]):
        c = calls[(calls["set"] == name) & (calls["arm"] == arm)]
        per_q = len(group)
        print(f"| {name} | {per_q} | {arm} | {100 * group['f1'].mean():.1f} | {group['rounds'].mean():.2f} | "
              f"{group['seconds'].mean():,.0f} | {c['prompt'].sum() / per_q:,.0f} | {c['computed'].sum() / per_q:,.0f} "
              f"| {c['prefill_s'].sum() / per_q:,.0f} | {c['generation_s'].sum() / per_q:,.0f} | "
              f"{c['cache_s'].sum() / per_q:,.1f} |")
    dev = both.drop(index="demo", level=0, errors="ignore")
    if len(dev):
        diff = 100 * (dev["chunk-first"] - dev["facts-first"]).to_numpy()
        low, high = bootstrap_interval(list(diff))
        print(f"\nDevelopment draw, chunk-first minus facts-first F1 on {len(diff)} paired questions: "
              f"{diff.mean():+.1f} (95% CI {low:+.1f} to {high:+.1f}); better / tie / worse: "
              f"{int((diff > 0).sum())} / {int((diff == 0).sum())} / {int((diff < 0).sum())}")
    seeks = calls[calls["role"] == "seek"]
    print("\n## Seeking calls: prompt tokens computed in rounds 1 and 2, summed over the questions that reached "
          "round 2\n")
    print("| set | arm | questions | round 1 computed | round 2 computed | round 2 / round 1 |")
    print("|---|---|---|---|---|---|")
    for (name, arm), group in seeks.groupby(["set", "arm"]):
        both_rounds = group[group["id"].isin(group.loc[group["round"] == 2, "id"])]
        by_round = both_rounds.groupby("round")["computed"].sum()
        if 1 in by_round and 2 in by_round:
            print(f"| {name} | {arm} | {both_rounds['id'].nunique()} | {by_round[1]:,} | {by_round[2]:,} | "
                  f"{by_round[2] / by_round[1]:.1%} |")
    print("\n## Where the time goes: server prefill and generation by role and round (all questions)\n")
    print("| set | arm | role | round | calls | computed tokens | cached tokens | prefill s | generation s | cache s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (name, arm, role, rnd), group in calls.groupby(["set", "arm", "role", "round"]):
        print(f"| {name} | {arm} | {role} | {rnd} | {len(group)} | {group['computed'].sum():,} | "
              f"{group['cached'].sum():,} | {group['prefill_s'].sum():,.0f} | {group['generation_s'].sum():,.0f} | "
              f"{group['cache_s'].sum():,.1f} |")
    for arm in ARMS:
        peaks = memory_rows(out / arm / "server_memory.jsonl")
        if peaks:
            worst = max(peaks, key=lambda p: p["peak_rss_mb"])
            print(f"\n{arm}: server peak memory {worst['peak_rss_mb']:,} MB (prompt-state cache bound "
                  f"{worst['cache_mb']:,} MB), over {len(peaks)} questions")
    demo = rows[rows["set"] == "demo"].set_index("arm")
    if {"facts-first", "chunk-first"} <= set(demo.index):
        ratio = demo.loc["chunk-first", "seconds"] / demo.loc["facts-first", "seconds"]
        print(f"\nTwo-hop demo: chunk-first wall time is {ratio:.0%} of facts-first "
              f"({demo.loc['chunk-first', 'seconds']:,.0f} s vs {demo.loc['facts-first', 'seconds']:,.0f} s); "
              f"answers {demo.loc['chunk-first', 'answer']!r} and {demo.loc['facts-first', 'answer']!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default=",".join(SETTINGS), help="which material, comma-separated")
    parser.add_argument("--n", type=int, default=10, help="development questions per set")
    parser.add_argument("--cache-mb", type=int, default=4096, help="the chunk-first server's prompt-state cache")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="the bundled model to serve")
    parser.add_argument("--out", type=Path, default=OUT, help="where the rows go")
    parser.add_argument("--report", action="store_true", help="print the tables from the rows so far")
    args = parser.parse_args()
    if args.report:
        report(args.out)
        return
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = sorted(set(sets) - set(SETTINGS))
    if unknown or args.n < 1 or args.cache_mb < 1:
        parser.error(f"--sets from {', '.join(SETTINGS)} (unknown: {', '.join(unknown) or 'none'}); --n and "
                     "--cache-mb positive")
    measure(sets, args.n, args.cache_mb, args.model, args.out)
    report(args.out)


if __name__ == "__main__":
    main()
