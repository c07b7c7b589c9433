"""A study answers one question at a time across all its cells, resumes, and leaves finished cells alone."""

import json

import pytest

from extlib.cells import Cell, check_keyed_by_panel, panel_dataset
from extlib.errors import UserError
from extlib.runner import run_cells
from extlib.testing import scripted_client


def three_questions(tmp_path):
    data = tmp_path / "qa.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "question": f"Who keeps light {i}?", "answers": f"Ann {i}",
                                        "context": f"Light {i} is kept by Ann {i}. " + "The sea is grey. " * 30})
                            + "\n" for i in range(3)))
    return data


def test_a_study_goes_question_by_question_across_cells_and_a_finished_one_asks_nothing(tmp_path):
    data = three_questions(tmp_path)
    asked = []
    llm = scripted_client(lambda p: asked.append(p.split("Question: ")[1].split("?")[0]) or "Ann")
    user = {"path": str(data)}
    cells = [Cell("user", "direct", 300, {}, user, label="short"),
             Cell("user", "direct", 400, {"max_tokens": 20}, user, label="long", extra={"x": 2})]
    rows = run_cells(cells, llm, tmp_path / "runs", n=2, seed=0, window=1000, progress=False)
    assert asked[0] == asked[1] != asked[2] == asked[3]  # question 1 in every cell, then question 2
    assert len(rows) == 4 and set(rows["label"]) == {"short", "long"}
    assert rows.loc[rows.label == "long", "x"].eq(2).all()
    again = run_cells(cells, llm, tmp_path / "runs", n=2, seed=0, window=1000, progress=False)
    assert len(asked) == 4 and len(again) == 4  # everything answered: no model call, the same rows


def test_a_staged_study_answers_up_to_its_limit_in_every_cell_and_goes_on_from_there(tmp_path):
    data = three_questions(tmp_path)
    asked = []
    llm = scripted_client(lambda p: asked.append(p) or "Ann")
    cells = [Cell("user", "direct", 300, {}, {"path": str(data)}, label=label) for label in ("a", "b")]
    cells[1].knobs = {"max_tokens": 20}
    first = run_cells(cells, llm, tmp_path / "runs", n=3, seed=0, window=1000, progress=False, limit=1)
    assert len(asked) == 2 and first.groupby("label").size().to_dict() == {"a": 1, "b": 1}
    second = run_cells(cells, llm, tmp_path / "runs", n=3, seed=0, window=1000, progress=False, limit=2)
    assert len(asked) == 4 and second.groupby("label").size().to_dict() == {"a": 2, "b": 2}
    again = run_cells(cells, llm, tmp_path / "runs", n=3, seed=0, window=1000, progress=False, limit=1)
    assert len(asked) == 4 and len(again) == 2  # the rows of the questions up to the limit, though more exist
    rest = run_cells(cells, llm, tmp_path / "runs", n=3, seed=0, window=1000, progress=False, limit=5)
    assert len(asked) == 6 and len(rest) == 6  # a limit past n answers all n


def test_a_panel_names_a_dataset_or_its_split_and_a_misspelt_split_is_named():
    assert panel_dataset("hotpotqa") == ("hotpotqa", {})
    assert panel_dataset("en-bridge:test") == ("en-bridge", {"split": "test"})
    with pytest.raises(UserError, match="one of dev, test, reserve"):
        panel_dataset("hotpotqa:tset")


def test_settings_keyed_by_a_panel_the_study_does_not_draw_are_named():
    check_keyed_by_panel(["hotpotqa", "en-bridge:test"], dataset_lengths={"en-bridge:test": [4, 8]},
                         paragraphs=["hotpotqa"])
    with pytest.raises(UserError, match=r"dataset_lengths names \['en-bridge'\], not among datasets"):
        check_keyed_by_panel(["hotpotqa", "en-bridge:test"], dataset_lengths={"en-bridge": [4, 8]})


def test_a_drawn_cell_is_never_computed_and_is_labelled_when_its_rows_fall_short(tmp_path):
    data = three_questions(tmp_path)
    asked = []
    llm = scripted_client(lambda p: asked.append(p) or "Ann")
    user = {"path": str(data)}
    earlier = Cell("user", "direct", 400, {}, user, label="kept")
    run_cells([earlier], llm, tmp_path / "runs", n=2, seed=0, window=1000, progress=False, limit=1)
    assert len(asked) == 1
    computed = Cell("user", "direct", 300, {}, user, label="computed")
    kept = Cell("user", "direct", 400, {}, user, label="kept", drawn=True)
    rows = run_cells([computed, kept], llm, tmp_path / "runs", n=2, seed=0, window=1000, progress=False)
    assert len(asked) == 3  # two questions of the computed cell, none of the drawn one
    assert rows.groupby("label")["cell_note"].first().to_dict() == {"computed": "", "kept": "1/2 questions"}


def test_a_cell_bound_to_a_run_writes_the_header_the_committed_rows_carry():
    """Cell(**row["spec"]) reads a header back, and a bound cell writes it with the same keys in the same order."""
    from pathlib import Path

    committed_file = sorted(Path(__file__).parents[1].glob("results/cpu/01_scaling/en-bridge/extagents__*.jsonl"))[0]
    header = json.loads(committed_file.read_text(encoding="utf-8").splitlines()[0])["spec"]
    assert list(Cell(**header).spec().items()) == list(header.items())
    cell = Cell(header["dataset"], header["method"], header["input_tokens"], header["knobs"], header["options"])
    bound = cell.bind(header["n"], header["seed"], header["model"], header["context_window"])
    assert list(bound.spec().items()) == list(header.items()) and bound.label == "extagents"
    with pytest.raises(ValueError, match="not bound to a run"):
        cell.spec()


def test_a_capped_cell_stops_early_and_a_cell_with_its_own_draw_keeps_it(tmp_path):
    data = three_questions(tmp_path)
    asked = []
    llm = scripted_client(lambda p: asked.append(p.split("Question: ")[1].split("?")[0]) or "Ann")
    user = {"path": str(data)}
    cells = [Cell("user", "direct", 300, {}, user, label="capped", cap=1),
             Cell("user", "direct", 400, {}, user, label="two", n=2),
             Cell("user", "direct", 500, {}, user, label="three")]
    rows = run_cells(cells, llm, tmp_path / "runs", n=3, seed=0, window=1000, progress=False)
    assert rows.groupby("label").size().to_dict() == {"capped": 1, "three": 3, "two": 2}
    def questions(label: str) -> list[str]:
        return [q.rstrip("?") for q in rows.loc[rows.label == label, "question"]]

    two, three = questions("two"), questions("three")  # n=2 is its own draw
    assert questions("capped") == three[:1]
    assert asked == [three[0], two[0], three[0], two[1], three[1], three[2]]  # question k of every cell, then k+1
    assert set(rows.loc[rows.label == "two", "file"].str.contains("__n2__")) == {True}
    with pytest.raises(UserError, match="has no n, seed or window"):
        run_cells([Cell("user", "direct", 300, {}, user)], llm, tmp_path / "runs", seed=0, window=1000)
