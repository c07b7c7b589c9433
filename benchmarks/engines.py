"""Issue 14, item 5: two engines serving one model side by side, the bundled llama.cpp server and another
OpenAI-compatible server (vLLM's CPU build, set up as docs/vllm.md shows).

For each engine, one after the other in one run (response cache off):
  prefill      tokens/s reading a 2,000-token prompt (1 token out; median of 3 distinct prompts)
  generation   tokens/s writing (a counting prompt, 128 tokens out, minus its 1-token prefill)
  round of 4   wall time of 4 seeking calls over distinct 512-token chunks sent at once, against the sum of
               their times sent one by one
  ExtAgents    one HotpotQA development question (seed 1) at 4,000 tokens, window 2,048: wall time and answer

    benchmarks/vllm_cpu.sh setup && benchmarks/vllm_cpu.sh serve qwen2.5-1.5b 8011 &   # vLLM's CPU build
    .venv/bin/python benchmarks/engines.py --base-url http://127.0.0.1:8011/v1 --model qwen2.5-1.5b \
        --tokenizer hf:$HOME/.cache/extagents/vllm-models/qwen2.5-1.5b/tokenizer.json --local-model qwen2.5-1.5b
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from extlib import ExtAgents, agents
from extlib.datasets import load_tasks
from extlib.engine import EngineSettings, clients
from extlib.llm import LLMClient
from extlib.machine import cpu_name
from extlib.prompts import get_prompts
from extlib.samples import DEMO_TEXT

WORDS = DEMO_TEXT.read_text().split()


def text_of(tokens: int, llm: LLMClient, offset: int) -> str:
    """Distinct demo text of about `tokens` tokens (distinct, so no engine serves it from a prefix cache)."""
    words = WORDS[offset:offset + tokens]
    if len(words) < tokens // 2:
        raise ValueError(f"offset {offset} leaves too little of the {len(WORDS):,}-word demo text")
    while llm.count_tokens(" ".join(words)) > tokens:
        words = words[:-max(1, len(words) // 50)]
    return " ".join(words)


async def timed(llm: LLMClient, prompt: str, max_tokens: int) -> tuple[float, int]:
    start = time.perf_counter()
    done = await llm.complete(prompt, max_tokens=max_tokens)
    return time.perf_counter() - start, done.completion_tokens


async def timed_round(llm: LLMClient, chunks: list[str], together: bool) -> tuple[float, int]:
    """Wall time and completion tokens of one seeking call per chunk, one by one or all at once."""
    prompts, question = get_prompts("small", "en"), "Who was born in Kettleby?"
    calls = [agents.seek(llm, prompts, question, chunk, i, [], 1, 64) for i, chunk in enumerate(chunks)]
    start = time.perf_counter()
    if together:
        results = await asyncio.gather(*calls)
    else:
        results = [await call for call in calls]
    seconds = time.perf_counter() - start
    failed = [record.error for _, record in results if record.error]
    if failed:
        raise RuntimeError(f"{len(failed)} of the round's seeking calls failed: {failed[0]}")
    return seconds, sum(record.completion_tokens for _, record in results)


async def measure(llm: LLMClient) -> dict:
    prefill = []
    for k in range(3):
        text = text_of(2000, llm, 4000 * k)
        seconds, _ = await timed(llm, text + "\n\nSay OK.", 1)
        prefill.append(llm.count_tokens(text) / seconds)
    counting = "Count from 1 to 1000, separated by commas: 1, 2, 3,"
    await timed(llm, counting, 1)  # warm: both timed calls below find the prompt in the engine's cache alike
    one, _ = await timed(llm, counting, 1)
    many, written = await timed(llm, counting, 128)
    # distinct text for each round (no prefix reuse), of equal length; the completion tokens show both wrote alike
    one_by_one, written_one = await timed_round(llm, [text_of(512, llm, 14000 + 600 * k) for k in range(4)], False)
    together, written_all = await timed_round(llm, [text_of(512, llm, 20000 + 600 * k) for k in range(4)], True)
    return {"prefill tok/s": statistics.median(prefill), "generation tok/s": (written - 1) / max(many - one, 1e-9),
            "round of 4, one by one s": one_by_one, "round of 4, at once s": together,
            "round of 4, completion tokens (one by one / at once)": f"{written_one} / {written_all}"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", required=True, help="the other engine's OpenAI-compatible endpoint")
    parser.add_argument("--model", required=True, help="the model name it serves")
    parser.add_argument("--tokenizer", required=True, help="its tokenizer, e.g. hf:DIR/tokenizer.json")
    parser.add_argument("--local-model", required=True, help="the same model, bundled (GGUF), e.g. qwen2.5-1.5b")
    args = parser.parse_args()
    engines = {"llama.cpp (bundled)": EngineSettings(model=args.local_model, cache=False, context_window=4096),
               "other": EngineSettings(base_url=args.base_url, model=args.model, tokenizer=args.tokenizer,
                                       cache=False, context_window=4096)}
    results = {}
    for name, settings in engines.items():
        with clients(settings) as (llm, _):
            llm = llm.with_concurrency(4)
            results[name] = asyncio.run(measure(llm))
            task = load_tasks("hotpotqa", 4000, n=1, seed=1, tokenizer=llm.tokenizer, progress=False)[0]
            prediction = ExtAgents(context_window=2048, chunk_tokens=512, paragraphs=True, rating="order",
                                   input_tokens=4000, truncate="front").run(task, llm)
            results[name] |= {"ExtAgents question s": prediction.usage["wall_seconds"],
                              "ExtAgents answer": prediction.answer, "gold": task.answers[0]}
    print(f"{cpu_name()}; {args.local_model} / {args.model}\n")
    print("| measure | " + " | ".join(results) + " |")
    print("|---|" + "---|" * len(results))
    for key in next(iter(results.values())):
        cells = [f"{r[key]:,.1f}" if isinstance(r[key], float) else str(r[key]) for r in results.values()]
        print(f"| {key} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
