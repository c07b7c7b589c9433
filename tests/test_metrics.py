"""Vectors derived from the official scripts' rules (hotpot_evaluate_v1.py, InfiniteBench compute_scores.py)."""

import pytest

from extlib.metrics import en_qa_f1, hotpot_em, hotpot_f1, normalize_answer, normalize_zh_answer, score, score_rows


@pytest.mark.parametrize("text, normalized", [
    ("The Eiffel Tower!", "eiffel tower"), ("  an  apple, a day ", "apple day"), ("Theatre", "theatre"),
    ("U.S.A.", "usa"), ("it's", "its"), ("A", ""), ("café—au lait", "café—au lait"),
])
def test_normalize_answer(text, normalized):
    assert normalize_answer(text) == normalized


@pytest.mark.parametrize("prediction, gold, f1", [
    ("Rutland", "Rutland", 1.0),
    ("the county of Rutland", "Rutland", 2 * (1 / 3) * 1 / (1 / 3 + 1)),  # tokens: county of rutland
    ("yes", "yes", 1.0), ("yes", "no", 0.0), ("yes", "yes it is", 0.0), ("no answer", "noanswer", 0.0),
    ("noanswer", "noanswer", 1.0), ("Paris France", "Paris, France", 1.0), ("", "Paris", 0.0),
    ("a a b", "a b b", 0.0),  # articles removed: "b" vs "b b" -> 2*(1)*(0.5)/(1.5)
])
def test_hotpot_f1(prediction, gold, f1):
    if prediction == "a a b":
        f1 = 2 * 1.0 * 0.5 / 1.5
    assert hotpot_f1(prediction, gold) == pytest.approx(f1)


def test_hotpot_em_and_repeated_tokens():
    assert hotpot_em("The Rutland.", "rutland") == 1.0 and hotpot_em("Rutland county", "Rutland") == 0.0
    assert hotpot_f1("rutland rutland", "rutland") == pytest.approx(2 * 0.5 * 1 / 1.5)  # Counter overlap


def test_en_qa_takes_the_best_gold_and_has_no_yes_no_rule():
    assert en_qa_f1("Westmarch", ["Rutland", "Westmarch"]) == 1.0
    assert en_qa_f1("yes indeed", ["yes"]) == pytest.approx(2 * 0.5 * 1 / 1.5)
    assert en_qa_f1("anything", []) == 0.0


def test_zh_normalization_and_character_f1():
    assert normalize_zh_answer("北京， 中国。") == "北京中国"
    assert normalize_zh_answer("Hello, World!") == "helloworld"
    assert score("北京市", ["北京"], "zh")["f1"] == pytest.approx(2 * (2 / 3) * 1 / (2 / 3 + 1))
    assert score("「红楼梦」", ["红楼梦"], "zh") == {"f1": 1.0, "em": 1.0}
    # max over the golds, as in a published prediction file
    assert score("是无嗔大师。", ["毒手药王", "无嗔大师"], "zh")["f1"] == pytest.approx(2 * 0.8 * 1 / 1.8)
    # the official punctuation list has 》 but not 《, so one character is left over
    assert score("《红楼梦》", ["红楼梦"], "zh")["f1"] == pytest.approx(2 * 0.75 * 1 / 1.75)


def test_rows_are_scored_by_id_and_missing_rows_count_as_zero():
    golds = {"q1": ["Rutland"], "q2": ["Paris"], "q3": ["yes"]}
    report = score_rows({"q2": "Paris", "q1": "Rutland", "q3": None}, golds, "hotpotqa")
    assert report["n"] == 3 and report["missing"] == 1
    assert report["f1"] == pytest.approx(2 / 3) and report["rows"]["q3"] == {"f1": 0.0, "em": 0.0}
    assert score_rows({"q1": "Rutland"}, golds, "hotpotqa")["missing"] == 2
    with pytest.raises(ValueError, match="not in the gold set"):
        score_rows({"q9": "x"}, golds, "hotpotqa")
    with pytest.raises(ValueError, match="unknown metric"):
        score("x", ["x"], "bleu")
