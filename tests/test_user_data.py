"""Your own QA data: local JSONL / CSV / Parquet files read with the datasets library, fields mapped by name."""

import json

import pandas as pd
import pytest

from extlib.datasets import DataError, load_tasks
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
    with pytest.raises(DataError, match="row 1 .id 0.: an empty or non-text gold answer"):
        load_tasks("user", 200, tokenizer=ByteTokenizer(), progress=False, path=str(tmp_path / "empty_answer.jsonl"),
                   question="ask", answers="gold", knowledge="doc")
