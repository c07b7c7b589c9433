"""Chinese long-document QA offline: generated two-hop questions whose facts are planted in 三国演义.

No Chinese long-document QA set is on a package registry, but the full text of 三国演义 (public domain,
534k Qwen tokens) is. Each question is about invented people and villages that occur nowhere in the novel,
so its answer is unambiguous and only the planted facts give it: hop 1 says where a person was born, hop 2
in which province that village lies. Above 534k tokens the novel is read again from the start.
"""

from __future__ import annotations

import random
from functools import cache

import numpy as np

from ..tokenizer import Tokenizer
from ..trace import Task
from .common import sample
from .filler import paragraph_counts, sanguo_paragraphs
from .placement import check_placement, place
from .splits import in_split

SURNAMES = "欧阳 司徒 上官 东方 慕容 令狐 皇甫 诸葛 尉迟 公孙 长孙 宇文 司空 夏侯 端木 轩辕".split()
GIVEN = "澄 霁 岚 沅 琰 瑾 璇 珩 翊 骞 湛 峤 昀 朔 淙 砚 棠 檀 樾 滢".split()
VILLAGE_HEAD = "青 白 栖 落 藕 桐 柘 菱 荻 苕 蓼 芷 杳 溆 泖 浔".split()
VILLAGE_TAIL = "湾村 塘村 坳村 浦村 垭村 墩村".split()
PROVINCES = "浙江 江西 福建 湖南 贵州 云南 山西 甘肃 安徽 青海 河北 辽宁".split()
ROLES = ("抄写者", "校勘者", "刻工", "藏书人")
QUESTIONS = 200


@cache
def questions() -> list[dict]:
    """A fixed set of two-hop questions; every name is checked to be absent from the novel."""
    novel = "".join(sanguo_paragraphs())
    rng = random.Random(20251130)
    people: set[str] = set()
    villages: set[str] = set()
    rows = []
    while len(rows) < QUESTIONS:
        person = rng.choice(SURNAMES) + rng.choice(GIVEN) + rng.choice(GIVEN)
        village = rng.choice(VILLAGE_HEAD) + rng.choice(VILLAGE_HEAD) + rng.choice(VILLAGE_TAIL)
        if person in people or village in villages or person in novel or village[:2] in novel:
            continue
        people.add(person)
        villages.add(village)
        role, province = rng.choice(ROLES), rng.choice(PROVINCES)
        rows.append({"id": f"zh-{len(rows):03d}", "question": f"{role}{person}出生在哪个省？",
                     "answers": [province, f"{province}省"],
                     "facts": [f"（此本页边有一则批注：{role}{person}出生于{village}。）",
                               f"（此本页边有一则批注：{village}位于{province}省。）"]})
    return rows


def tasks(input_tokens: int, n: int | None, seed: int, tokenizer: Tokenizer, progress: bool = True,
          ids: list[str] | None = None, position: float = 0.25, distance: float = 0.5,
          order: str = "forward", split: str | None = None) -> list[Task]:
    """position, distance, order: as for `hotpotqa-longdoc` (depth of hop 1, depth between the hops); split: None
    (every question, as the first studies drew) or dev, test or reserve (data/splits/zh-longdoc.json)."""
    check_placement(position, distance, order)
    filler, counts = sanguo_paragraphs(), paragraph_counts("sanguo", tokenizer, progress)
    available = int(counts.sum())
    reps = -(-input_tokens // available)  # read the novel again from the start when asked for more
    if reps > 1:
        filler, counts = filler * reps, np.tile(counts, reps)
    out = []
    what = "the Chinese two-hop set" if split is None else f"the {split} split of the Chinese two-hop set"
    for row in sample(in_split(questions(), "zh-longdoc", split), n, seed, what, ids):
        facts = row["facts"][::-1 if order == "reverse" else 1]
        rng = random.Random(f"{seed}:{row['id']}")
        placed = place(facts, [position, position + distance], filler, counts, input_tokens, tokenizer,
                       start=rng.randrange(len(sanguo_paragraphs())))
        out.append(Task(id=row["id"], question=row["question"], knowledge=placed.text, answers=row["answers"],
                        lang="zh", metric="zh",
                        meta={"dataset": "zh-longdoc", "input_tokens": placed.tokens, "position": position,
                              "distance": distance, "order": order, "novel_repeats": reps,
                              "gold": [{"fact": f, "token_offset": o} for f, o in zip(facts, placed.offsets)],
                              "evidence_distance_tokens": abs(placed.offsets[1] - placed.offsets[0]),
                              **({"split": split} if split else {})}))
    return out
