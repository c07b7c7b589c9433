import pytest

from extlib.grounding import answer_is_stated
from extlib.parsing import is_no_information, parse_answer, parse_score


@pytest.mark.parametrize("text, score", [
    ("Score: 85", 85.0), ("score:72", 72.0), ("**Score:** 40", 40.0), ("Score: (90)", 90.0),
    ("I would rate it 65 out of 100.", 65.0), ("Score: 150", 100.0), ("Score: 12.5", 12.5),
    ("分数 Score：30", 30.0), ("no idea", None), ("", None), ("Score (0-100): 85", 85.0),
    ("Score: (0-100) 70", 70.0),
])
def test_parse_score(text, score):
    assert parse_score(text) == score


@pytest.mark.parametrize("text, answer", [
    ("Ezra was born in Marrowby, which is in Westmarch.\nAnswer: Westmarch", "Westmarch"),
    ("Answer: NO ANSWER", None), ("NO ANSWER", None), ("\"NO ANSWER\"", None),
    ("The facts do not say.\nAnswer: `NO ANSWER`", None),
    ("Paris", "Paris"), ("Paris.\n", "Paris"), ("  \nLondon\nmore text", "London"),
    ("answer: <Westmarch>", "Westmarch"), ("**Answer:** Lord Byron.", "Lord Byron"),
    ("Answer: first\nAnswer: second", "second"), ("Final answer: 1912", "1912"),
    ("Answer：北京", "北京"), ("", None),
    ("Based on the facts, he was born in the county of Rutland. Answer: Rutland", "Rutland"),
    ("The keeper is Ezra.\n\nAnswer: NO ANSWER", None), ("Answer: <short phrase>\n\nInstruction: Who?", None),
    ("We need the answer: it is unclear", "it is unclear"),
    ("欧阳昀沅出生于江西省。因此，答案是：江西省", "江西省"), ("答案：NO ANSWER", None),
])
def test_parse_answer(text, answer):
    assert parse_answer(text) == answer


def test_a_reasoning_without_an_answer_line_is_no_answer_when_the_prompt_asks_for_one():
    reasoning = "I cannot determine the answer from these facts."
    assert parse_answer(reasoning) == reasoning.rstrip(".")
    assert parse_answer(reasoning, answer_line=True) is None
    assert parse_answer("So it is Rutland.\nAnswer: Rutland", answer_line=True) == "Rutland"


@pytest.mark.parametrize("text, empty", [
    ("NO INFORMATION", True), ("NO INFORMATION.", True), ("\"NO INFORMATION\"", True), ("", True),
    ("No information.", True), ("无相关信息", True), ("NONE", True), ("None.", True),
    ("None of the sailors knew the captain's name.", False),
    ("Ezra Holloway was born in Marrowby.", False),
    ("NO INFORMATION about the birth, but the text says Ezra lived in Marrowby for twenty years with "
     "his sister and kept the lighthouse.", False),
])
def test_is_no_information(text, empty):
    assert is_no_information(text) is empty


def test_an_answer_must_be_stated_by_the_messages():
    facts = ["Tobias Wrenfield was born in the village of Kettleby."]
    assert not answer_is_stated("Northumberland", facts)
    assert answer_is_stated("Kettleby", facts) and answer_is_stated("the village of Kettleby", facts)
    assert answer_is_stated("yes", facts) and answer_is_stated("No.", facts)


def test_a_reply_that_opens_with_its_verdict_answers_a_yes_no_question():
    from extlib.parsing import verdict

    assert [verdict(t) for t in ("Yes, both are American.", "No.", "**Yes**, they are", "no")] == [
        "yes", "no", "yes", "no"]
    assert [verdict(t) for t in ("NO ANSWER", "No answer can be given", "NO INFORMATION", "Nobody knows",
                                 "Noel Coward", "yes-man", "No new facts")] == [None] * 7


def test_the_reasoning_agent_reads_yes_and_no_with_or_without_an_answer_line():
    from extlib import agents
    from extlib.methods.base import run_sync
    from extlib.prompts import get_prompts
    from extlib.testing import scripted_client

    prompts = get_prompts("small", "en", "facts-first")
    for reply, expected in (("Yes, both were born in Ohio.", "yes"),
                            ("Both were born in Ohio.\nAnswer: Yes, both.", "yes"),
                            ("No, I cannot tell.\nAnswer: NO ANSWER", None), ("Answer: Rutland", "Rutland")):
        answer, _ = run_sync(agents.reason(scripted_client(lambda p, r=reply: r), prompts, "Were both born in Ohio?",
                                           ["A was born in Ohio.", "B was born in Ohio."], False, 1, 64))
        assert answer == expected, reply


def test_an_answer_stated_in_prose_counts_when_there_is_no_answer_line():
    from extlib.parsing import answer_in_prose

    assert answer_in_prose("Pike was born in Rutland. Therefore, the answer is Rutland.") == "Rutland"
    assert answer_in_prose("So the answer is: **Rutland**.") == "Rutland"
    assert answer_in_prose("因此，答案是：江西省") == "江西省"
    assert answer_in_prose("The answer is NO ANSWER") is None and answer_in_prose("I do not know the answer.") is None


def test_a_reasoning_reply_without_its_answer_line_is_asked_for_the_line_in_a_second_turn():
    from extlib import agents
    from extlib.methods.base import run_sync
    from extlib.prompts import get_prompts
    from extlib.testing import scripted_client

    prompts = get_prompts("small", "en", "facts-first")
    facts = ["Ashdown was born at Fenstead.", "Fenstead lies in Norland."]
    for follow_up, must, expected in (("Answer: Norland", False, "Norland"), ("Answer: NO ANSWER", False, None),
                                      ("Norland.", True, "Norland")):
        ask = prompts.answer_line_final if must else prompts.answer_line

        def respond(prompt: str, line: str = follow_up, ask: str = ask) -> str:
            reply = "Based on the facts provided, Ashdown was born in Norland."
            return line if prompt == ask else reply

        llm = scripted_client(respond)
        answer, record = run_sync(agents.reason(llm, prompts, "Which county was Ashdown born in?", facts, must, 2,
                                                64))
        assert llm._client.prompts[-1] == ask and len(llm._client.prompts) == 2
        assert answer == expected and ask in record.output
    # the paper's prompts ask for no answer line: no second turn, the reply is the answer
    paper = get_prompts("paper", "en")
    llm = scripted_client(lambda p: "Norland")
    answer, _ = run_sync(agents.reason(llm, paper, "Which county?", facts, False, 1, 64))
    assert answer == "Norland" and len(llm._client.prompts) == 1
