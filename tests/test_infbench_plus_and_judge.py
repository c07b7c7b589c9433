"""∞Bench+ construction and the HELMET judge, driven by a scripted LLM (control flow only, never a result)."""

import json

import openai
import pytest

from extlib import Task
from extlib.infbench_plus import build, quote_supports, says_yes
from extlib.judge import JUDGE_PROMPT, judge_rows, parse_judgement
from extlib.methods import PromptTooLong
from extlib.testing import scripted_client

BOOK = "".join(f"Paragraph {i}. " + ("filler " * 20) for i in range(30)) + "The key is under the blue stone. "


def tasks():
    return [Task("answerable", "Where is the key?", BOOK, ["under the blue stone"]),
            Task("spread", "Who wrote the letter?", BOOK.replace("The key is under the blue stone.", "A letter."),
                 ["Ann"]),
            Task("zh", "谁写了信？", "清河镇的故事。" * 60, ["李明远"], lang="zh")]


def responder(prompt: str) -> str:
    if "blue stone" in prompt.split("Question:")[0]:  # this segment holds the key sentence
        return "Yes\nThe key is under the blue stone."
    return "否" if "问题" in prompt else "No"


def test_samples_answerable_from_one_segment_are_dropped_with_their_evidence(tmp_path):
    llm = scripted_client(responder)
    out = tmp_path / "plus.json"
    result = build(tasks(), llm, out, segment_tokens=200, context_window=1000, progress=False)
    assert result["kept"] == ["spread", "zh"]
    (dropped,) = result["dropped"]
    assert dropped["id"] == "answerable" and dropped["evidence"][0]["reply"].startswith("Yes")
    assert dropped["evidence"][0]["segment"] == len(BOOK) // 200  # the last segment
    assert json.loads(out.read_text())["kept"] == ["spread", "zh"]
    calls = len(llm._client.prompts)
    segments = [-(-len(t.knowledge.encode()) // 200) for t in tasks()]
    assert calls == sum(segments)
    build(tasks(), llm, out, segment_tokens=200, context_window=1000, progress=False)
    assert len(llm._client.prompts) == calls  # resumed from the log: nothing asked twice


def test_a_sample_whose_calls_fail_is_recorded_and_retried_on_the_next_run(tmp_path):
    broken = {"on": True}

    def flaky(prompt: str) -> str:
        if broken["on"] and "letter" in prompt:
            raise openai.APIConnectionError(request=None)
        return responder(prompt)

    llm = scripted_client(flaky, max_retries=1)
    out = tmp_path / "plus.json"
    result = build(tasks(), llm, out, segment_tokens=200, context_window=1000, progress=False)
    assert result["failed"] == ["spread"] and result["kept"] == ["zh"]  # not silently kept or dropped
    broken["on"] = False
    result = build(tasks(), llm, out, segment_tokens=200, context_window=1000, progress=False)
    assert result["failed"] == [] and result["kept"] == ["spread", "zh"]


def test_a_log_line_torn_by_a_crash_is_judged_again_and_not_glued_to_the_next(tmp_path):
    llm = scripted_client(responder)
    out = tmp_path / "plus.json"
    first = build(tasks(), llm, out, segment_tokens=200, context_window=1000, progress=False)
    log = out.with_suffix(".log.jsonl")
    lines = log.read_text().splitlines()
    log.write_text(lines[0] + "\n" + lines[1][:30])  # killed while writing the second verdict
    calls_before = len(llm._client.prompts)
    again = build(tasks(), llm, out, segment_tokens=200, context_window=1000, progress=False)
    assert again["kept"] == first["kept"] and again["dropped"] == first["dropped"]
    assert len(llm._client.prompts) > calls_before  # the torn sample was judged again
    assert all(json.loads(line) for line in log.read_text().splitlines())


def test_segments_that_cannot_fit_the_window_are_refused(tmp_path):
    with pytest.raises(PromptTooLong, match="smaller segments or a larger window"):
        build(tasks(), scripted_client(responder), tmp_path / "x.json", segment_tokens=900, context_window=1000)


def test_a_yes_whose_quote_is_not_the_segments_text_is_not_evidence(tmp_path):
    def yes_to_everything(prompt: str) -> str:  # what the 1.5B model did: Yes, quoting whatever it saw
        return "Yes\nThe key is under the blue stone."

    result = build(tasks()[:2], scripted_client(yes_to_everything), tmp_path / "v.json", segment_tokens=200,
                   context_window=1000, progress=False)
    assert result["kept"] == ["spread"]  # its segments never say where the key is: every Yes is unverified
    log = [json.loads(line) for line in (tmp_path / "v.log.jsonl").read_text().splitlines()]
    assert log[1]["unverified_yes"] and not log[1]["answering_segments"]
    trusting = build(tasks()[:2], scripted_client(yes_to_everything), tmp_path / "t.json", segment_tokens=200,
                     context_window=1000, verify=False, progress=False)
    assert trusting["kept"] == []


def test_quote_support_rules():
    segment = "Filler. The Medellín Cartel operated throughout the 1970s and 1980s in Bolivia. More filler."
    assert quote_supports("Yes\nThe Medellín Cartel operated throughout the 1970s and 1980s", segment,
                          ["1970s and 1980s"])
    assert not quote_supports("Yes\nThe king, his brother, and yours abide", segment, ["1970s and 1980s"])
    assert not quote_supports("Yes\nThe Medellín Cartel operated in Bolivia", segment, ["1970s and 1980s"])
    assert not quote_supports("Yes", segment, ["1970s and 1980s"])
    segment += " The king, his brother, and yours abide all three distracted."
    assert not quote_supports('Yes\nThe reference answer "1970s and 1980s" is given in the sentence: "The king, '
                              'his brother, and yours abide all three distracted"', segment, ["1970s and 1980s"])
    assert quote_supports("Yes\nThe Medellín Cartel operated in Bolivia", segment, ["yes"])


def test_verdict_parsing():
    assert says_yes("Yes, it says so") and says_yes("是\n引用") and says_yes("  yes")
    assert not says_yes("No") and not says_yes("否") and not says_yes("") and not says_yes("不能")


@pytest.mark.parametrize(("reply", "parsed"), [
    ('Reasoning... {"fluency": 1, "correctness": 3}', {"fluency": 1, "correctness": 3, "score": 3}),
    ('{"fluency": 1, "correctness": 0} then {"fluency": 0, "correctness": 2}', {"fluency": 0, "correctness": 2,
                                                                              "score": 0}),
    ('{"fluency": 1}', None),
    ("no json here", None),
    ('{"fluency": 1, "correctness": 7}', None),
    ('{"fluency": 1, correctness: 2}', None),
])
def test_judge_parsing_follows_helmet(reply, parsed):
    assert parse_judgement(reply) == parsed


def test_judge_rows_by_id_counts_missing_and_unparsed():
    seen = []

    def judge_reply(prompt: str) -> str:
        seen.append(prompt)
        if "Paris" in prompt.split("Answer:")[-1]:
            return 'It agrees. {"fluency": 1, "correctness": 3}'
        return "I cannot decide"

    llm = scripted_client(judge_reply)
    questions = {"a": "Capital of France?", "b": "Capital of Peru?", "c": "Capital of Chad?"}
    golds = {"a": ["Paris"], "b": ["Lima"], "c": ["N'Djamena"]}
    result = judge_rows(llm, questions, {"a": "It is\nParis.", "b": "Quito"}, golds)
    assert result["rows"]["a"]["score"] == 3 and result["unparsed"] == 1 and result["missing"] == 1
    assert result["mean_all"] == 1.0  # (3 + 0 + 0) / 3: no row is left out
    assert len(seen) == 2 and "Correct answers: ['Paris']" in seen[0] and "Answer: It is Paris." in seen[0]
    assert JUDGE_PROMPT.count("{question}") == 1
