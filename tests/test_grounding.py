"""The checks against invented facts, echoes and empty answers, on labeled real replies and on made-up cases."""

import json

import pytest

from extlib.grounding import admission, answer_is_stated, grounding_terms, names, new_names
from extlib.guards import MIN_GROUNDING, follow_links
from extlib.parsing import parse_answer

from .conftest import DATA

LABELS = ("extracted", "invented", "echo")
ORIGINAL = ("hotpotqa", "hotpotqa-longdoc", "zh-longdoc")  # the rows the grounding check's bounds were measured on
BRIDGE = ("en-bridge", "zh-bridge")  # replies of the evidence guards' dev runs (tests/test_anchoring.py judges them)


def fixture(datasets: tuple[str, ...] | None = None) -> list[dict]:
    """The labeled replies (those of `datasets`, if given)."""
    rows = [json.loads(line) for line in (DATA / "seeker_replies.jsonl").read_text(encoding="utf-8").splitlines()]
    return [row for row in rows if datasets is None or row["dataset"] in datasets]


def test_the_labeled_fixture_is_real_replies_with_their_chunks():
    rows = fixture()
    assert len(rows) >= 100
    assert {r["label"] for r in rows} == set(LABELS)
    for row in rows:
        assert row["reply"].strip() and row["question"].strip() and len(row["chunk"]) > 200
        assert row["round"] == 1 and not row["shown"] or row["round"] > 1 and row["shown"]
        assert row["dataset"] in ORIGINAL + BRIDGE
    assert {r["dataset"] for r in rows} >= {"hotpotqa", "zh-longdoc", *BRIDGE}
    for book in BRIDGE:
        assert {r["label"] for r in rows if r["dataset"] == book} == set(LABELS)


def test_the_check_keeps_extracted_facts_and_drops_inventions_on_labeled_replies():
    """The measured rates at the default threshold (benchmarks/grounding.py prints the whole table): a change
    that drops more true facts or keeps more inventions fails here. Judged on the rows it was measured on: the
    bridge books' rows are judged by what the evidence guards post (tests/test_anchoring.py)."""
    rows = fixture(ORIGINAL)
    kept = {id(r): admission(r["reply"], r["chunk"], r["shown"], r["question"], MIN_GROUNDING) is None
            for r in rows}
    extracted = [r for r in rows if r["label"] == "extracted"]
    made_up = [r for r in rows if r["label"] != "extracted"]
    false_drops = sum(not kept[id(r)] for r in extracted)
    false_keeps = sum(kept[id(r)] for r in made_up)
    assert false_drops <= 0.06 * len(extracted), false_drops  # measured: 3 of 53 (two are bare names: "MARIA.")
    assert false_keeps <= 0.10 * len(made_up), false_keeps  # measured: 18 of 184 (version 1 kept 98)


def test_terms_count_numbers_and_short_names_and_pair_chinese_characters():
    assert {"22", "uk", "born"} <= grounding_terms("He was born in the UK on 22 May.")
    assert grounding_terms("藕桐湾村位于河北省") == {"藕桐", "桐湾", "湾村", "村位", "河北", "北省"}
    assert names("However, Marrowby lies in Westmarch.") == {"marrowby", "westmarch"}


QUESTION = "In which county was the lighthouse keeper Ezra Holloway born?"
HOP1 = "The lighthouse keeper Ezra Holloway was born in the village of Marrowby."
HOP2_CHUNK = "Fishing boats leave at dawn. The village of Marrowby lies in the county of Westmarch. Gulls cry."
FILLER_CHUNK = "Fishing boats leave the harbour at dawn and return in the afternoon. Gulls cry over the harbour."


@pytest.mark.parametrize("reply, chunk, shown, why", [
    (HOP1, "Ezra Holloway kept the light. " + HOP1, [], None),  # round 1: the first hop, extracted
    ("Marrowby lies in the county of Westmarch, so Ezra Holloway was born in Westmarch.", HOP2_CHUNK, [HOP1], None),
    ("Ezra Holloway was born in London.", FILLER_CHUNK, [], "names what its chunk does not"),
    ("The lighthouse keeper Ezra Holloway was born in a county.", FILLER_CHUNK, [], "echoes"),
    ("Ezra Holloway was born in the harbour.", FILLER_CHUNK, [], "names what its chunk does not: ezra, holloway"),
    ("Ezra Holloway was born by the harbour.", FILLER_CHUNK, [HOP1], "links the shown messages to nothing"),
    ("Ezra Holloway, the lighthouse keeper, was born in Marrowby.", FILLER_CHUNK, [HOP1], "echoes"),
    ("In which county was Ezra Holloway born?", FILLER_CHUNK, [], "echoes"),
    ("Gulls cry over the harbour.", FILLER_CHUNK, [HOP1], "unrelated"),  # true, but continues nothing
    ("Boats leave the harbour at midnight and return with whales and seals.", FILLER_CHUNK, [], "ungrounded"),
])
def test_admission(reply, chunk, shown, why):
    verdict = admission(reply, chunk, shown, QUESTION, MIN_GROUNDING)
    assert verdict is None if why is None else verdict.startswith(why), verdict


ZH_QUESTION = "抄写者公孙珩璇出生在哪个省？"
ZH_HOP1 = "抄写者公孙珩璇出生于藕桐湾村。"
ZH_NOVEL = "却说曹操引兵至城下，见城上遍插旌旗，乃下令军士四面攻打。刘备与关羽、张飞商议，欲出城迎敌。" * 3


JAZZ_QUESTION = "No issue, lelo tissue was started by which company that has the largest mobile network in Pakistan?"
JAZZ_CHUNK = ("Jazz, formerly Mobilink, is the largest mobile network in Pakistan, formed by the merger of Mobilink "
              "and Warid. It provides services for prepaid and postpaid customers to individual and corporate "
              "clients. Its head office is in Islamabad and its CEO is Aamir Ibrahim, since 2019.")
# A reply of the 1.5B model on the test draw of hotpotqa-longdoc, dropped by version 3 for its list numbers.
JAZZ_REPLY = ("The facts from the text that are related to the question are:\n1. Jazz Pakistan is the largest mobile "
              "network in Pakistan formed by the merger of Mobilink and Warid.\n2. Jazz Pakistan provides a range "
              "of services for prepaid and postpaid customers to individual and corporate clients.\n3. Its Head "
              "Office is located in Islamabad.\n4. The current CEO is Aamir Ibrahim.")


@pytest.mark.parametrize("reply, why", [
    (JAZZ_REPLY, None),  # its 1, 2, 3, 4 number the list, not facts
    (JAZZ_REPLY.replace("\n1. ", "\n1) ").replace("\n2. ", "\n- ").replace("\n3. ", "\n(3) "), None),
    (JAZZ_REPLY + "\n5. Jazz was founded in 1994.", "names what its chunk does not: 1994"),  # a number it states
    ("Aamir Ibrahim has been the CEO of Jazz since 2021.", "names what its chunk does not: 2021"),
])
def test_list_markers_are_not_numbers_the_chunk_must_hold(reply, why):
    verdict = admission(reply, JAZZ_CHUNK, [], JAZZ_QUESTION, MIN_GROUNDING)
    assert verdict is None if why is None else verdict.startswith(why), verdict


@pytest.mark.parametrize("reply, chunk, why", [
    ("根据批注，公孙珩璇的出生地是藕桐湾村。", ZH_NOVEL, "links the shown messages to nothing"),  # reworded
    ("公孙珩璇出生于藕桐湾村。", ZH_NOVEL, "echoes"),
    ("藕桐湾村位于河北省，所以公孙珩璇出生于河北省。", ZH_NOVEL + "（此本页边有一则批注：藕桐湾村位于河北省。）", None),
])
def test_admission_sees_through_a_chinese_rephrasing(reply, chunk, why):
    verdict = admission(reply, chunk, [ZH_HOP1], ZH_QUESTION, MIN_GROUNDING)
    assert verdict is None if why is None else verdict.startswith(why), verdict


def test_an_answer_must_say_something_beyond_the_question():
    facts = [ZH_HOP1, "藕桐湾村位于河北省。"]
    assert answer_is_stated("河北省", facts, ZH_QUESTION)
    assert answer_is_stated("公孙珩璇出生于河北省", facts, ZH_QUESTION)
    assert not answer_is_stated("抄写者公孙珩璇的出生省份是抄写者公孙珩璇出生的省份", facts, ZH_QUESTION)
    assert not answer_is_stated("浙江", facts, ZH_QUESTION)  # no message says so
    choice = "Which composer was born first, Gaspare Spontini or Wolfgang Amadeus Mozart?"
    dates = ["Mozart was born in 1756.", "Spontini was born in 1774."]
    assert answer_is_stated("Wolfgang Amadeus Mozart", dates, choice)  # one of the options the question names
    assert not answer_is_stated("the composer born first of Gaspare Spontini and Wolfgang Amadeus Mozart", dates,
                                choice)
    assert not answer_is_stated("yes", [], choice) and answer_is_stated("1756", dates, choice)  # not a yes/no question
    assert not answer_is_stated("YES", facts, ZH_QUESTION)
    assert answer_is_stated("yes", [], "Were Scott Derrickson and Ed Wood of the same nationality?")
    assert answer_is_stated("no", [], "两位作者是否出生在同一个省？")


@pytest.mark.parametrize("reply", ["Answer: <short phrase>", "推理。\nAnswer: <简短答案>", "Answer: short phrase"])
def test_a_copied_answer_placeholder_is_no_answer(reply):
    assert parse_answer(reply, answer_line=True) is None


def test_a_bridge_fact_follows_the_fact_it_continues():
    notes = {0: "Gulls nest on the cliffs of Pellmouth.", 3: HOP1, 5: "The village of Marrowby lies in Westmarch.",
             7: "Ezra Holloway climbs 112 steps."}
    by_score = [3, 0, 7, 5]  # the rating judged the bridge fact (5) useless: it does not name the keeper
    assert follow_links(by_score, notes, QUESTION) == [3, 5, 0, 7]
    assert follow_links([0, 5, 3], notes, QUESTION) == [0, 5, 3]  # a bridge fact keeps its place when rated well


@pytest.mark.parametrize("messages, question, leads", [
    (["[An old family record says the scribe Joan Jessop came into the world at Thornham.]"],
     "Which county was the scribe Joan Jessop born in?", ["Thornham"]),
    (["The Duke of York met Walter Dimmock in New York City.", "Thornham lies in Norland."],
     "Where was Walter Dimmock born?", ["Duke of York", "New York City", "Thornham", "Norland"]),
    (["In the county of Westmarch there is a village called Marlford."], "Where is Marlford?", ["Westmarch"]),
    (["旧谱记云：批注者赫连珩琰降生在蕖泖岙村。"], "批注者赫连珩琰的出生地在哪个省？", ["旧谱记云", "蕖泖岙村"]),
    (["芷溆墩村是藏书人尉迟檀琮的出生之地。"], "藏书人尉迟檀琮出生在哪个省？", ["芷溆墩村"]),
    (["Walter Dimmock was born there."], "Where was Walter Dimmock born?", []),
])
def test_new_names_are_what_the_messages_add_to_the_question(messages, question, leads):
    assert new_names(messages, question) == leads


def test_new_names_keep_the_first_few():
    messages = [f"{name} is a village." for name in ("Alford", "Belton", "Carby", "Denton", "Elsham")]
    assert new_names(messages, "Where?", most=3) == ["Alford", "Belton", "Carby"]
