"""A preset's reuse of committed rows: only questions the target lacks are copied, once, and a bad folder is named."""

import json

import pytest

from extlib import presets
from extlib.jsonl import read_jsonl


def write(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_rows_the_target_lacks_are_copied_once_and_its_own_rows_are_kept(tmp_path):
    source, target = tmp_path / "study" / "books", tmp_path / "results" / "books"
    write(source / "direct__L8.jsonl", [{"id": "q1", "f1": 1.0}, {"id": "q2", "f1": 0.0, "error": "x"},
                                        {"id": "q2", "f1": 0.5}, {"id": "q3", "f1": 0.2}])
    write(source / "extagents__L4.jsonl", [{"id": "q1", "f1": 0.7}])
    write(target / "direct__L8.jsonl", [{"id": "q3", "f1": 0.9}])

    assert presets.reuse_rows(source, target) == 3  # q1 and q2 (its latest row) into direct, q1 into extagents
    assert read_jsonl(target / "direct__L8.jsonl") == [{"id": "q3", "f1": 0.9}, {"id": "q1", "f1": 1.0},
                                                       {"id": "q2", "f1": 0.5}]
    assert read_jsonl(target / "extagents__L4.jsonl") == [{"id": "q1", "f1": 0.7}]
    assert presets.reuse_rows(source, target) == 0  # nothing twice


def test_a_reuse_folder_that_is_not_there_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(presets, "PRESETS", tmp_path)
    (tmp_path / "mine.yaml").write_text("reuse:\n  01_scaling: [docs/results/no_such_study]\n", encoding="utf-8")
    with pytest.raises(presets.PresetError, match=r"reuse of 01_scaling is a list of folders .*no_such_study"):
        presets.load_preset("mine")
    (tmp_path / "mine.yaml").write_text("reuse:\n  07_survey: [docs]\n", encoding="utf-8")
    with pytest.raises(presets.PresetError, match="keys of reuse"):
        presets.load_preset("mine")


def test_the_cpu_preset_reuses_the_beyond_window_books_under_the_names_its_scaling_notebook_writes():
    reuse = presets.load_preset("cpu")["reuse"]["01_scaling"]
    assert [f.split("/")[-1] for f in reuse] == ["hotpotqa-longdoc", "zh-longdoc"]
    for folder in reuse:
        assert list((presets.ROOT / folder).glob("*.jsonl")), folder


def test_the_cpu_scaling_notebook_names_its_4x_and_8x_book_cells_as_the_committed_rows():
    """The cells 01_scaling builds under the cpu preset (as its second cell does) find the beyond-window files."""
    from extlib.cells import Cell
    from extlib.methods import knobs_for

    config = presets.load_preset("cpu")
    plan, window, seed = config["notebooks"]["01_scaling"], config["common"]["window"], config["common"]["seed"]
    for folder in config["reuse"]["01_scaling"]:
        dataset = folder.split("/")[-1]
        knobs = knobs_for(["extagents", "direct", "mapreduce"], {"chunk_tokens": plan["chunk_tokens"], "rating": "llm",
                                                                  "paragraphs": dataset in plan["paragraphs"]})
        options = {"position": plan["position"], "distance": plan["distance"]}
        for method, method_knobs in knobs.items():
            for x in (4, 8):
                cell = Cell(dataset, method, x * window, method_knobs, options, n=plan["n"], seed=seed,
                            model="qwen2.5-1.5b", context_window=window)
                path = cell.run_file(presets.ROOT / "results/cpu/beyond_window").path
                assert path.exists(), path
