"""Framework overhead per agent call (zero-latency backend, 1,000 chunks) and peak memory on a
10M-token input. Ratios are measured side by side in one run; the numbers go to docs/performance.md.

    .venv/bin/python benchmarks/overhead.py [--chunks 1000] [--tokens 10000000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time

from extlib import ExtAgents, Task
from extlib.models import ensure_model
from extlib.samples import DEMO_TEXT
from extlib.testing import ScriptedBackend, scripted_client
from extlib.tokenizer import GGUFTokenizer

TOKENIZER_MODEL = "qwen2.5-0.5b"  # same vocabulary as the 1.5B model, smaller file to fetch


def responder(prompt: str) -> str:
    """Instant replies: every seeking agent finds something new, ratings parse, reasoning never answers
    before the last round, so every code path runs for every chunk."""
    if "How useful" in prompt:
        return "Score: 42"
    if prompt.startswith("Facts found"):
        return "Answer: Rutland" if "best answer" in prompt else "Answer: NO ANSWER"
    return f"Finding {hash(prompt) % 10**9}: the prompter was born in a village."


def overhead(chunks: int, chunk_tokens: int, rounds: int) -> dict:
    tokenizer = GGUFTokenizer(ensure_model(TOKENIZER_MODEL))
    words = DEMO_TEXT.read_text().split()
    text, n = [], 0
    while n < chunks * chunk_tokens:  # distinct text per chunk, so no two prompts are equal
        piece = " ".join(words[(n // 7) % len(words):(n // 7) % len(words) + 400])
        text.append(piece)
        n += len(tokenizer.encode(piece))
    task = Task("bench", "In which county was the prompter Tobias Wrenfield born?", "\n".join(text))
    # grounding off: the scripted findings are not in the text, and every reply must reach the scratchpad
    method = ExtAgents(chunk_tokens=chunk_tokens, context_window=chunk_tokens * 4, rounds=rounds, grounding=0.0)

    llm = scripted_client(responder, tokenizer=tokenizer, concurrency=64)
    start = time.perf_counter()
    prediction = method.run(task, llm)
    with_framework = time.perf_counter() - start
    calls = prediction.usage["calls"]
    prompts = list(llm._client.prompts)

    bare = ScriptedBackend(responder)  # the same backend, called with no framework around it

    async def raw() -> None:
        await asyncio.gather(*[bare.chat.completions.create(model="m", messages=[{"role": "user", "content": p}])
                               for p in prompts])
    start = time.perf_counter()
    asyncio.run(raw())
    backend_only = time.perf_counter() - start
    return {"chunks": chunks, "chunk_tokens": chunk_tokens, "rounds": prediction.rounds, "calls": calls,
            "framework_s": round(with_framework, 3), "backend_only_s": round(backend_only, 3),
            "overhead_ms_per_call": round((with_framework - backend_only) / calls * 1000, 3),
            "ratio_framework_to_backend": round(with_framework / backend_only, 2)}


MEMORY_PROBE = r"""
import json, resource, sys, time
from extlib.chunking import chunk_text
from extlib.models import ensure_model
from extlib.tokenizer import GGUFTokenizer

def rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024

target, demo, model = int(sys.argv[1]), sys.argv[2], sys.argv[3]
tok = GGUFTokenizer(ensure_model(model, progress=False))
base = open(demo).read()
per_copy = len(tok.encode(base))
copies = target // per_copy + 1
text = "\n".join(f"[copy {i}]\n" + base for i in range(copies))
del base
before = rss_mb()
start = time.perf_counter()
chunks = chunk_text(text, tok, chunk_tokens=8192)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"tokens": copies * per_copy, "text_mb": round(len(text.encode()) / 2**20, 1),
                  "rss_before_chunking_mb": round(before, 1), "peak_rss_mb": round(peak, 1),
                  "peak_above_text_loaded_mb": round(peak - before, 1), "chunks": len(chunks),
                  "chunking_s": round(seconds, 1)}))
"""


def memory(tokens: int) -> dict:
    out = subprocess.run([sys.executable, "-c", MEMORY_PROBE, str(tokens), str(DEMO_TEXT), TOKENIZER_MODEL],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=1000)
    parser.add_argument("--chunk-tokens", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=10_000_000)
    args = parser.parse_args()
    print(json.dumps({"overhead": overhead(args.chunks, args.chunk_tokens, args.rounds)}, indent=1), flush=True)
    print(json.dumps({"memory": memory(args.tokens)}, indent=1))


if __name__ == "__main__":
    main()
