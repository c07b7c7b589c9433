"""A Chinese book where the bridge is needed (extlib.datasets.chain_book): generated two-hop questions planted in
三国演义 among notes of the same kinds that lead nowhere.

`zh-longdoc` plants one person->village and one village->province note per book, so the one province note alone
answers "in which province was X born?". Here exactly one chain among look-alike notes links the question's person
to a province. All names are invented and checked to be absent from the novel.
"""

from __future__ import annotations

import random
from functools import cache

from . import chain_book
from .filler import paragraph_counts, sanguo_paragraphs, sanguo_passages

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
LIES_IN = ("（此本页边有一则批注：{village}位于{region}省。）", "{village}隶属{region}省。",
           "据舆地志记载，{village}在{region}省境内。", "{region}省辖下有一村，名曰{village}。",
           "{village}坐落于{region}省。")
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
        rows.append({"id": f"zb-{k:03d}", "person": who, "village": village(), "region": provinces[0],
                     "question": rng.choice(ASK).format(person=who),
                     "others": [{"village": village(), "region": p, "person": rng.choice(ROLES) + person()}
                                for p in provinces[1:]]})
    return rows


BOOK = chain_book.ChainBook("zh-bridge", questions, BORN_IN, LIES_IN, sanguo_passages,
                             lambda tokenizer, progress: paragraph_counts("sanguo-passages", tokenizer, progress),
                             lang="zh", metric="zh")


tasks = chain_book.loader(BOOK, "province")
