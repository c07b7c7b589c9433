"""A book where the bridge is needed, in any language: a generated chain person -> village -> region planted among
notes of the same kinds that lead nowhere (`zh_bridge`, `en_bridge` give the names, wordings and filler text).

Each book holds the question's two hops and `distractors` village -> region notes about other villages (each in
another region) plus about half as many person -> village notes about other people (to those villages, so they form
complete chains of their own): exactly one chain links the question's person to a region, and a reader of the
region notes alone can only guess among `distractors` + 1 of them. Every note, right or not, takes one of several
wordings drawn per note, so no wording marks the evidence. The notes sit at depths drawn per question over the whole
text, the two hops at least `min_gap_tokens` apart (in different chunks of that size).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import UserError
from ..tokenizer import Tokenizer
from ..trace import Task
from .common import sample
from .placement import place_apart
from .splits import split_ids


@dataclass(frozen=True)
class ChainBook:
    dataset: str
    questions: Callable[[], list[dict]]  # id, person, village, region, question, others: [{village, region, person}]
    born_in: tuple[str, ...]  # wordings of a person -> village note ({person}, {village})
    lies_in: tuple[str, ...]  # wordings of a village -> region note ({village}, {region})
    filler: Callable[[], list[str]]  # the text the notes are planted in, unit by unit
    filler_counts: Callable[[Tokenizer, bool], np.ndarray]  # token counts of those units
    lang: str
    metric: str


def notes(book: ChainBook, row: dict, distractors: int, rng: random.Random) -> tuple[list[str], list[str]]:
    """(the two evidence notes, hop 1 then hop 2; the distractor notes), each in a wording drawn from `rng`."""
    born = lambda **k: rng.choice(book.born_in).format(**k)  # noqa: E731
    lies = lambda **k: rng.choice(book.lies_in).format(**k)  # noqa: E731
    others = row["others"][:distractors]
    evidence = [born(person=row["person"], village=row["village"]), lies(village=row["village"], region=row["region"])]
    decoys = [lies(village=o["village"], region=o["region"]) for o in others]
    decoys += [born(person=o["person"], village=o["village"]) for o in others[: (distractors + 1) // 2]]
    return evidence, decoys


def loader(book: ChainBook, region: str) -> Callable[..., list[Task]]:
    """`book`'s dataset loader; extlib.datasets reads a dataset's options from its loader's parameters."""
    def tasks(input_tokens: int, n: int | None, seed: int, tokenizer: Tokenizer, progress: bool = True,
              ids: list[str] | None = None, split: str = "dev", distractors: int = 4, min_gap_tokens: int = 600,
              without_first_hop: bool = False, hops_only: bool = False) -> list[Task]:
        return book_tasks(book, input_tokens, n, seed, tokenizer, progress, ids, split, distractors, min_gap_tokens,
                          without_first_hop, hops_only)
    tasks.__doc__ = (
        f"split: dev, test or reserve (disjoint id lists in data/splits/{book.dataset}.json); distractors: "
        f"village->{region} notes about other villages (and half as many person->village notes about other people; "
        "4, the default, is the least that meets the difficulty bar of docs/data.md); min_gap_tokens: least distance "
        "between the two hops; without_first_hop: the same book without the person->village note of the question's "
        "person, for the shortcut baseline that has only notes of the second hop's form to answer from; hops_only: "
        "the two hops alone, no filler and no other note (what a reader given exactly the evidence can do).")
    return tasks


def book_tasks(book: ChainBook, input_tokens: int, n: int | None, seed: int, tokenizer: Tokenizer, progress: bool,
               ids: list[str] | None, split: str, distractors: int, min_gap_tokens: int, without_first_hop: bool,
               hops_only: bool) -> list[Task]:
    """The books of `split`'s questions (the options as `loader`'s)."""
    limit = len(book.questions()[0]["others"])
    if not 0 <= distractors <= limit:
        raise UserError(f"distractors must be from 0 to {limit}, got {distractors}")
    filler, counts = book.filler(), book.filler_counts(tokenizer, progress)
    reps = -(-input_tokens // int(counts.sum()))
    if reps > 1:
        filler, counts = filler * reps, np.tile(counts, reps)
    rows = [r for r in book.questions() if r["id"] in set(split_ids(book.dataset, split))]
    out = []
    for row in sample(rows, n, seed, f"the {split} split of {book.dataset}", ids):
        rng = random.Random(f"{seed}:{row['id']}")
        evidence, decoys = notes(book, row, distractors, rng)
        placed = place_apart(evidence, decoys, rng, filler, counts, input_tokens, tokenizer, min_gap_tokens,
                             start=rng.randrange(len(book.filler())), without_first=without_first_hop,
                             hops_only=hops_only)
        out.append(Task(id=row["id"], question=row["question"], knowledge=placed.text,
                        answers=[row["region"]], lang=book.lang, metric=book.metric,
                        meta={"dataset": book.dataset, "input_tokens": placed.tokens, "split": split,
                              "without_first_hop": without_first_hop, "hops_only": hops_only,
                              "distractors": distractors, "second_hop_form_notes": distractors + 1,
                              "gold": [{"fact": f, "token_offset": o} for f, o in zip(evidence, placed.offsets)],
                              "decoys": [{"fact": f, "token_offset": o} for f, o in zip(decoys, placed.offsets[2:])],
                              "evidence_distance_tokens": abs(placed.offsets[1] - placed.offsets[0])}))
    return out
