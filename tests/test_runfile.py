"""Run files: names a person can read (and the older names still found), one rule for stale rows, reuse, renaming."""

import json

import pytest

from extlib.datasets import DATASETS
from extlib.datasets import options as dataset_options
from extlib.errors import UserError
from extlib.methods import METHODS, knob_names
from extlib.models import MODELS
from extlib.runfile import RunFile, current_versions, file_name, legacy_name, load_rows, renames

SHA = MODELS["qwen2.5-1.5b"].sha256
CODE = METHODS["direct"][0].version


def header(dataset: str, method: str, length: int, knobs: dict, options: dict, n: int = 30, seed: int = 2,
           window: int = 1024) -> dict:
    return {"dataset": dataset, "method": method, "input_tokens": length, "n": n, "seed": seed,
            "model": "qwen2.5-1.5b", "context_window": window, "knobs": knobs, "options": options, "repeat": 0}


# headers of committed run files, with the names the older scheme gave them
COMMITTED = [
    (header("hotpotqa", "extagents", 1024, {"chunk_tokens": 384, "rating": "order", "paragraphs": True,
                                            "seek_max_tokens": 128}, {"split": "test"}),
     "extagents__qwen2.5-1.5b__L1024__W1024__n30__s2__65583eae.jsonl",
     "extagents__qwen2.5-1.5b__L1024__W1024__n30__s2__chunk_tokens-384_paragraphs-true_rating-order_"
     "seek_max_tokens-128_split-test.jsonl"),
    (header("en-bridge", "direct", 4096, {}, {"split": "test", "distractors": 4}),
     "direct__qwen2.5-1.5b__L4096__W1024__n30__s2__b00ab5f2.jsonl",
     "direct__qwen2.5-1.5b__L4096__W1024__n30__s2__split-test.jsonl"),
    (header("en-bridge", "extagents", 4096,
            {"chunk_tokens": 384, "paragraphs": False, "rating": "llm", "seek_max_tokens": 128, "gks": False},
            {"split": "test", "distractors": 4}),
     "extagents__qwen2.5-1.5b__L4096__W1024__n30__s2__cf0f382a.jsonl",
     "extagents__qwen2.5-1.5b__L4096__W1024__n30__s2__chunk_tokens-384_gks-false_seek_max_tokens-128_split-test.jsonl"),
    (header("hotpotqa-longdoc", "chain-of-agents", 4096, {"chunk_tokens": 320},
            {"order": "forward", "position": 0.05, "distance": 0.0}, n=20),
     "chain-of-agents__qwen2.5-1.5b__L4096__W1024__n20__s2__086c06b2.jsonl",
     "chain-of-agents__qwen2.5-1.5b__L4096__W1024__n20__s2__chunk_tokens-320_distance-0.0_position-0.05.jsonl"),
    # a knob the code no longer has is spelled out like any other
    (header("hotpotqa", "extagents", 8000, {"chunk_tokens": 512, "paragraphs": True, "rating": "order",
                                            "restated": "drop"}, {}, n=10, seed=1, window=2048),
     "extagents__qwen2.5-1.5b__L8000__W2048__n10__s1__069052fe.jsonl",
     "extagents__qwen2.5-1.5b__L8000__W2048__n10__s1__chunk_tokens-512_paragraphs-true_rating-order_"
     "restated-drop.jsonl"),
]


@pytest.mark.parametrize("spec, legacy, readable", COMMITTED)
def test_a_run_file_is_named_by_its_non_default_settings_spelled_out(spec, legacy, readable):
    assert legacy_name(spec) == legacy
    assert file_name(spec) == readable


def test_a_setting_written_at_its_default_names_the_same_file():
    few = header("hotpotqa-longdoc", "extagents", 4096, {"chunk_tokens": 512}, {})
    every = header("hotpotqa-longdoc", "extagents", 4096, {"chunk_tokens": 512, "rating": "llm", "rounds": 5},
                   {"position": 0.25, "distance": 0.5})
    assert file_name(every) == file_name(few)
    assert file_name(few) == "extagents__qwen2.5-1.5b__L4096__W1024__n30__s2__chunk_tokens-512.jsonl"
    assert file_name({**few, "repeat": 2}).endswith("__chunk_tokens-512__r2.jsonl")
    assert file_name({**few, "model": "org/model"}).startswith("extagents__org_model__")


def test_values_that_would_read_as_another_value_and_names_too_long_are_written_as_a_digest():
    base = header("hotpotqa", "direct", 1024, {}, {})
    assert file_name({**base, "options": {"split": "384"}}) != file_name({**base, "options": {"split": 384}})
    assert "settings-" in file_name({**base, "options": {"split": "true"}})  # a string that reads as JSON
    assert "settings-" in file_name({**base, "options": {"split": "two words"}})
    assert "settings-" in file_name({**base, "options": {"split": [1, 2]}})
    long = file_name({**base, "options": {f"option_{i}": i for i in range(20)}})
    assert len(long) <= 180 and "settings-" in long
    assert file_name({**base, "options": {"split": "test"}}).endswith("__split-test.jsonl")


def test_no_knob_shares_its_name_with_a_dataset_option():
    """A name lists knobs and options in one run of tokens: it says which is which only if no name is both."""
    knobs = {k for method in METHODS for k in knob_names(method)}
    options = {o for dataset in DATASETS for o in dataset_options(dataset)}
    assert not knobs & options
    assert all("-" not in name for name in knobs | options)


def test_a_file_the_older_scheme_named_is_found_and_two_names_for_one_run_are_an_error(tmp_path):
    spec, legacy, readable = COMMITTED[1]
    assert RunFile.locate(tmp_path, spec).path == tmp_path / "en-bridge" / readable  # a new run: the readable name
    (tmp_path / "en-bridge").mkdir()
    (tmp_path / "en-bridge" / legacy).write_text("")
    assert RunFile.locate(tmp_path, spec).path.name == legacy
    (tmp_path / "en-bridge" / readable).write_text("")
    with pytest.raises(UserError, match="two run files hold the same run"):
        RunFile.locate(tmp_path, spec)


def write(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def answered(question: str, version: int, sha: str | None, f1: float = 1.0) -> dict:
    return {"id": question, "f1": f1, "error": "", "spec": header("hotpotqa", "direct", 1024, {}, {}),
            "method_version": version, "model_sha256": sha}


def test_one_rule_says_which_rows_are_stale_for_computing_and_for_tables(tmp_path):
    """Another version or other weights make a row stale; computing answers it again, tables leave it out."""
    path = tmp_path / "hotpotqa" / "direct.jsonl"
    write(path, [answered("same", CODE, SHA), answered("unknown weights", CODE, None),
                 answered("other weights", CODE, "0" * 64), answered("older", CODE - 1 if CODE > 1 else 99, SHA)])
    run_file = RunFile(path)
    computing = set(run_file.current(current_versions(), SHA))
    assert computing == {"same", "unknown weights"}
    tables = load_rows([path], include_stale=True)
    assert set(tables.loc[~tables["stale"], "id"]) == computing
    if CODE > 1:  # pinning the older version makes its rows the current ones
        pinned = load_rows([path], versions={"direct": CODE - 1})
        assert set(pinned["id"]) == {"older"}


def test_tables_read_each_question_latest_current_row_and_drawing_the_newest_version(tmp_path):
    path = tmp_path / "hotpotqa" / "direct.jsonl"
    write(path, [answered("q1", CODE, SHA, 0.2), answered("q1", CODE, "0" * 64, 0.9), answered("q2", CODE, SHA, 0.4)])
    run_file = RunFile(path)
    assert run_file.for_tables(current_versions())["q1"]["f1"] == 0.2  # the later row's weights are not these
    assert run_file.latest()["q1"]["f1"] == 0.9
    assert set(run_file.newest()) == {"q1", "q2"}


def test_renaming_lists_files_named_by_the_older_scheme_and_leaves_others(tmp_path):
    for spec, legacy, _ in COMMITTED[:2]:
        write(tmp_path / spec["dataset"] / legacy, [{"id": "q1", "spec": spec}])
    older_default = COMMITTED[3][0]  # named when a default was another: its rows spell its settings out
    write(tmp_path / "hotpotqa-longdoc" / "chain-of-agents__x__deadbeef.jsonl", [{"id": "q1", "spec": older_default}])
    two = COMMITTED[4][0]
    write(tmp_path / "hotpotqa" / "extagents__two.jsonl", [{"id": "q1", "spec": two},
                                                           {"id": "q2", "spec": {**two, "knobs": {}}}])
    write(tmp_path / "notes" / "server_memory.jsonl", [{"id": "q1", "rss": 1}])  # not a run file
    # a row of an older config carries a knob of another method, which its name left out
    write(tmp_path / "hotpotqa" / "direct__qwen2.5-1.5b__L8000__W2048__n20__s0.jsonl",
          [{"id": "q1", "spec": header("hotpotqa", "direct", 8000, {"rating": "order"}, {}, 20, 0, 2048)}])
    moves, left = renames([tmp_path])
    assert sorted((old.name, new.name, legacy) for old, new, legacy in moves) == sorted(
        [(c[1], c[2], True) for c in COMMITTED[:2]] + [("chain-of-agents__x__deadbeef.jsonl", COMMITTED[3][2], False)])
    assert len(left) == 1 and "extagents__two.jsonl: its rows' settings disagree" in left[0]
    (tmp_path / "en-bridge" / COMMITTED[1][2]).write_text("")
    with pytest.raises(UserError, match="would merge run files"):
        renames([tmp_path])
