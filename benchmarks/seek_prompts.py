"""Seeking-prompt wordings side by side on the chunks that matter, on a development draw.

For each question of a long-document set, the chunks that hold the gold evidence and two that hold none are
read by a seeking agent under each wording, in round 1 (question only) and in round 2 (shown the first hop as
the scratchpad would hold it). Reported per wording, over the questions:
  gold kept      replies of gold chunks that pass the grounding check (extlib.grounding.admission)
  answer found   questions where a kept reply holds the gold answer
  bridge (r2)    round-2 replies of the second hop's chunk, shown hop 1, that pass the check
  filler kept    replies of chunks without evidence that pass the check (each is noise on the scratchpad)
The full method is then run on the same draw for the wording chosen (README: "Beyond the window").

    .venv/bin/python benchmarks/seek_prompts.py --dataset hotpotqa-longdoc --n 8 --seed 1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
from dataclasses import replace

from extlib import agents
from extlib.chunking import chunk_text
from extlib.datasets import load_tasks
from extlib.engine import EngineSettings, clients
from extlib.grounding import admission
from extlib.metrics import normalize_answer
from extlib.parsing import is_no_information
from extlib.prompts import get_prompts

WORDINGS_EN = {
    "facts": {},  # the current small prompt set
    "copy": dict(
        seek_first=("Text:\n{chunk}\n\nQuestion: {question}\nCopy, word for word, the sentences of the text that "
                    "mention what the question names or that help answer it. If there are none, write NONE."),
        seek_next=("Question: {question}\nFacts found so far:\n{messages}\n\nText:\n{chunk}\n\nCopy, word for word, "
                   "the sentences of the text that mention a name from the facts found so far or that help answer "
                   "the question. Do not copy the facts found so far. If there are none, write NONE.")),
}
WORDINGS_EN["chunk-first"] = {"seek_next": get_prompts("small", "en", "chunk-first").seek_next}  # issue 14's layout
WORDINGS_ZH = {
    "facts": {},
    "chunk-first": {"seek_next": get_prompts("small", "zh", "chunk-first").seek_next},
    "copy": dict(
        seek_first=("文本：\n{chunk}\n\n问题：{question}\n逐字抄写文本中提到问题所说的人、地、物或有助于回答问题的句子。"
                    "如果没有，写 NONE。"),
        seek_next=("问题：{question}\n目前找到的事实：\n{messages}\n\n文本：\n{chunk}\n\n逐字抄写文本中提到目前找到的事实里"
                   "的名字、或有助于回答问题的句子。不要抄写目前找到的事实。如果没有，写 NONE。")),
}


def gold_chunks(task, chunks: list[str]) -> list[int]:
    """Index of the chunk holding each gold passage (hop order), by its title or planted fact."""
    out = []
    for gold in task.meta["gold"]:
        key = gold.get("title") or gold["fact"][-12:]
        out.append(next((i for i, c in enumerate(chunks) if key in c), -1))
    return out


def first_hop(task) -> str:
    """Hop 1 as a seeking agent would write it: the planted fact, or the first gold paragraph's first sentence."""
    gold = task.meta["gold"][0]
    if "fact" in gold:
        return gold["fact"].split("：", 1)[-1].rstrip("。）") + "。"
    start = task.knowledge.index(gold["title"] + "\n") + len(gold["title"]) + 1
    return task.knowledge[start:].split(". ", 1)[0] + "."


def has_answer(text: str, answers: list[str]) -> bool:
    return any(normalize_answer(a) and normalize_answer(a) in normalize_answer(text) for a in answers)


async def one_question(llm, task, prompts, rng: random.Random, chunk_tokens: int, input_tokens: int) -> dict:
    chunks = chunk_text(task.knowledge, llm.tokenizer, chunk_tokens, input_tokens, "middle")
    gold = gold_chunks(task, chunks)
    filler = rng.sample([i for i in range(len(chunks)) if i not in gold], 2)
    verdicts = {}
    for i in [g for g in gold if g >= 0] + filler:
        reply, _ = await agents.seek(llm, prompts, task.question, chunks[i], i, [], 1, 256)
        reply = reply or ""
        verdicts[("r1", i)] = (reply, None if is_no_information(reply) else
                               admission(reply, chunks[i], [], task.question, 0.75))
    shown = [first_hop(task)]
    for i in ([gold[-1]] if gold[-1] >= 0 else []) + filler[:1]:
        reply, _ = await agents.seek(llm, prompts, task.question, chunks[i], i, shown, 2, 256)
        reply = reply or ""
        verdicts[("r2", i)] = (reply, None if is_no_information(reply) else
                               admission(reply, chunks[i], shown, task.question, 0.75))

    def kept(key):
        reply, why = verdicts[key]
        return not is_no_information(reply) and why is None
    return {"id": task.id, "gold_chunks": gold, "filler": filler,
            "gold_kept": [kept(("r1", g)) for g in gold if g >= 0],
            "answer_found": any(kept(k) and has_answer(verdicts[k][0], task.answers) for k in verdicts
                                if k[1] in gold),
            "bridge": kept(("r2", gold[-1])) if gold[-1] >= 0 else None,
            "filler_kept": [kept(k) for k in verdicts if k[1] in filler],
            "replies": {f"{k[0]}:{k[1]}": v for k, v in verdicts.items()}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="hotpotqa-longdoc", choices=["hotpotqa-longdoc", "zh-longdoc"])
    parser.add_argument("--n", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1, help="the development draw (the test draw is another seed)")
    parser.add_argument("--input-tokens", type=int, default=8192)
    parser.add_argument("--chunk-tokens", type=int, default=512)
    parser.add_argument("--context-window", type=int, default=1024)
    parser.add_argument("--wordings", default=None, help="comma list (default: all)")
    parser.add_argument("--out", default=None, help="write every reply and verdict to this JSON file")
    args = parser.parse_args(argv)
    lang = "zh" if args.dataset == "zh-longdoc" else "en"
    wordings = WORDINGS_ZH if lang == "zh" else WORDINGS_EN
    names = args.wordings.split(",") if args.wordings else list(wordings)
    tasks = load_tasks(args.dataset, args.input_tokens, n=args.n, seed=args.seed, progress=False)
    results: dict[str, list[dict]] = {}
    with clients(EngineSettings(context_window=args.context_window)) as (llm, _):
        for name in names:
            prompts = replace(get_prompts("small", lang), **wordings[name])
            rng = random.Random(args.seed)
            results[name] = [asyncio.run(one_question(llm, t, prompts, rng, args.chunk_tokens, args.input_tokens))
                             for t in tasks]
    print(f"{args.dataset}, {args.input_tokens:,} tokens, seed {args.seed}, {len(tasks)} questions")
    print("| wording | gold kept | answer found | bridge (r2) | filler kept |")
    print("|---|---|---|---|---|")
    for name, rows in results.items():
        gold = [k for r in rows for k in r["gold_kept"]]
        bridge = [r["bridge"] for r in rows if r["bridge"] is not None]
        filler = [k for r in rows for k in r["filler_kept"]]
        print(f"| {name} | {sum(gold)}/{len(gold)} | {sum(r['answer_found'] for r in rows)}/{len(rows)} | "
              f"{sum(bridge)}/{len(bridge)} | {sum(filler)}/{len(filler)} |")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(results, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
