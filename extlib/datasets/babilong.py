"""BABILong-style tasks, generated offline: the stories of bAbI's qa2 ("two supporting facts") and qa3 ("three
supporting facts") from a seeded simulation of people, places and objects, their sentences hidden in order between
the sentences of public-domain plays (BABILong, Kuratov et al. 2024, hides them in PG19 books).

bAbI's own data lives on a hub this machine cannot reach, but its tasks come from a small world: people move between
rooms and pick up and drop objects. Every sentence of a story is a fact of the same form as the ones the answer needs
(other people moving, other objects), so the question's words ("Where is the football?") find the object's facts but
not the move that only the pick-up points to. qa2 asks where an object is now that someone carries it (the pick-up,
then the carrier's last move); qa3 asks where it was before a place (the pick-up and the carrier's two moves). The
set is kept out of development: its ids form one `test` list, measured once, after every choice is made elsewhere.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..errors import UserError
from ..tokenizer import Tokenizer
from ..trace import Task
from .common import sample
from .filler import paragraph_counts, shakespeare_paragraphs
from .placement import place

PEOPLE = ("Mary", "John", "Daniel", "Sandra", "Fred", "Bill", "Julie", "Emily")
PLACES = ("kitchen", "garden", "office", "bathroom", "hallway", "bedroom", "cellar", "garage")
OBJECTS = ("football", "apple", "milk", "book", "key", "hat")
MOVE = ("{p} went to the {l}.", "{p} journeyed to the {l}.", "{p} travelled to the {l}.", "{p} moved to the {l}.")
TAKE = ("{p} picked up the {o}.", "{p} got the {o}.", "{p} grabbed the {o}.", "{p} took the {o}.")
DROP = ("{p} dropped the {o}.", "{p} put down the {o}.", "{p} left the {o}.", "{p} discarded the {o}.")
TASKS = ("qa2", "qa3")
PER_TASK = 300  # stories generated per task; `test` is all of them


@dataclass
class Story:
    id: str
    task: str
    sentences: list[str]
    question: str
    answer: str
    support: list[int]  # the sentences the answer needs, by index, in story order


def simulate(task: str, index: int, length: int) -> Story | None:
    """One story of `length` sentences and its question, or None when the walk gives no question of the task's kind
    (every random draw is seeded by the task and index, so a story is the same everywhere)."""
    rng = random.Random(f"babilong:{task}:{index}")
    people, objects = rng.sample(PEOPLE, 4), rng.sample(OBJECTS, 3)
    where = {p: None for p in people}  # a person's place, once a sentence has said it
    carrier: dict[str, str | None] = {o: None for o in objects}
    lying: dict[str, str | None] = {o: rng.choice(PLACES) for o in objects}  # where an object lies (unsaid)
    said: list[str] = []
    moves: list[tuple[int, str, str]] = []  # (sentence, person, place)
    takes: list[tuple[int, str, str]] = []  # (sentence, person, object)
    while len(said) < length:
        p = rng.choice(people)
        held = [o for o in objects if carrier[o] == p]
        here = [o for o in objects if carrier[o] is None and where[p] is not None and lying[o] == where[p]]
        roll = rng.random()
        if held and roll < 0.15:
            o = rng.choice(held)
            carrier[o], lying[o] = None, where[p]
            said.append(rng.choice(DROP).format(p=p, o=o))
        elif here and roll < 0.45:
            o = rng.choice(here)
            carrier[o] = p
            takes.append((len(said), p, o))
            said.append(rng.choice(TAKE).format(p=p, o=o))
        else:
            place = rng.choice([pl for pl in PLACES if pl != where[p]])
            where[p] = place
            moves.append((len(said), p, place))
            said.append(rng.choice(MOVE).format(p=p, l=place))
    held_now = [(o, carrier[o]) for o in objects if carrier[o] is not None]
    rng.shuffle(held_now)
    for o, p in held_now:
        taken = max(k for k, who, obj in takes if obj == o and who == p)
        after = [(k, pl) for k, who, pl in moves if who == p and k > taken]  # the object travelled with its carrier
        before = [(k, pl) for k, who, pl in moves if who == p and k < taken]
        if task == "qa2" and after:
            return Story(f"{task}-{index:04d}", task, said, f"Where is the {o}?", after[-1][1], [taken, after[-1][0]])
        trail = before[-1:] + after  # where the object was, from its pick-up on
        if task == "qa3" and len(trail) >= 2 and after and trail[-1][1] != trail[-2][1] \
                and trail[-1][1] not in [pl for _, pl in trail[:-1]]:
            return Story(f"{task}-{index:04d}", task, said, f"Where was the {o} before the {trail[-1][1]}?",
                         trail[-2][1], sorted([taken, trail[-2][0], trail[-1][0]]))
    return None


def stories(task: str) -> list[Story]:
    """PER_TASK stories of `task`, 8 to 40 sentences each (bAbI's qa2 has 2 to 68 facts, qa3 4 to 320)."""
    out, index = [], 0
    while len(out) < PER_TASK:
        story = simulate(task, index, random.Random(f"length:{task}:{index}").randint(8, 40))
        index += 1
        if story is not None:
            out.append(story)
    return out


def tasks(input_tokens: int, n: int | None, seed: int, tokenizer: Tokenizer, progress: bool = True,
          ids: list[str] | None = None, task: str = "qa2") -> list[Task]:
    """task: qa2 (where is an object, two supporting facts) or qa3 (where was it before a place, three)."""
    if task not in TASKS:
        raise UserError(f"task must be one of {', '.join(TASKS)}, got {task!r}")
    filler, counts = shakespeare_paragraphs(), paragraph_counts("shakespeare", tokenizer, progress)
    rows = [{"id": s.id, "story": s} for s in stories(task)]
    out = []
    for row in sample(rows, n, seed, f"the BABILong-style {task} set", ids):
        story: Story = row["story"]
        rng = random.Random(f"{seed}:{story.id}")
        depths = sorted(rng.random() for _ in story.sentences)  # the story's order is kept
        placed = place(story.sentences, depths, filler, counts, input_tokens, tokenizer,
                       start=rng.randrange(len(filler)))
        out.append(Task(id=story.id, question=story.question, knowledge=placed.text, answers=[story.answer],
                        lang="en", metric="hotpotqa",
                        meta={"dataset": "babilong", "task": task, "input_tokens": placed.tokens,
                              "facts": len(story.sentences),
                              "gold": [{"fact": story.sentences[k], "token_offset": placed.offsets[k]}
                                       for k in story.support]}))
    return out
