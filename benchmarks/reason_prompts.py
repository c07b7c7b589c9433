"""Reasoning-prompt wordings side by side on the bridge-needed books' development split: the reasoning agent is shown
the first hop alone (it must say NO ANSWER: the first hop names a village, the question asks for a county or a
province) and both hops (it must answer the second hop's region), as KAR's first steps would show them. Reported
per wording: answers given from the first hop alone (each one a wrong answer the loop may accept), and right
answers from both hops; and how many of each a second yes/no look (VERIFY) confirms.

    .venv/bin/python benchmarks/reason_prompts.py --book en-bridge --n 30
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import replace
from pathlib import Path

from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from extlib import agents  # noqa: E402
from extlib.datasets import load_tasks  # noqa: E402
from extlib.engine import EngineSettings, clients  # noqa: E402
from extlib.metrics import score  # noqa: E402
from extlib.prompts import get_prompts  # noqa: E402

WORDINGS = {
    "en": {
        "current": {},
        "kind": {"reason": ("Facts found in a long text:\n{messages}\n\nQuestion: {question}\nUsing only these facts, "
                            "reason in one or two sentences, then write a last line `Answer: <short phrase>`. The "
                            "answer must be the kind of thing the question asks for (asked for a country, a city is "
                            "no answer). If the facts are not enough to answer, write the last line "
                            "`Answer: NO ANSWER`.")},
        "asked": {"reason": ("Facts found in a long text:\n{messages}\n\nQuestion: {question}\nWrite three lines. "
                             "`Asked: <the kind of thing the question asks for>`. `Fact: <the fact that states such "
                             "a thing for the question, or NONE>`. `Answer: <short phrase>`, or `Answer: NO ANSWER` "
                             "when the Fact is NONE.")},
        "worked": {"reason": ("Two worked examples.\nFacts:\n- The painter Ida Roe lived in the town of Calder.\n"
                              "Question: Which country did Ida Roe live in?\nReasoning: Ida Roe lived in Calder, a "
                              "town; no fact says which country Calder is in.\nAnswer: NO ANSWER\n\nFacts:\n- The "
                              "painter Ida Roe lived in the town of Calder.\n- Calder lies in Norway.\nQuestion: "
                              "Which country did Ida Roe live in?\nReasoning: Ida Roe lived in Calder, and Calder "
                              "lies in Norway.\nAnswer: Norway\n\nNow the real task.\nFacts found in a long text:\n"
                              "{messages}\n\nQuestion: {question}\nUsing only these facts, reason in one or two "
                              "sentences, then write a last line `Answer: <short phrase>`. If the facts are not "
                              "enough to answer, write the last line `Answer: NO ANSWER`.")},
    },
    "zh": {
        "current": {},
        "kind": {"reason": ("从一篇长文中找到的信息：\n{messages}\n\n问题：{question}\n只根据这些信息，用一两句话推理，"
                            "然后在最后一行写 `Answer: <简短答案>`。答案必须是问题所问的那一类（问国家时，城市名不是"
                            "答案）。如果信息不足以回答，最后一行写 `Answer: NO ANSWER`。")},
        "worked": {"reason": ("两个示例。\n信息：\n- 画家罗依住在卡尔镇。\n问题：罗依住在哪个国家？\n"
                              "推理：罗依住在卡尔镇，没有信息说卡尔镇在哪个国家。\n"
                              "Answer: NO ANSWER\n\n信息：\n- 画家罗依住在卡尔镇。\n"
                              "- 卡尔镇位于挪威。\n问题：罗依住在哪个国家？\n"
                              "推理：罗依住在卡尔镇，卡尔镇位于挪威。\nAnswer: 挪威\n\n"
                              "现在是真正的任务。\n从一篇长文中找到的信息：\n{messages}\n\n"
                              "问题：{question}\n只根据这些信息，用一两句话推理，"
                              "然后在最后一行写 `Answer: <简短答案>`。"
                              "如果信息不足以回答，最后一行写 `Answer: NO ANSWER`。")},
    },
}


VERIFY = {  # a second, yes/no look at an answer the reasoning agent gave before the last step
    "en": ("Facts:\n{messages}\n\nQuestion: {question}\nProposed answer: {answer}\nDo the facts show that "
           "{answer} is what the question asks for? Reply Yes or No."),
    "zh": ("信息：\n{messages}\n\n问题：{question}\n拟定答案：{answer}\n这些信息是否表明{answer}正是问题所问的？"
           "回答“是”或“否”。"),
}


def hop_text(fact: str) -> str:
    """A planted note as the scratchpad holds it: its sentence, without the margin-note brackets."""
    return fact.strip("（）[]")


async def confirmed(llm, lang: str, question: str, messages: list[str], answer: str) -> bool:
    prompt = VERIFY[lang].format(messages=agents.format_messages(messages), question=question, answer=answer)
    reply = (await llm.complete(prompt, max_tokens=4)).text.strip().lower()
    return reply.startswith(("yes", "是"))


async def one(llm, prompts, task, lang: str) -> dict:
    hops = [hop_text(g["fact"]) for g in task.meta["gold"]]
    first, _ = await agents.reason(llm, prompts, task.question, hops[:1], False, 1, 128)
    both, _ = await agents.reason(llm, prompts, task.question, hops, False, 1, 128)
    right = both is not None and score(both, task.answers, task.metric)["f1"] >= 0.5
    return {"answered_from_hop_1": first is not None, "right_from_both": right,
            "confirmed_from_hop_1": first is not None and await confirmed(llm, lang, task.question, hops[:1], first),
            "right_confirmed": right and await confirmed(llm, lang, task.question, hops, both)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--book", required=True, choices=["en-bridge", "zh-bridge"])
    parser.add_argument("--n", type=int, default=30)
    parser.add_argument("--wordings", nargs="+", help="only these wordings (default: all of the book's language)")
    args = parser.parse_args()
    lang = "zh" if args.book.startswith("zh") else "en"
    tasks = load_tasks(args.book, 4096, n=args.n, seed=0, progress=False, split="dev")  # never the test split
    with clients(EngineSettings(context_window=1024)) as (llm, _):
        results = {}
        for name, change in WORDINGS[lang].items():
            if args.wordings and name not in args.wordings:
                continue
            prompts = replace(get_prompts("small", lang), **change)
            results[name] = [asyncio.run(one(llm, prompts, t, lang)) for t in tqdm(tasks, desc=name, unit="question")]
    print(f"{args.book}, dev split, {len(tasks)} questions")
    print("| wording | answered from the first hop alone | ... and confirmed | right from both hops | ... and "
          "confirmed |")
    print("|---|---|---|---|---|")
    for name, rows in results.items():
        print(f"| {name} | " + " | ".join(f"{sum(r[k] for r in rows)}/{len(rows)}" for k in (
            "answered_from_hop_1", "confirmed_from_hop_1", "right_from_both", "right_confirmed")) + " |")


if __name__ == "__main__":
    main()
