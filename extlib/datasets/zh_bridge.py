"""A Chinese book where the bridge is needed: generated two-hop questions planted in 三国演义 among notes of the
same kinds that lead nowhere.

`zh-longdoc` plants one person->village and one village->province note per book, so the one province note alone
answers "in which province was X born?". Here each book also holds `distractors` village->province notes about
other villages (each in another province) and about half as many person->village notes about other people (to
those villages, so they form complete chains of their own): exactly one chain links the question's person to a
province, and a reader of the province notes alone can only guess among `distractors` + 1 of them. Every note,
right or not, takes one of several wordings drawn per note, so no wording marks the evidence. The notes sit at
depths drawn per question over the whole text, the two hops at least `min_gap_tokens` apart (in different chunks
of that size). All names are invented and checked to be absent from the novel.
"""

from __future__ import annotations

import random
from functools import cache

import numpy as np

from ..errors import UserError
from ..tokenizer import Tokenizer
from ..trace import Task
from .common import sample
from .filler import paragraph_counts, sanguo_paragraphs, sanguo_passages
from .placement import place_apart
from .splits import split_ids

SURNAMES = ("欧阳 司徒 上官 东方 慕容 令狐 皇甫 尉迟 公孙 长孙 宇文 司空 端木 轩辕 闻人 南宫 百里 呼延 赫连 澹台 "
            "钟离 宗政 濮阳 淳于 单于 太叔 申屠 仲孙 乐正 左丘").split()
GIVEN = "澄 霁 岚 沅 琰 瑾 璇 珩 翊 骞 湛 峤 昀 朔 淙 砚 棠 檀 樾 滢 珣 琮 璟 玹 晞 暄 曦 筠 蘅 芮".split()
VILLAGE_HEAD = "青 白 栖 落 藕 桐 柘 菱 荻 苕 蓼 芷 杳 溆 泖 浔 蕖 苇 椿 榆 蒹 葭 芦 杉".split()
VILLAGE_TAIL = "湾村 塘村 坳村 浦村 垭村 墩村 岙村 汊村 圩村 陂村".split()
# No two share a character: Zh.QA's character F1 gives a wrong province no credit for a character it shares with the
# right one (the gold answer is the bare name, so "省" earns nothing either).
PROVINCES = "浙江 福建 湖南 贵州 甘肃 安徽 青海 河北 辽宁 广东 四川 山西 吉林 台湾".split()
ROLES = ("抄写者", "校勘者", "刻工", "藏书人", "装裱匠", "批注者")
# Each kind of note in several wordings; every note, evidence or distractor, draws its own.
BORN_IN = ("（此本页边有一则批注：{person}出生于{village}。）", "据乡志所载，{person}生于{village}。",
           "{person}，{village}人氏。", "{village}是{person}的出生之地。", "旧谱记云：{person}降生在{village}。")
LIES_IN = ("（此本页边有一则批注：{village}位于{province}省。）", "{village}隶属{province}省。",
           "据舆地志记载，{village}在{province}省境内。", "{province}省辖下有一村，名曰{village}。",
           "{village}坐落于{province}省。")
ASK = ("{person}出生在哪个省？", "{person}的出生地在哪个省？")
QUESTIONS = 600
MAX_DISTRACTORS = 12  # distractor villages (each in a province of its own) made per question


@cache
def questions() -> list[dict]:
    """A fixed set of questions, each with its chain and the names its book's distractor notes use (as many as
    any density needs; a book takes the first `distractors`): all names distinct and absent from the novel."""
    novel = "".join(sanguo_paragraphs())
    rng = random.Random(20261205)
    absent: dict[str, bool] = {}  # a name's distinctive part -> not in the novel (searching it once)
    used: set[str] = set()  # the names of the book being made: distinct within a book (books stand alone)

    def fresh(make, distinctive: slice) -> str:
        """A new name whose distinctive part (a person's whole name, a village's first two characters) is not in
        the novel."""
        while True:
            name = make()
            if name[distinctive] not in absent:
                absent[name[distinctive]] = name[distinctive] not in novel
            if name not in used and absent[name[distinctive]]:
                used.add(name)
                return name

    def person() -> str:
        return fresh(lambda: rng.choice(SURNAMES) + rng.choice(GIVEN) + rng.choice(GIVEN), slice(None))

    def village() -> str:
        return fresh(lambda: "".join(rng.sample(VILLAGE_HEAD, 2)) + rng.choice(VILLAGE_TAIL),
                     slice(0, 2))

    rows = []
    for k in range(QUESTIONS):
        used.clear()
        provinces = rng.sample(PROVINCES, MAX_DISTRACTORS + 1)  # the answer, then one per distractor village
        who = rng.choice(ROLES) + person()
        rows.append({"id": f"zb-{k:03d}", "person": who, "village": village(), "province": provinces[0],
                     "question": rng.choice(ASK).format(person=who),
                     "others": [{"village": village(), "province": p, "person": rng.choice(ROLES) + person()}
                                for p in provinces[1:]]})
    return rows


def notes(row: dict, distractors: int, rng: random.Random) -> tuple[list[str], list[str]]:
    """(the two evidence notes, hop 1 then hop 2; the distractor notes), each in a wording drawn from `rng`."""
    born, lies = (lambda **k: rng.choice(BORN_IN).format(**k)), (lambda **k: rng.choice(LIES_IN).format(**k))
    others = row["others"][:distractors]
    evidence = [born(person=row["person"], village=row["village"]),
                lies(village=row["village"], province=row["province"])]
    decoys = [lies(village=o["village"], province=o["province"]) for o in others]
    decoys += [born(person=o["person"], village=o["village"]) for o in others[: (distractors + 1) // 2]]
    return evidence, decoys


def tasks(input_tokens: int, n: int | None, seed: int, tokenizer: Tokenizer, progress: bool = True,
          ids: list[str] | None = None, split: str = "dev", distractors: int = 4,
          min_gap_tokens: int = 600, without_first_hop: bool = False,
          hops_only: bool = False) -> list[Task]:
    """split: dev, test or reserve (disjoint id lists in data/splits/zh-bridge.json); distractors: village->province
    notes about other villages (and half as many person->village notes about other people); min_gap_tokens: least
    distance between the two hops; without_first_hop: the same book without the person->village note of the
    question's person, for the shortcut baseline that has only notes of the second hop's form to answer from;
    hops_only: the two hops alone, no novel and no other note (what a reader given exactly the evidence can do)."""
    limit = len(questions()[0]["others"])
    if not 0 <= distractors <= limit:
        raise UserError(f"distractors must be from 0 to {limit}, got {distractors}")
    filler, counts = sanguo_passages(), paragraph_counts("sanguo-passages", tokenizer, progress)
    reps = -(-input_tokens // int(counts.sum()))
    if reps > 1:
        filler, counts = filler * reps, np.tile(counts, reps)
    rows = [r for r in questions() if r["id"] in set(split_ids("zh-bridge", split))]
    out = []
    for row in sample(rows, n, seed, f"the {split} split of zh-bridge", ids):
        rng = random.Random(f"{seed}:{row['id']}")
        evidence, decoys = notes(row, distractors, rng)
        placed = place_apart(evidence, decoys, rng, filler, counts, input_tokens, tokenizer, min_gap_tokens,
                             start=rng.randrange(len(sanguo_passages())), without_first=without_first_hop,
                             hops_only=hops_only)
        out.append(Task(id=row["id"], question=row["question"], knowledge=placed.text,
                        answers=[row["province"]], lang="zh", metric="zh",
                        meta={"dataset": "zh-bridge", "input_tokens": placed.tokens, "split": split,
                              "without_first_hop": without_first_hop, "hops_only": hops_only,
                              "distractors": distractors, "second_hop_form_notes": distractors + 1,
                              "gold": [{"fact": f, "token_offset": o} for f, o in zip(evidence, placed.offsets)],
                              "decoys": [{"fact": f, "token_offset": o} for f, o in zip(decoys, placed.offsets[2:])],
                              "evidence_distance_tokens": abs(placed.offsets[1] - placed.offsets[0])}))
    return out
