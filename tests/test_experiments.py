"""Run files: one row per question, failures kept and retried on resume, one table from many files."""

import json

import openai
import pandas as pd
import pytest

from extlib import Task
from extlib.cells import Cell
from extlib.methods import UnknownKnob
from extlib.runfile import RunFile, load_rows
from extlib.runner import answer_cell
from extlib.tables import bootstrap_interval, collect, markdown, paired_by_question, paired_differences
from extlib.testing import scripted_client

TASKS = [Task(f"q{i}", f"Who keeps light {i}?", f"Light {i} is kept by Ann {i}. " * 20, [f"Ann {i}"])
         for i in range(4)]


def spec(**changes) -> Cell:
    base = dict(dataset="toy", method="direct", input_tokens=200, n=4, seed=0, model="scripted",
                context_window=1000)
    return Cell(**{**base, **changes})


def test_a_run_writes_one_scored_row_per_question_named_by_its_settings(tmp_path):
    llm = scripted_client(lambda p: "Ann " + p.split("Who keeps light ")[1][0])
    path = answer_cell(spec(), TASKS, llm, tmp_path)
    assert path == tmp_path / "toy" / "direct__scripted__L200__W1000__n4__s0.jsonl"
    rows = RunFile(path).latest()
    assert sorted(rows) == ["q0", "q1", "q2", "q3"] and all(r["f1"] == 1.0 for r in rows.values())
    assert rows["q0"]["calls"][0]["role"] == "answer" and rows["q0"]["spec"]["method"] == "direct"
    named = spec().run_file(tmp_path).path
    assert spec(knobs={"max_tokens": 64}).run_file(tmp_path).path != named  # knobs name the file too
    assert spec(options={"position": 0.2}).run_file(tmp_path).path != named  # and dataset options
    with pytest.raises(UnknownKnob, match="no method of direct has the knob chunk_tokens"):
        spec(knobs={"chunk_tokens": 64})  # direct reads no chunks: no new file name for a setting that does nothing


def test_a_run_named_with_or_without_its_defaults_is_one_file(tmp_path):
    """A notebook names every setting, a config file only those it changes: both must find the same rows."""
    few = spec(dataset="hotpotqa-longdoc", method="extagents", knobs={"chunk_tokens": 512, "paragraphs": True})
    every = spec(dataset="hotpotqa-longdoc", method="extagents",
                 knobs={"chunk_tokens": 512, "paragraphs": True, "rating": "llm", "rounds": 5},
                 options={"position": 0.25, "distance": 0.5})
    named = few.run_file(tmp_path).path
    assert every.run_file(tmp_path).path == named
    assert named.name.endswith("__chunk_tokens-512_paragraphs-true.jsonl")  # its settings, readable
    assert spec(dataset="hotpotqa-longdoc", method="extagents", knobs={"chunk_tokens": 512, "paragraphs": True},
                options={"position": 0.3}).run_file(tmp_path).path != named  # a changed option is a new file
    bm25 = spec(method="extagents", knobs={"rating": "bm25"})
    assert bm25.run_file(tmp_path).path != spec(method="extagents").run_file(tmp_path).path


def test_failed_questions_are_kept_scored_zero_and_retried_on_resume(tmp_path):
    broken = {"q1", "q2"}

    def flaky(prompt: str) -> str:
        if any(f"light {q[1]}?" in prompt for q in broken):
            raise openai.APIConnectionError(request=None)
        return "Ann " + prompt.split("Who keeps light ")[1][0]

    llm = scripted_client(flaky, max_retries=0)
    path = answer_cell(spec(), TASKS, llm, tmp_path)
    table = collect([path]).iloc[0]
    assert table["questions"] == 4 and table["failed"] == 2 and table["f1"] == 0.5  # failures count as 0
    broken.discard("q1")
    calls_before = len(llm._client.prompts)
    answer_cell(spec(), TASKS, llm, tmp_path)
    assert len(llm._client.prompts) - calls_before == 2  # only q1 and q2 again, not the answered ones
    rows = RunFile(path).latest()
    assert rows["q1"]["f1"] == 1.0 and rows["q1"]["attempt"] == 2 and rows["q2"]["error"]
    answer_cell(spec(), TASKS, llm, tmp_path)  # q2 has used its two attempts
    assert RunFile(path).latest()["q2"]["attempt"] == 2
    assert len(path.read_text().splitlines()) == 6  # every attempt is on file


def test_collect_and_markdown_make_one_table(tmp_path):
    llm = scripted_client(lambda p: "Ann 0")
    paths = [answer_cell(spec(method=m), TASKS, llm, tmp_path) for m in ("direct", "drag")]
    table = collect(paths)
    assert set(table["method"]) == {"direct", "drag"} and (table["em"] == 0.25).all()
    text = markdown(table)
    assert text.split("\n\n")[0].count("\n") == 3 and "calls from cache" in text
    assert "| toy | 200 | direct | 62.5 | 50–88 | 25.0 |" in text  # with its bootstrap interval
    assert "| toy | 200 | drag | passages 1.00 |" in text  # method measures: DRAG's retrieved passages
    assert json.loads(paths[0].read_text().splitlines()[0])["usage"]["calls"] == 1


def test_report_cli_reads_run_files_and_folders(tmp_path):
    import subprocess
    import sys

    answer_cell(spec(), TASKS, scripted_client(lambda p: "Ann 0"), tmp_path)
    out = subprocess.run([sys.executable, "-m", "extlib.cli", "report", str(tmp_path), "--csv",
                          str(tmp_path / "t.csv")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "| toy | 200 | direct |" in out.stdout
    assert (tmp_path / "t.csv").read_text().startswith("study,dataset,method,setting,model")
    bad = subprocess.run([sys.executable, "-m", "extlib.cli", "report", str(tmp_path / "nope")],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "no such run file or folder" in bad.stderr
    bad = subprocess.run([sys.executable, "-m", "extlib.cli", "run", "--dataset", "hotpotqa", "--lengths", "2k",
                          "--method", "direct"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "comma-separated token counts" in bad.stderr


def test_retrieved_knowledge_is_cut_at_the_end_and_books_in_the_middle(tmp_path):
    knowledge = "FIRST passage is the best. " + "filler words here. " * 200 + "LAST passage is the worst."
    seen = []
    llm = scripted_client(lambda p: seen.append(p) or "x")
    task = Task("q", "Which passage?", knowledge, ["x"])
    answer_cell(spec(dataset="hotpotqa", input_tokens=5000), [task], llm, tmp_path)
    answer_cell(spec(dataset="infinitebench-en", input_tokens=5000), [task], llm, tmp_path)
    assert "FIRST" in seen[0] and "LAST" not in seen[0]  # front truncation: retrieval order
    assert "FIRST" in seen[1] and "LAST" in seen[1]  # middle truncation: both ends


def test_bootstrap_interval_and_paired_differences():
    assert bootstrap_interval([0.5] * 7) == (0.5, 0.5)
    low, high = bootstrap_interval([0.0, 1.0] * 10)
    assert 0.2 < low < 0.5 < high < 0.8
    assert abs((high - low) / 2 - 1.96 * 0.5 / 20 ** 0.5) <= 0.05  # the normal half-width, within one question
    # one loss among ties: the interval ends at 0 exactly, which prints "+0", never "-0" (read as excluding 0)
    low, high = bootstrap_interval([-1 / 30] + [0.0] * 29)
    assert low < 0 and high == 0 and f"{100 * high:+.0f}" == "+0"
    assert f"{100 * bootstrap_interval([-0.0] * 5)[1]:+.0f}" == "+0"
    cell = {"dataset": "toy", "input_tokens": 200, "model": "m", "window": 512}
    table = [{**cell, "method": "extagents", "f1_by_id": {"a": 1.0, "b": 1.0, "c": 0.0, "d": 0.5}},
             {**cell, "method": "direct", "f1_by_id": {"a": 0.0, "b": 1.0, "c": 1.0}},
             {**cell, "input_tokens": 800, "method": "drag", "f1_by_id": {"a": 0.0}}]  # another length: unpaired
    [paired] = paired_differences(pd.DataFrame(table)).to_dict("records")
    assert paired["method"] == "direct" and paired["questions"] == 3  # only the questions both answered
    assert abs(paired["difference"]) < 1e-9 and (paired["wins"], paired["ties"], paired["losses"]) == (1, 1, 1)
    assert paired["low"] < 0 < paired["high"]


def test_paired_by_question_pairs_the_questions_both_answered_per_group_with_repeats_as_their_median():
    def row(panel, label, question, f1, repeat=0):
        return {"panel": panel, "x": 1, "label": label, "id": question, "f1": f1, "repeat": repeat}
    rows = pd.DataFrame([row("a", "full", "q1", 1.0), row("a", "full", "q2", 1.0), row("a", "full", "q3", 0.0),
                         row("a", "no GKS", "q1", 0.0), row("a", "no GKS", "q2", 1.0),  # q3 unanswered: unpaired
                         row("a", "no KAR", "q1", 1.0), row("a", "no KAR", "q1", 0.0, 1),
                         row("a", "no KAR", "q1", 0.0, 2),
                         row("b", "no GKS", "q1", 1.0)])  # a panel without the reference: nothing to pair
    table = paired_by_question(rows, ["panel", "x"], "label", "full").set_index("label")
    assert list(table.index) == ["no GKS", "no KAR"] and set(table["panel"]) == {"a"}
    assert table.loc["no GKS", "questions"] == 2 and table.loc["no GKS", "difference"] == 0.5
    assert (table.loc["no GKS", ["wins", "ties", "losses"]] == [1, 1, 0]).all()
    assert table.loc["no KAR", "difference"] == 1.0  # q1's median over its three repeats is 0
    with pytest.raises(ValueError, match="no rows of 'full'"):
        paired_by_question(rows[rows.label != "full"], ["panel", "x"], "label", "full")


def test_a_row_torn_by_a_crash_is_answered_again_and_a_broken_middle_line_is_named(tmp_path):
    llm = scripted_client(lambda p: "Ann " + p.split("Who keeps light ")[1][0])
    path = answer_cell(spec(), TASKS, llm, tmp_path)
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:3]) + "\n" + lines[3][:40])  # killed while writing the last row
    assert len(RunFile(path).latest()) == 3
    calls_before = len(llm._client.prompts)
    answer_cell(spec(), TASKS, llm, tmp_path)
    assert len(llm._client.prompts) - calls_before == 1 and len(RunFile(path).latest()) == 4
    assert all(json.loads(line) for line in path.read_text().splitlines())  # no row glued to the torn one
    path.write_text(lines[0] + "\n{broken\n" + lines[1] + "\n")
    with pytest.raises(ValueError, match="line 2: not a JSON row"):
        RunFile(path).latest()


def test_a_complete_last_row_missing_only_its_newline_is_kept_and_not_answered_again(tmp_path):
    llm = scripted_client(lambda p: "Ann " + p.split("Who keeps light ")[1][0])
    path = answer_cell(spec(), TASKS, llm, tmp_path)
    path.write_text(path.read_text().rstrip("\n"))  # killed after the row, before its newline
    assert len(RunFile(path).latest()) == 4
    calls_before = len(llm._client.prompts)
    answer_cell(spec(), TASKS, llm, tmp_path)
    assert len(llm._client.prompts) == calls_before  # nothing answered again, nothing lost
    assert len(RunFile(path).latest()) == 4 and path.read_text().endswith("\n")


def test_load_rows_gives_every_question_with_its_run_settings(tmp_path):
    llm = scripted_client(lambda p: "Ann 0")
    paths = [answer_cell(spec(method=m), TASKS, llm, tmp_path) for m in ("direct", "drag")]
    rows = load_rows(paths)
    assert len(rows) == 8 and set(rows["method"]) == {"direct", "drag"}
    assert rows.groupby("method")["f1"].mean().round(3).to_dict() == {"direct": 0.625, "drag": 0.625}
    assert not rows["failed"].any() and (rows["window"] == 1000).all()


def test_report_on_files_without_rows_is_a_clear_error(tmp_path):
    import subprocess
    import sys

    (tmp_path / "empty.jsonl").write_text("")
    out = subprocess.run([sys.executable, "-m", "extlib.cli", "report", str(tmp_path)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 2 and "no run rows in the given files" in out.stderr


def test_rows_of_another_method_version_are_stale_answered_again_and_never_mixed_in(tmp_path, monkeypatch):
    from extlib.methods import DirectInput

    llm = scripted_client(lambda p: "Ann " + p.split("Who keeps light ")[1][0])
    path = answer_cell(spec(), TASKS, llm, tmp_path)
    first = RunFile(path).latest()["q0"]
    assert first["method_version"] == 1 and first["date"] and "model_sha256" in first
    monkeypatch.setattr(DirectInput, "version", 2)  # the method changed
    table = collect([path])
    assert table.empty or table.iloc[0]["questions"] == 0  # nothing current to show, nothing mixed in
    assert table.attrs["stale"] == {"direct": 4}
    assert "4 stale rows (direct 4: answered by another version" in markdown(table)  # said, not silently gone
    assert len(load_rows([path], include_stale=True)) == 4 and load_rows([path]).empty
    calls_before = len(llm._client.prompts)
    answer_cell(spec(), TASKS, llm, tmp_path)
    assert len(llm._client.prompts) - calls_before == 4  # every question answered again by version 2
    table = collect([path]).iloc[0]
    assert table["questions"] == 4 and table["stale"] == 0 and RunFile(path).latest()["q0"]["method_version"] == 2


def test_pinning_an_older_version_reads_its_rows_beside_newer_ones(tmp_path, monkeypatch):
    """A committed study of an older version stays readable after the method changes (`--versions`)."""
    import subprocess
    import sys

    from extlib.methods import DirectInput

    path = answer_cell(spec(), TASKS, scripted_client(lambda p: "Ann 0"), tmp_path)  # version 1: F1 0.625
    monkeypatch.setattr(DirectInput, "version", 2)
    answer_cell(spec(), TASKS, scripted_client(lambda p: "nobody"), tmp_path)  # version 2: F1 0
    assert collect([path]).iloc[0]["f1"] == 0.0  # the code's version by default
    pinned = collect([path], versions={"direct": 1}).iloc[0]
    assert pinned["questions"] == 4 and pinned["f1"] == 0.625 and pinned["stale"] == 0  # every question has a v1 row
    assert set(load_rows([path], versions={"direct": 1})["method_version"]) == {1}
    with pytest.raises(ValueError, match="no such method"):
        collect([path], versions={"extagent": 1})
    with pytest.raises(ValueError, match="from 1 to 2"):
        collect([path], versions={"direct": 3})
    out = subprocess.run([sys.executable, "-m", "extlib.cli", "report", str(tmp_path), "--versions", "direct=1"],
                         capture_output=True, text=True, timeout=120)  # the code's version here is 1 again
    assert out.returncode == 0 and "| toy | 200 | direct | 62.5 |" in out.stdout
    for bad, message in (("direct", "write METHOD=VERSION"), ("nope=1", "no such method")):
        out = subprocess.run([sys.executable, "-m", "extlib.cli", "report", str(tmp_path), "--versions", bad],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 2 and message in out.stderr, out.stderr


def test_one_table_holds_every_study_with_each_files_study_and_distinguishing_setting(tmp_path):
    right = scripted_client(lambda p: "Ann " + p.split("Who keeps light ")[1][0])
    wrong = scripted_client(lambda p: "nobody")
    answer_cell(spec(), TASKS, right, tmp_path / "scaling")
    answer_cell(spec(method="drag"), TASKS, wrong, tmp_path / "scaling")
    for depth, llm in ((0.1, right), (0.6, wrong)):  # a placement sweep: the same method in two cells
        answer_cell(spec(dataset="user", options={"path": "x.jsonl", "position": depth}), TASKS, llm,
                    tmp_path / "robust")
    answer_cell(spec(dataset="user", method="drag", options={"path": "x.jsonl", "position": 0.1}), TASKS, wrong,
                tmp_path / "robust")
    table = collect(sorted(tmp_path.rglob("*.jsonl")))
    assert sorted(zip(table["study"], table["method"], table["setting"])) == [
        ("robust", "direct", "position=0.1"), ("robust", "direct", "position=0.6"), ("robust", "drag", "position=0.1"),
        ("scaling", "direct", ""), ("scaling", "drag", "")]
    text = markdown(table, reference="direct")
    assert "| study | dataset | L | method | setting | F1 |" in text
    assert "| robust | user | 200 | direct | position=0.1 | 100.0 |" in text
    paired = paired_differences(table, reference="direct")  # within a study and placement only
    assert sorted(paired[["study", "setting", "method", "difference"]].values.tolist()) == [
        ["robust", "position=0.1", "drag", 1.0], ["scaling", "", "drag", 1.0]]
    one_study = markdown(collect(sorted((tmp_path / "scaling").rglob("*.jsonl"))), reference="direct")
    assert one_study.startswith("| dataset | L | method | F1 |")  # a single study's table is as it always was
    nested = collect(sorted(tmp_path.rglob("*.jsonl")) + [answer_cell(spec(), TASKS, right,
                                                                      tmp_path / "more" / "robust")])
    assert sorted(set(nested["study"])) == ["more/robust", "robust", "scaling"]  # named from the folder they share


def test_a_setting_at_its_default_sets_no_file_apart():
    from extlib.runfile import settings_apart

    spec = {"dataset": "hotpotqa-longdoc", "method": "extagents", "knobs": {"rounds": 5, "rating": "bm25"},
            "options": {"position": 0.25, "distance": 0.6}}
    assert settings_apart(spec) == ({"rating": "bm25"}, {"distance": 0.6})
