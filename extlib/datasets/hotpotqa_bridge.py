"""An English book where the bridge is needed: HotpotQA's bridge questions with their two gold paragraphs in a
public-domain play among Wikipedia paragraphs that look alike.

`hotpotqa-longdoc` places the gold paragraphs in play text and nothing else, so the question's words lead retrieval
straight to both. Here a `wiki_share` of the book is Wikipedia: first the question's own distractor paragraphs
(HotpotQA's distractor setting: retrieved by bigram TF-IDF against the question to be confusable with the gold ones),
then paragraphs of other dev questions, the rest play text. Only bridge questions are used (a comparison question
names both of its entities, so it needs no bridge). The two gold paragraphs sit at depths drawn per question over the
whole text, at least `min_gap_tokens` apart; the others anywhere.
"""

from __future__ import annotations

import random

from ..errors import UserError
from ..tokenizer import Tokenizer
from ..trace import Task
from .common import sample
from .filler import paragraph_counts, shakespeare_paragraphs
from .hotpotqa import load_pool, token_counts
from .placement import place_apart
from .splits import split_ids


def tasks(input_tokens: int, n: int | None, seed: int, tokenizer: Tokenizer, progress: bool = True,
          ids: list[str] | None = None, split: str = "dev", wiki_share: float = 0.5,
          min_gap_tokens: int = 600, without_first_hop: bool = False,
          hops_only: bool = False) -> list[Task]:
    """split: dev, test or reserve (disjoint id lists in data/splits/hotpotqa-bridge.json); wiki_share: the share of
    the book that is Wikipedia paragraphs (the gold ones, the question's distractors, then other questions'), the
    rest play text; min_gap_tokens: least distance between the two gold paragraphs; without_first_hop: the same book
    without the gold paragraph that does not hold the answer (the bridge), for the shortcut baseline that has only
    paragraphs of the second hop's kind to answer from; hops_only: the two gold paragraphs alone, no play and no
    other paragraph (what a reader given exactly the evidence can do)."""
    if not 0.0 < wiki_share <= 0.9:
        raise UserError(f"wiki_share must be in (0, 0.9], got {wiki_share}")
    rows, pool = load_pool()
    counts = token_counts(pool, tokenizer, progress)
    filler, filler_counts = shakespeare_paragraphs(), paragraph_counts("shakespeare", tokenizer, progress)
    by_id = {row["_id"]: row for row in rows}
    chosen = [by_id[i] for i in split_ids("hotpotqa-bridge", split)]
    out = []
    for row in sample(chosen, n, seed, f"the {split} split of hotpotqa-bridge", ids, key="_id"):
        rng = random.Random(f"{seed}:{row['_id']}")
        gold = hops(pool.gold[row["_id"]], pool.passages, row["answer"])
        room = wiki_share * input_tokens - sum(int(counts[g]) for g in gold)
        own = [p for p in pool.context[row["_id"]] if p not in gold]
        rng.shuffle(own)
        decoys = take_within(own, counts, room)
        room -= sum(int(counts[p]) for p in decoys)
        titles = {title(pool.passages[p]) for p in pool.context[row["_id"]]}
        others = [p for p in (rng.randrange(len(pool.passages)) for _ in range(20 * int(room // 80 + 1)))
                  if title(pool.passages[p]) not in titles]
        decoys += take_within(list(dict.fromkeys(others)), counts, room)
        placed = place_apart([pool.passages[g] for g in gold], [pool.passages[p] for p in decoys], rng, filler,
                             filler_counts, input_tokens, tokenizer, min_gap_tokens, start=rng.randrange(len(filler)),
                             without_first=without_first_hop,
                             hops_only=hops_only)
        out.append(Task(id=row["_id"], question=row["question"], knowledge=placed.text, answers=[row["answer"]],
                        lang="en", metric="hotpotqa",
                        meta={"dataset": "hotpotqa-bridge", "type": row.get("type"), "split": split,
                              "without_first_hop": without_first_hop, "hops_only": hops_only,
                              "input_tokens": placed.tokens, "wiki_share": wiki_share,
                              "own_distractors": len([p for p in decoys if p in own]),
                              "other_paragraphs": len([p for p in decoys if p not in own]),
                              "gold": [{"title": title(pool.passages[g]), "token_offset": o}
                                       for g, o in zip(gold, placed.offsets)],
                              "decoys": [{"title": title(pool.passages[p]), "token_offset": o}
                                         for p, o in zip(decoys, placed.offsets[2:])],
                              "evidence_distance_tokens": abs(placed.offsets[1] - placed.offsets[0])}))
    return out


def hops(gold: list[int], passages: list[str], answer: str) -> list[int]:
    """The two gold paragraphs as (first hop, second hop): the second is the one that states the answer (when
    both or neither do, HotpotQA's supporting-fact order stands)."""
    states = [answer.lower() in passages[g].lower() for g in gold]
    return gold[::-1] if states == [True, False] else gold


def title(passage: str) -> str:
    return passage.split("\n", 1)[0]


def take_within(passages: list[int], counts, room: float) -> list[int]:
    """The passages, in order, that fit in `room` tokens (one that does not fit is passed over)."""
    taken = []
    for p in passages:
        if counts[p] <= room:
            taken.append(p)
            room -= int(counts[p])
    return taken
