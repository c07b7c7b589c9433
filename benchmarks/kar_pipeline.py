"""Issue 14, item 4: KAR interleaved with seeking (§4.3) against KAR after the round, on one endpoint.

ExtAgents with messages in retrieval order (rating=order, links off) answers HotpotQA questions twice per question,
one after the other (which goes first alternates by question): `pipeline` off (KAR's steps after the round's last
reply) and on (each step as soon as the agents ahead of its messages have replied; its answer cancels the rest).
The answers must be equal; the latency gain is reported next to its critical-path bound, computed from the run
without the pipeline: the round's end minus the time at which every agent ahead of the answering step's messages
had replied (the most any reordering
of the same calls can save in that round).

An engine that serves one request at a time (the bundled llama.cpp server) can only reorder work, so measure this
against a server that runs calls side by side, e.g. vLLM's CPU build (docs/vllm.md), with --concurrency at least
the number of agents:

    benchmarks/vllm_cpu.sh setup && benchmarks/vllm_cpu.sh serve qwen2.5-1.5b 8011 &   # vLLM's CPU build
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


def critical_path_gain(plain: Prediction) -> float:
    """Seconds the pipeline could save at most in the answering round of a run without it: from the time every
    agent ahead of the answering step's messages had replied to the time the round's last agent replied."""
    answering_round = plain.rounds
    seeks = [c for c in plain.calls if c.role == "seek" and c.round == answering_round]
    reasons = [c for c in plain.calls if c.role == "reason" and c.round == answering_round]
    if not seeks or not reasons:
        return 0.0
    ranking = plain.extra["ranking"][answering_round - 1]
    needed = ranking[:reasons[-1].step]  # the agents whose messages the answering step read (order rating)
    ready = max((c.end for c in seeks if c.chunk is not None and c.chunk <= max(needed, default=-1)),
                default=min(c.start for c in seeks))
    return max(0.0, max(c.end for c in seeks) - ready)


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
                 paragraphs=True, rating="order", links=False)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    with clients(settings) as (llm, _), args.out.open("w") as sink:
        tasks = load_tasks("hotpotqa", args.input_tokens, n=args.n, seed=1, tokenizer=llm.tokenizer, progress=False)
        for k, task in enumerate(tasks):  # which goes first alternates: a server's prefix cache favours the second
            first, second = (ExtAgents(**knobs), ExtAgents(pipeline=True, **knobs))[::1 if k % 2 == 0 else -1]
            runs = {method.config.pipeline: method.run(task, llm) for method in (first, second)}
            plain, piped = runs[False], runs[True]
            row = {"id": task.id, "plain_answer": plain.answer, "piped_answer": piped.answer,
                   "f1": score(plain.answer, task.answers, task.metric)["f1"], "rounds": plain.rounds,
                   "plain_s": plain.usage["wall_seconds"], "piped_s": piped.usage["wall_seconds"],
                   "bound_s": round(critical_path_gain(plain), 3),
                   "cancelled": sum(len(c) for c in piped.extra.get("cancelled", []))}
            rows.append(row)
            sink.write(json.dumps(row) + "\n")
            sink.flush()
            print(json.dumps(row))
    same = sum(r["plain_answer"] == r["piped_answer"] for r in rows)
    gain = [r["plain_s"] - r["piped_s"] for r in rows]
    plain_s, piped_s = (statistics.mean(r[key] for r in rows) for key in ("plain_s", "piped_s"))
    bound = statistics.mean(r["bound_s"] for r in rows)
    print(f"\n{len(rows)} questions, concurrency {args.concurrency}: answers equal in {same}; wall time "
          f"{plain_s:.1f} s -> {piped_s:.1f} s (mean gain {statistics.mean(gain):.1f} s; critical-path bound "
          f"{bound:.1f} s)")


if __name__ == "__main__":
    main()
