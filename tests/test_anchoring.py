"""Messages in the source's own words (extlib.anchoring) and the chain of names they stand on
(extlib.connections): true facts reach the scratchpad as their chunk's sentences, inventions never do, and an
answer counts only when messages connected to the question state it."""

import json

from extlib import agents
from extlib.anchoring import anchor, sentences
from extlib.connections import links_from_question, on_a_chain
from extlib.grounding import grounding_terms
from extlib.guards import make_guards
from extlib.prompts import get_prompts

from .conftest import DATA

QUESTION = "In which county was Tobias Wrenfield born?"
HOP1 = "Tobias Wrenfield was born in the village of Kettleby, where his father kept the mill."
HOP2 = "The village of Kettleby lies in the county of Rutland."
DECOY = "The village of Marrowby lies in the county of Westmarch."
PLAY = "ROSALIND. I pray you, do not fall in love with me, for I am falser than vows made in wine."


def test_a_true_extraction_posts_its_chunks_sentence_even_when_the_question_names_what_the_chunk_lacks():
    chunk = f"{PLAY}\n\n{HOP1}\n\nCELIA. Here comes Monsieur Jaques."
    found = anchor("Tobias Wrenfield was born in the village of Kettleby.", chunk, [], QUESTION)
    assert found.sentences == [HOP1]
    other = anchor("The village of Kettleby where Tobias Wrenfield was born lies in Rutland.", HOP2, [], QUESTION)
    assert other.sentences == [HOP2]  # "Tobias Wrenfield" is the question's, not a claim the chunk must hold


def test_an_invented_fact_posts_nothing_and_an_echo_claims_nothing():
    assert anchor("Tobias Wrenfield was born in Lincolnshire.", f"{PLAY}\n\n{DECOY}", [], QUESTION).sentences == []
    echo = anchor("Tobias Wrenfield was born in Kettleby.", HOP2, [HOP1], QUESTION)
    assert echo.sentences == [] and echo.claims == 0


def test_a_bridge_join_posts_the_chunks_bridge_sentence_and_a_wrong_join_posts_no_join():
    bridge = anchor("Tobias Wrenfield was born in Kettleby, which lies in the county of Rutland.",
                    f"{PLAY}\n\n{HOP2}", [HOP1], QUESTION)
    assert bridge.sentences == [HOP2]
    wrong = anchor("Tobias Wrenfield was born in Kettleby, which lies in the county of Westmarch.",
                   f"{PLAY}\n\n{DECOY}", [HOP1], QUESTION)
    assert wrong.sentences == [DECOY]  # what the chunk says, of Marrowby: no claim that Kettleby is in Westmarch


def test_chinese_replies_are_anchored_by_pairs_of_characters():
    question, hop1 = "刻工宗政檀樾出生在哪个省？", "藕落塘村是刻工宗政檀樾的出生之地。"
    hop2 = "云南省辖下有一村，名曰藕落塘村。"
    chunk = f"董卓即日下令还郿坞，百官俱拜送。\n\n{hop2}\n\n栖蕖墩村坐落于福建省。"
    assert anchor("刻工宗政檀樾出生于藕落塘村，藕落塘村位于云南省。", chunk, [hop1], question).sentences == [hop2]
    assert anchor("刻工宗政檀樾出生于湖南省。", chunk, [], question).sentences == []


def test_a_paragraph_under_a_heading_keeps_its_subject():
    chunk = "Fort Worth Zoo\nThe Fort Worth Zoo opened in 1909. The zoo is home to 5,000 animals."
    assert sentences(chunk) == ["The Fort Worth Zoo opened in 1909.",
                                "Fort Worth Zoo: The zoo is home to 5,000 animals."]


def test_messages_connect_to_the_question_by_a_chain_of_names():
    notes = {0: HOP2, 1: HOP1, 2: DECOY, 3: PLAY}
    assert links_from_question(QUESTION, notes) == {0: 2, 1: 1, 2: None, 3: None}
    zh = {0: "云南省辖下有一村，名曰藕落塘村。", 1: "藕落塘村是刻工宗政檀樾的出生之地。",
          2: "校勘者澹台曦樾，栖蕖墩村人氏。", 3: "栖蕖墩村坐落于福建省。"}
    # one shared run of three characters (a title two people share) is no link; a name's two runs are
    assert links_from_question("校勘者宗政檀樾出生在哪个省？", {**zh, 1: "藕落塘村是校勘者宗政檀樾的出生之地。"}) == {
        0: 2, 1: 1, 2: None, 3: None}


def test_a_second_hop_is_posted_once_its_agent_is_shown_the_first():
    """The evidence guards post only sentences a chain of names joins to the question through what the agent was
    shown: in round 1 the second hop names nothing of the question and waits; shown the first hop (GKS), it joins."""
    guards = make_guards("evidence")
    reply = "The village of Kettleby lies in the county of Rutland."
    chunk = f"{PLAY}\n\n{HOP2}"
    posted, why = guards.admit(reply, chunk, [], QUESTION)
    assert posted is None and "no chain" in why
    assert guards.admit(reply, chunk, [HOP1], QUESTION) == (HOP2, None)
    assert guards.admit("Marrowby lies in Westmarch.", f"{PLAY}\n\n{DECOY}", [HOP1], QUESTION)[0] is None
    assert on_a_chain(QUESTION, [], [HOP2, HOP1, DECOY]) == [HOP2, HOP1]  # joined through each other


def test_a_reply_about_the_questions_subject_posts_what_its_chunk_says_of_the_subject():
    """A 1.5B model asked for a county invents one for the person its chunk places in a village: the invented county
    is never posted, the chunk's sentence naming the person is; a first name alone is not the person."""
    guards = make_guards("evidence")
    chunk = f"{PLAY}\n\n{HOP1}\n\nCELIA. Tobias, here comes Monsieur Jaques."
    assert guards.admit("Tobias Wrenfield was born in Lincolnshire.", chunk, [], QUESTION) == (HOP1, None)
    assert guards.admit("Tobias Wrenfield was born in Lincolnshire.", f"{PLAY}\n\nCELIA. Tobias, come.", [],
                        QUESTION)[0] is None
    assert make_guards("small-model").admit("Tobias Wrenfield was born in Lincolnshire.", chunk, [], QUESTION)[0] \
        is None
    question, hop1 = "装裱匠尉迟琮昀出生在哪个省？", "旧谱记云：装裱匠尉迟琮昀降生在苇榆浦村。"
    chunk = f"董卓即日下令还郿坞，百官俱拜送。\n\n{hop1}\n\n刻工尉迟檀琮，芷溆墩村人氏。"
    assert make_guards("evidence").admit("尉迟琮昀出生在河北省。", chunk, [], question) == (hop1, None)
    hop2 = "苇榆浦村隶属河北省。"  # a Chinese sentence of ten characters is a sentence
    chunk = f"董卓即日下令还郿坞，百官俱拜送。\n\n{hop2}\n\n刻工尉迟檀琮，芷溆墩村人氏。"
    assert make_guards("evidence").admit("苇榆浦村隶属河北省。", chunk, [hop1], question) == (hop2, None)
    # a reply that takes up the shown village without the chunk's words posts what the chunk says of the village
    assert make_guards("evidence").admit("苇榆浦村", chunk, [hop1], question) == (hop2, None)


def test_the_questions_subject_is_one_of_its_entities_named_in_full():
    """A first name alone is not the question's person; either entity of a comparison is a subject."""
    assert links_from_question("In which county was the tailor Edmund Crewe born?", {
        0: "The tailor Edmund Crewe was born at Marlford.", 1: "EDMUND. Edmund, the base, shall top the legitimate.",
        2: "The stage-hand Edmund Bream was a native of Brackden."}) == {0: 1, 1: None, 2: None}
    assert links_from_question("Which is a flowering plant, Pueraria or Pleiospilos?", {
        0: "Pueraria is a genus of 15-20 species of plants native to Asia.",
        1: "Pleiospilos is a genus of succulent plants."}) == {0: 1, 1: 1}


def test_the_evidence_guards_take_an_answer_only_from_messages_connected_to_the_question():
    guards = make_guards("evidence")
    assert guards.refuses("Rutland", [HOP1, HOP2], QUESTION) is None
    assert guards.refuses("Westmarch", [HOP1, DECOY], QUESTION)  # stated only by a message of no chain
    assert guards.rank([2, 3, 0, 1], {0: HOP2, 1: HOP1, 2: DECOY, 3: PLAY}, QUESTION) == [1, 0, 2, 3]


ORIGINAL = ("hotpotqa", "hotpotqa-longdoc", "zh-longdoc")  # the labeled rows of the grounding check's bounds
BRIDGE = ("en-bridge", "zh-bridge")  # the labeled replies of the evidence guards' dev runs on the bridge books


def labeled(datasets: tuple[str, ...]) -> list[dict]:
    rows = [json.loads(line) for line in (DATA / "seeker_replies.jsonl").read_text(encoding="utf-8").splitlines()]
    return [row for row in rows if row["dataset"] in datasets]


def test_on_labeled_replies_no_invention_reaches_the_scratchpad_and_true_facts_do():
    """The labeled fixture judged by what reaches the scratchpad: at most 3 of the 53 extracted facts may post
    nothing (the grounding check's bound), and no reply's claim that its chunk lacks is ever posted."""
    rows = labeled(ORIGINAL)
    posted = {id(r): anchor(r["reply"], r["chunk"], r["shown"], r["question"]) for r in rows}
    extracted = [r for r in rows if r["label"] == "extracted"]
    assert sum(not posted[id(r)].sentences for r in extracted) <= 3
    for r in rows:
        assert all(s.split(": ", 1)[-1] in r["chunk"] for s in posted[id(r)].sentences)


def chunk_sentences_in(posted: str, chunk: str) -> list[str] | None:
    """The sentences of `chunk` (extlib.anchoring.sentences) that `posted` is made of, joined by spaces as the
    evidence guards join them, or None when it is not made of them."""
    pieces = sorted(set(sentences(chunk)), key=len, reverse=True)

    def split(rest: str) -> list[str] | None:
        if not rest:
            return []
        for piece in pieces:
            if rest == piece or rest.startswith(piece + " "):
                tail = split(rest[len(piece):].lstrip(" "))
                if tail is not None:
                    return [piece, *tail]
        return None
    return split(posted)


def test_on_the_bridge_books_replies_the_evidence_guards_post_only_their_chunks_sentences():
    """The en-bridge and zh-bridge replies judged by what the evidence guards put on an empty scratchpad, called as
    ExtAgents' admission calls them. Whatever a reply claims, what is posted is sentences of its own chunk, so no
    invented or echoed claim that its chunk lacks reaches the scratchpad; an invention or an echo may still post its
    chunk's own sentences about the question's subject or a shown name (the true first hop beside a made-up
    province, the second hop beside an echoed first hop). A true fact posts nothing when no chain of names joins it
    to the question through what its agent was shown: a village -> region note in round 1 names nothing of the
    question and waits until GKS shows its agent the first hop."""
    guards = make_guards("evidence")
    rows = labeled(BRIDGE)
    posted = {}
    for r in rows:
        prompts = get_prompts("small", "zh" if r["dataset"].startswith("zh") else "en")
        template = frozenset(grounding_terms(agents.seek_prompt(prompts, "", "", [], r["round"])))
        posted[id(r)], _ = guards.admit(r["reply"], r["chunk"], r["shown"], r["question"], template, "")
    for r in rows:
        if posted[id(r)] is not None:
            made_of = chunk_sentences_in(posted[id(r)], r["chunk"])
            assert made_of and all(s.split(": ", 1)[-1] in r["chunk"] for s in made_of), (r["id"], posted[id(r)])
    invented = [r for r in rows if r["label"] == "invented"]
    echoes = [r for r in rows if r["label"] == "echo"]
    # measured: 10 of 31 inventions post something, each a true sentence of its chunk: the question's person's first
    # hop beside a made-up province or county (8), the note placing the shown village the reply calls a county (1),
    # and the head of a note cut at the chunk's end, "Hollinden is a village in" (1)
    assert sum(posted[id(r)] is not None for r in invented) <= 10
    # measured: 5 of 17 echoes post something: the chunk's note on where the echoed first hop's village lies (one of
    # them the tail of a note cut across two chunks)
    assert sum(posted[id(r)] is not None for r in echoes) <= 5
    extracted = [r for r in rows if r["label"] == "extracted"]
    silent = [r for r in extracted if posted[id(r)] is None]
    waiting = [r for r in silent if r["round"] == 1 and not on_a_chain(r["question"], [], [r["reply"]])]
    assert len(waiting) <= 2  # measured: 2 of 37 (round-1 village -> region notes, both distractors)
    # measured: 6 of 37 (no first hop posts nothing): two village -> region distractor notes and a second hop whose
    # first hop its agent was not shown, two quotes of the novel, and the bare county ending a note cut across chunks
    assert len(silent) - len(waiting) <= 6
