"""Seeking-prompt wordings side by side on the chunks that matter, on a development draw.

For each question of a long-document set, the chunks that hold the gold evidence and two that hold none are
read by a seeking agent under each wording, in round 1 (question only) and in round 2 (shown the first hop as
the scratchpad would hold it). Reported per wording, over the questions:
  gold kept      replies of gold chunks that pass the grounding check (extlib.grounding.admission)
  answer found   questions where a kept reply holds the gold answer
  bridge (r2)    round-2 replies of the second hop's chunk, shown hop 1, that pass the check
  hop 1 (r2, none shown)  a later round's reply of the first hop's chunk when nothing was found before (what a
                 round after an empty round 1 asks), kept; and of the questions whose round-1 reply of that chunk
                 was not kept, how many such a reply recovers
  filler kept    replies of chunks without evidence that pass the check (each is noise on the scratchpad)
The full method is then run on the same draw for the wording chosen (results/cpu/beyond_window/README.md).

    .venv/bin/python benchmarks/seek_prompts.py --dataset hotpotqa-longdoc --n 8 --seed 1
    .venv/bin/python benchmarks/seek_prompts.py --dataset zh-bridge --input-tokens 4096 --chunk-tokens 384 \\
        --guards evidence --n 30

On the bridge-needed books (dev split only) a gold chunk's reply counts as kept when what the guards post holds
the hop's note, and `--guards` chooses the admission (the evidence guards post the chunk's own sentences).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
from dataclasses import replace

from tqdm import tqdm

from extlib import agents
from extlib.chunking import chunk_text
from extlib.datasets import load_tasks
from extlib.engine import EngineSettings, clients
from extlib.grounding import admission
from extlib.guards import GUARD_SETS, make_guards
from extlib.metrics import normalize_answer
from extlib.parsing import is_no_information
from extlib.prompts import get_prompts

WORDINGS_EN = {
    "leads": {},  # the current small prompt set: a later round asks what the text says of the names found so far
    "continue": dict(  # before version 13: a later round asked for facts that continue the facts found so far
        seek_next=("Question: {question}\nFacts found so far:\n{messages}\n\nText:\n{chunk}\n\nWrite down the facts "
                   "from the text that continue or complete the facts found so far, in full sentences with names. Do "
                   "not copy the facts found so far. If the text has nothing new, write NONE.")),
    "copy": dict(
        seek_first=("Text:\n{chunk}\n\nQuestion: {question}\nCopy, word for word, the sentences of the text that "
                    "mention what the question names or that help answer it. If there are none, write NONE."),
        seek_next=("Question: {question}\nFacts found so far:\n{messages}\n\nText:\n{chunk}\n\nCopy, word for word, "
                   "the sentences of the text that mention a name from the facts found so far or that help answer "
                   "the question. Do not copy the facts found so far. If there are none, write NONE.")),
}
WORDINGS_EN["entities"] = dict(  # a fact about what the question names is evidence even when it answers nothing
    seek_first=("Text:\n{chunk}\n\nQuestion: {question}\nWrite down the facts from the text about the people, "
                "places and things the question names, or that help answer it, in full sentences with names, even "
                "if they do not answer the question. If there are none, write NONE."))
WORDINGS_EN["named"] = dict(  # round 1 reads only what the question names; later rounds follow the facts found
    seek_first=("Text:\n{chunk}\n\nQuestion: {question}\nWrite down the facts from the text about the people, "
                "places and things the question names, in full sentences with names. If the text does not mention "
                "them, write NONE."))
WORDINGS_EN["names-found"] = {"no_leads": "the names in the facts found so far"}  # before version 17
WORDINGS_EN["chunk-first"] = {"seek_next": get_prompts("small", "en", "chunk-first").seek_next}  # issue 14's layout
WORDINGS_ZH = {
    "leads": {},
    "names-found": {"no_leads": "目前找到的事实中的名字"},
    "continue": dict(seek_next=("问题：{question}\n目前找到的事实：\n{messages}\n\n文本：\n{chunk}\n\n"
                                "写下文本中能延续或补全目前找到的事实的新事实，用带有名字的完整句子。"
                                "不要照抄目前找到的事实。如果文本中没有新内容，写 NONE。")),
    "chunk-first": {"seek_next": get_prompts("small", "zh", "chunk-first").seek_next},
    "entities": dict(seek_first=("文本：\n{chunk}\n\n问题：{question}\n写下文本中关于问题提到的人、地点或事物的事实，"
                                 "或有助于回答问题的事实，用带有名字的完整句子，即使它们不能直接回答问题。如果没有，"
                                 "写 NONE。")),
    "named": dict(seek_first=("文本：\n{chunk}\n\n问题：{question}\n写下文本中关于问题提到的人、地点或事物的事实，"
                              "用带有名字的完整句子。如果文本没有提到它们，写 NONE。")),
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
    if "fact" in gold and task.lang == "zh":
        return gold["fact"].split("：", 1)[-1].rstrip("。）") + "。"
    if "fact" in gold:
        return gold["fact"].strip("[]")
    start = task.knowledge.index(gold["title"] + "\n") + len(gold["title"]) + 1
    return task.knowledge[start:].split(". ", 1)[0] + "."


def has_answer(text: str, answers: list[str]) -> bool:
    return any(normalize_answer(a) and normalize_answer(a) in normalize_answer(text) for a in answers)


def judge(guards: str | None, reply: str, chunk: str, shown: list[str], question: str) -> tuple[bool, str]:
    """(kept, what is posted or why not): the grounding check at 0.75 (guards None), or the guard set's admission."""
    if is_no_information(reply):
        return False, "NONE"
    if guards is None:
        why = admission(reply, chunk, shown, question, 0.75)
        return why is None, why or reply
    posted, why = make_guards(guards).admit(reply, chunk, shown, question)
    return posted is not None, posted or why


async def one_question(llm, task, prompts, rng: random.Random, chunk_tokens: int, input_tokens: int,
                       guards: str | None) -> dict:
    chunks = chunk_text(task.knowledge, llm.tokenizer, chunk_tokens, input_tokens, "middle")
    gold = gold_chunks(task, chunks)
    notes = [g.get("fact") for g in task.meta["gold"]]
    filler = rng.sample([i for i in range(len(chunks)) if i not in gold], 2)
    verdicts = {}

    async def read(key: tuple[str, int], shown: list[str], round_: int = 0) -> None:
        reply, _ = await agents.seek(llm, prompts, task.question, chunks[key[1]], key[1], shown,
                                     round_ or len(shown) + 1, 256)
        verdicts[key] = (reply or "", *judge(guards, reply or "", chunks[key[1]], shown, task.question))

    def kept(key: tuple[str, int], hop: int | None = None) -> bool:
        """Kept, and on a book of planted notes what is posted holds the hop's note (not a neighbour's)."""
        note = notes[hop] if hop is not None else None
        return verdicts[key][1] and (note is None or note.strip("（）。").split("：")[-1] in verdicts[key][2])

    for i in [g for g in gold if g >= 0] + filler:
        await read(("r1", i), [])
    if gold[0] >= 0:
        await read(("r2-none", gold[0]), [], 2)
    shown = [first_hop(task)]
    for i in ([gold[-1]] if gold[-1] >= 0 else []) + filler[:1]:
        await read(("r2", i), shown)
    return {"id": task.id, "gold_chunks": gold, "filler": filler,
            "gold_kept": [kept(("r1", g), h) for h, g in enumerate(gold) if g >= 0],
            "answer_found": any(v[1] and has_answer(v[2], task.answers) for k, v in verdicts.items()
                                if k[1] in gold),
            "bridge": kept(("r2", gold[-1]), len(gold) - 1) if gold[-1] >= 0 else None,
            "filler_kept": [verdicts[k][1] for k in verdicts if k[1] in filler],
            "first_r1": kept(("r1", gold[0]), 0) if gold[0] >= 0 else None,
            "first_after_nothing": kept(("r2-none", gold[0]), 0) if gold[0] >= 0 else None,
            "replies": {f"{k[0]}:{k[1]}": v for k, v in verdicts.items()}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="hotpotqa-longdoc", choices=["hotpotqa-longdoc", "zh-longdoc", "zh-bridge",
                                                                   "en-bridge"])
    parser.add_argument("--n", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1, help="the development draw (the test draw is another seed)")
    parser.add_argument("--input-tokens", type=int, default=8192)
    parser.add_argument("--chunk-tokens", type=int, default=512)
    parser.add_argument("--context-window", type=int, default=1024)
    parser.add_argument("--wordings", default=None, help="comma list (default: all)")
    parser.add_argument("--guards", default=None, choices=GUARD_SETS,
                        help="judge replies by this guard set's admission (default: the grounding check at 0.75)")
    parser.add_argument("--out", default=None, help="write every reply and verdict to this JSON file")
    args = parser.parse_args(argv)
    lang = "zh" if args.dataset.startswith("zh") else "en"
    wordings = WORDINGS_ZH if lang == "zh" else WORDINGS_EN
    names = args.wordings.split(",") if args.wordings else list(wordings)
    options = {"split": "dev"} if args.dataset.endswith("-bridge") else {}  # never the test split
    tasks = load_tasks(args.dataset, args.input_tokens, n=args.n, seed=args.seed, progress=False, **options)
    results: dict[str, list[dict]] = {}
    with clients(EngineSettings(context_window=args.context_window)) as (llm, _):
        for name in names:
            prompts = replace(get_prompts("small", lang), **wordings[name])
            rng = random.Random(args.seed)
            results[name] = [asyncio.run(one_question(llm, t, prompts, rng, args.chunk_tokens, args.input_tokens,
                                                      args.guards))
                             for t in tqdm(tasks, desc=f"wording {name}", unit="question")]
    print(f"{args.dataset}, {args.input_tokens:,} tokens, seed {args.seed}, {len(tasks)} questions, "
          f"guards {args.guards or 'grounding 0.75'}")
    print("| wording | gold kept | answer found | bridge (r2) | filler kept | hop 1 (r2, none shown) | recovered |")
    print("|---|---|---|---|---|---|---|")
    for name, rows in results.items():
        gold = [k for r in rows for k in r["gold_kept"]]
        bridge = [r["bridge"] for r in rows if r["bridge"] is not None]
        filler = [k for r in rows for k in r["filler_kept"]]
        later = [r for r in rows if r["first_after_nothing"] is not None]
        missed = [r for r in later if not r["first_r1"]]
        print(f"| {name} | {sum(gold)}/{len(gold)} | {sum(r['answer_found'] for r in rows)}/{len(rows)} | "
              f"{sum(bridge)}/{len(bridge)} | {sum(filler)}/{len(filler)} | "
              f"{sum(r['first_after_nothing'] for r in later)}/{len(later)} | "
              f"{sum(r['first_after_nothing'] for r in missed)}/{len(missed)} |")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(results, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
