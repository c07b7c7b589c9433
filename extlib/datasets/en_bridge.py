"""An English book where the bridge is needed (extlib.datasets.chain_book): generated two-hop questions ("In which
county was the bell-ringer Amos Pike born?") planted in Shakespeare's plays among notes of the same kinds that lead
nowhere, the English counterpart of `zh-bridge`.

`hotpotqa-bridge` cannot be made to need the bridge by adding distractors: many HotpotQA bridge questions name
enough of the answer's paragraph to be answered from it alone (docs/data.md). Here only the chain answers: the
question names the person, one note gives their village, one note gives that village's county, and the other county
notes name other villages. Persons, villages and counties are invented and checked to be absent from the plays; the
counties of a book are single words, so a wrong county earns no token F1.
"""

from __future__ import annotations

import random
from functools import cache

from . import chain_book
from .filler import paragraph_counts, shakespeare_paragraphs

FIRST = ("Amos Tobias Edmund Walter Hugh Alice Joan Agnes Silas Jasper Mercy Tamsin Eliza Ambrose Caleb Hester "
         "Josiah Lettice Barnaby Keziah Obadiah Prudence Ezra Wilmot").split()
SURNAMES = ("Wrenfield Pike Sallow Bream Crewe Tarn Marle Hobday Quarles Fennick Tolley Garrow Pinder Ashdown "
            "Brackley Cobbold Dimmock Elsey Furlong Gedney Hurrell Inchley Jessop Kedward Lumb Mavor Nettleship "
            "Orpin Pilbeam Rowell").split()
VILLAGE_HEAD = "Ash Thorn Wren Marl Brack Fen Hollin Kest Lang Moss Rook Sallow Tarn Whin Yarrow Elder".split()
VILLAGE_TAIL = "by combe ford ham stead wick thorpe worth ley den".split()
# Single words sharing no token: token F1 gives a wrong county nothing.
COUNTIES = ("Westmarch Norland Kestwick Rutmoor Hallamshire Dunmere Carrowdale Elmsett Fallowfield Grenmarsh "
            "Harrowmere Ivybridge Lunesdale Oakenshaw").split()
ROLES = ("prompter", "bell-ringer", "carpenter", "stage-hand", "tailor", "costumer", "scribe", "innkeeper")
# Each kind of note in several wordings; every note, evidence or distractor, draws its own.
BORN_IN = ("[A note in the margin of this copy reads: The {person} was born in the village of {village}.]",
           "The parish register records that the {person} was born at {village}.",
           "The {person} was a native of {village}.",
           "{village} was the birthplace of the {person}.",
           "[An old family record, pasted inside the cover, says the {person} came into the world at {village}.]")
LIES_IN = ("[A note in the margin of this copy reads: The village of {village} lies in the county of {region}.]",
           "{village} is a village in the county of {region}.",
           "The gazetteer places {village} within {region}.",
           "In the county of {region} there is a village called {village}.",
           "[A pencilled map in the margin shows {village} inside the borders of {region}.]")
ASK = ("In which county was the {person} born?", "Which county was the {person} born in?")
QUESTIONS = 600
MAX_DISTRACTORS = 12  # distractor villages (each in a county of its own) made per question


@cache
def questions() -> list[dict]:
    """A fixed set of questions, each with its chain and the names its book's distractor notes use (as many as
    any density needs; a book takes the first `distractors`): all names distinct within a book and absent from the
    plays."""
    plays = " ".join(shakespeare_paragraphs())
    rng = random.Random(20261205)
    absent: dict[str, bool] = {}  # a name's distinctive part (a surname, a village) -> not in the plays
    used: set[str] = set()  # the distinctive parts of the book being made

    def fresh(make, distinctive) -> str:
        while True:
            name = make()
            key = distinctive(name)
            if key not in absent:
                absent[key] = key not in plays
            if key not in used and absent[key]:  # no two people of a book share a surname
                used.add(key)
                return name

    def person() -> str:
        return rng.choice(ROLES) + " " + fresh(lambda: f"{rng.choice(FIRST)} {rng.choice(SURNAMES)}",
                                               lambda name: name.split()[1])

    def village() -> str:
        while (name := fresh(lambda: rng.choice(VILLAGE_HEAD) + rng.choice(VILLAGE_TAIL), lambda name: name)) in \
                COUNTIES:  # "Kest" + "wick"
            pass
        return name

    assert all(county not in plays for county in COUNTIES), "a county name occurs in the plays"
    rows = []
    for k in range(QUESTIONS):
        used.clear()
        counties = rng.sample(COUNTIES, MAX_DISTRACTORS + 1)  # the answer, then one per distractor village
        who = person()
        rows.append({"id": f"eb-{k:03d}", "person": who, "village": village(), "region": counties[0],
                     "question": rng.choice(ASK).format(person=who),
                     "others": [{"village": village(), "region": c, "person": person()} for c in counties[1:]]})
    return rows


BOOK = chain_book.ChainBook("en-bridge", questions, BORN_IN, LIES_IN, shakespeare_paragraphs,
                            lambda tokenizer, progress: paragraph_counts("shakespeare", tokenizer, progress),
                            lang="en", metric="hotpotqa")


tasks = chain_book.loader(BOOK, "county")
