"""Your own QA data: local JSONL / JSON / CSV / Parquet files, fields mapped by name, each problem named by line."""

import json

import pandas as pd
import pytest

from extlib.datasets import DataError, load_tasks
from extlib.errors import UserError
from extlib.testing import ByteTokenizer

ROWS = [{"qid": f"q{i}", "ask": f"Who keeps light {i}?", "gold": f"Ann {i}",
         "doc": f"Light {i} is kept by Ann {i}. " + "The sea is grey. " * 40} for i in range(3)]


def write(tmp_path, kind: str):
    path = tmp_path / f"mine.{kind}"
    frame = pd.DataFrame(ROWS)
    if kind == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    elif kind == "csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path)
    return path


@pytest.mark.parametrize("kind", ["jsonl", "csv", "parquet"])
def test_a_local_file_becomes_tasks_of_the_requested_length(tmp_path, kind):
    tasks = load_tasks("user", 200, tokenizer=ByteTokenizer(), progress=False, path=str(write(tmp_path, kind)),
                       question="ask", answers="gold", knowledge="doc", id="qid")
    assert [t.id for t in tasks] == ["q0", "q1", "q2"] and tasks[1].answers == ["Ann 1"]
    assert all(len(t.knowledge.encode()) == 200 and t.knowledge.startswith(f"Light {i} is kept") for i, t in
               enumerate(tasks))  # cut in the middle: the first half stays
    assert tasks[0].question == "Who keeps light 0?" and tasks[0].metric == "en"


def test_missing_fields_are_named_with_the_ones_the_file_has(tmp_path):
    path = write(tmp_path, "jsonl")
    with pytest.raises(DataError, match=r"no field question='question'.*its fields are qid, ask, gold, doc"):
        load_tasks("user", 200, tokenizer=ByteTokenizer(), progress=False, path=str(path), answers="gold",
                   knowledge="doc")
    with pytest.raises(FileNotFoundError, match="data file not found"):
        load_tasks("user", 200, tokenizer=ByteTokenizer(), progress=False, path=str(tmp_path / "none.jsonl"))
    with pytest.raises(ValueError, match="needs path="):
        load_tasks("user", 200, tokenizer=ByteTokenizer(), progress=False)
    (tmp_path / "empty_answer.jsonl").write_text(json.dumps({**ROWS[0], "gold": ""}) + "\n")
    with pytest.raises(DataError, match=r"empty_answer.jsonl, line 1: the answers \(field 'gold'\) are missing"):
        load_tasks("user", 200, tokenizer=ByteTokenizer(), progress=False, path=str(tmp_path / "empty_answer.jsonl"),
                   question="ask", answers="gold", knowledge="doc")


def load(path):
    return load_tasks("user", 200, tokenizer=ByteTokenizer(), progress=False, path=str(path), question="ask",
                      answers="gold", knowledge="doc", id="qid")


def jsonl(tmp_path, *lines: str):
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


GOOD = [json.dumps(r) for r in ROWS]


@pytest.mark.parametrize(("lines", "message"), [
    ([GOOD[0], "", GOOD[1], '{"qid": "q2", "ask": '], r"mine.jsonl, line 4: not valid JSON"),
    ([GOOD[0], '["q1", "Who?"]'], r"mine.jsonl, line 2: a list, not a JSON object"),
    ([GOOD[0], GOOD[1], GOOD[0]], r"mine.jsonl, line 3: duplicate id 'q0' \(first at line 1\)"),
    ([GOOD[0], "", json.dumps({**ROWS[1], "ask": "  "})], r"mine.jsonl, line 3: the question \(field 'ask'\) is "
                                                           "missing or empty"),
    ([GOOD[0], json.dumps({k: v for k, v in ROWS[1].items() if k != "ask"})],
     r"mine.jsonl, line 2: the question \(field 'ask'\) is missing or empty"),
    ([GOOD[0], json.dumps({**ROWS[1], "gold": []})], r"line 2: the answers \(field 'gold'\) are missing or empty"),
    ([json.dumps({**ROWS[0], "gold": ["Ann", ""]})], r"line 1: an empty or non-text gold answer in field 'gold'"),
    ([json.dumps({**ROWS[0], "gold": 1905})], r"line 1: the answers \(field 'gold'\) are int 1905; give a text"),
    ([GOOD[0], json.dumps({**ROWS[1], "doc": ""})], r"line 2: the knowledge \(field 'doc'\) is missing or empty"),
    ([json.dumps({**ROWS[0], "doc": {"text": "x"}})], r"line 1: the knowledge \(field 'doc'\) is dict .*, not text"),
    ([json.dumps({**ROWS[0], "ask": 42})], r"line 1: the question \(field 'ask'\) is int 42, not text"),
    ([json.dumps({**ROWS[0], "qid": ["q0"]})], r"line 1: the id \(field 'qid'\) is list"),
])
def test_every_jsonl_problem_names_the_file_and_its_line(tmp_path, lines, message):
    with pytest.raises(DataError, match=message):
        load(jsonl(tmp_path, *lines))


def test_jsonl_rows_with_numeric_ids_and_blank_lines_load(tmp_path):
    path = jsonl(tmp_path, json.dumps({**ROWS[0], "qid": 7}), "", GOOD[1])
    assert [t.id for t in load(path)] == ["7", "q1"]


@pytest.mark.parametrize(("data", "message"), [
    (ROWS[:1] + [ROWS[0]], r"mine.json, element \[1\]: duplicate id 'q0' \(first at element \[0\]\)"),
    ({"version": 2, "data": [ROWS[0], {**ROWS[1], "gold": ""}]}, r"mine.json, element data\[1\]: the answers"),
    ([ROWS[0], "q1"], r"mine.json, element \[1\]: a str, not an object"),
    ({"a": [], "b": []}, r"mine.json: an object with 2 lists \(a, b\)"),
])
def test_json_problems_name_the_element(tmp_path, data, message):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    with pytest.raises(DataError, match=message):
        load(path)


def test_json_lists_load_bare_or_under_one_key_and_a_syntax_error_names_its_line(tmp_path):
    path = tmp_path / "mine.json"
    for data in (ROWS, {"meta": "x", "data": ROWS}):
        path.write_text(json.dumps(data), encoding="utf-8")
        assert [t.id for t in load(path)] == ["q0", "q1", "q2"]
    path.write_text('[\n{"qid": "q0"},\n{"qid" "q1"}\n]', encoding="utf-8")
    with pytest.raises(DataError, match=r"mine.json, line 3: not valid JSON \(Expecting ':' delimiter, column 8\)"):
        load(path)


def test_csv_problems_name_the_line_counting_the_header_as_line_1(tmp_path):
    path = write(tmp_path, "csv")
    lines = path.read_text().splitlines()
    path.write_text("\n".join([*lines, lines[2]]) + "\n")  # q1 again, on line 5
    with pytest.raises(DataError, match=r"mine.csv, line 5: duplicate id 'q1' \(first at line 3\)"):
        load(path)
    path.write_text("\n".join([lines[0], lines[1], "", "q9,,Ann 9,Some light."]) + "\n")
    with pytest.raises(DataError, match=r"mine.csv, line 4: the question \(field 'ask'\) is missing or empty"):
        load(path)
    path.write_text("\n".join([lines[0], lines[1], "q9,Who?,Ann 9,Some light.,extra"]) + "\n")
    with pytest.raises(DataError, match=r"mine.csv, line 3: 5 values but the header names 4 fields"):
        load(path)
    path.write_text("\n".join([lines[0], 'q8,"Who keeps\nthe light?",Ann 8,Some light.', "q9,Who?,,Some light."]))
    with pytest.raises(DataError, match=r"mine.csv, line 4: the answers \(field 'gold'\) are missing"):
        load(path)  # a quoted field across two lines moves the next row's line number on


def test_parquet_rows_are_named_by_their_row_number(tmp_path):
    path = tmp_path / "mine.parquet"
    pd.DataFrame([ROWS[0], {**ROWS[1], "doc": ""}]).to_parquet(path)
    with pytest.raises(DataError, match=r"mine.parquet, row 2: the knowledge \(field 'doc'\) is missing or empty"):
        load(path)


def test_data_errors_are_user_errors_and_still_value_errors():
    assert issubclass(DataError, UserError) and issubclass(DataError, ValueError)
