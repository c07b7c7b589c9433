"""Real HotpotQA questions as long-document QA: the gold paragraphs placed inside public-domain plays,
with the evidence depth, order and distance as parameters (the controlled placements PARSER studies)."""

from __future__ import annotations

import random

from ..tokenizer import Tokenizer
from ..trace import Task
from .common import sample
from .filler import paragraph_counts, shakespeare_paragraphs
from .hotpotqa import drawn_from, load_pool
from .placement import check_placement, place
from .splits import in_split


def tasks(input_tokens: int, n: int | None, seed: int, tokenizer: Tokenizer, progress: bool = True,
          ids: list[str] | None = None, position: float = 0.25, distance: float = 0.5, order: str = "forward",
          distractors: bool = False, split: str | None = None) -> list[Task]:
    """position: depth of the first gold paragraph (0 = start, 1 = end); distance: depth from the first gold
    paragraph to the last; order: `forward` keeps HotpotQA's supporting-fact order, `reverse` swaps it;
    distractors: also place the question's 8 distractor paragraphs at random depths; split: None (every question,
    as the first studies drew) or dev, test or reserve (the lists of `hotpotqa`, data/splits/hotpotqa.json: the same
    questions)."""
    check_placement(position, distance, order)
    rows, pool = load_pool()
    filler, counts = shakespeare_paragraphs(), paragraph_counts("shakespeare", tokenizer, progress)
    out = []
    for row in sample(in_split(rows, "hotpotqa-longdoc", split, key="_id"), n, seed, drawn_from(split), ids, key="_id"):
        gold = pool.gold[row["_id"]][::-1 if order == "reverse" else 1]
        steps = max(len(gold) - 1, 1)
        depths = [position + distance * i / steps for i in range(len(gold))]
        evidence = [pool.passages[g] for g in gold]
        rng = random.Random(f"{seed}:{row['_id']}")
        if distractors:
            others = [p for p in pool.context[row["_id"]] if p not in gold]
            evidence += [pool.passages[p] for p in others]
            depths += [rng.random() for _ in others]
        placed = place(evidence, depths, filler, counts, input_tokens, tokenizer, start=rng.randrange(len(filler)))
        first, last = placed.offsets[0], placed.offsets[len(gold) - 1]
        out.append(Task(id=row["_id"], question=row["question"], knowledge=placed.text, answers=[row["answer"]],
                        lang="en", metric="hotpotqa",
                        meta={"dataset": "hotpotqa-longdoc", "type": row.get("type"), "input_tokens": placed.tokens,
                              "position": position, "distance": distance, "order": order,
                              "gold": [{"title": e.split("\n", 1)[0], "token_offset": off}
                                       for e, off in zip(evidence[:len(gold)], placed.offsets)],
                              "evidence_distance_tokens": abs(last - first), "distractors": distractors,
                              **({"split": split} if split else {})}))
    return out

