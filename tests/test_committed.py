"""A committed study is drawn, never computed: whatever the code's method versions, drawing reads the rows on disk,
calls no model, labels the cells that are partial or of another version, and names the command that computes
them; an interrupted notebook never counts as up to date."""

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from extlib.cells import Cell
from extlib.errors import ModelCallRefused
from extlib.methods.extagents import ExtAgents
from extlib.presets import ROOT, cells_not_current, execute, load_preset, parameters, render, up_to_date
from extlib.runner import run_cells
from extlib.testing import scripted_client
from tests.test_runner import three_questions


def refusing_client():
    """A scripted client whose every call fails the test: drawing must not call the model."""
    return scripted_client(lambda p: pytest.fail(f"a model call while drawing: {p[:80]}"))


def test_a_version_bump_draws_the_old_rows_labelled_and_calls_no_model(tmp_path, monkeypatch):
    data = three_questions(tmp_path)
    cells = [Cell("user", "extagents", 300, {"chunk_tokens": 120}, {"path": str(data)}),
             Cell("user", "direct", 300, {}, {"path": str(data)})]
    answered = run_cells(cells, scripted_client(lambda p: "Light 0 is kept by Ann 0.\nAnswer: Ann 0"),
                         tmp_path / "runs", n=3, seed=0, window=1000, progress=False)
    assert set(answered["cell_note"]) == {""}
    monkeypatch.setattr(ExtAgents, "version", ExtAgents.version + 1)
    drawn = run_cells(cells, refusing_client(), tmp_path / "runs", n=3, seed=0, window=1000, progress=False,
                      compute=False)
    ext = drawn[drawn.method == "extagents"]
    assert len(ext) == 3 and ext["stale"].all()
    assert set(ext["cell_note"]) == {f"v{ExtAgents.version - 1}, code v{ExtAgents.version}"}
    assert set(drawn.loc[drawn.method == "direct", "cell_note"]) == {""}


def test_a_partial_cell_is_drawn_with_its_question_count(tmp_path):
    data = three_questions(tmp_path)
    cells = [Cell("user", "direct", 300, {}, {"path": str(data)})]
    run_cells(cells, scripted_client(lambda p: "Ann"), tmp_path / "runs", n=3, seed=0, window=1000, progress=False,
              limit=2)
    drawn = run_cells(cells, refusing_client(), tmp_path / "runs", n=3, seed=0, window=1000, progress=False,
                      compute=False)
    assert len(drawn) == 2 and set(drawn["cell_note"]) == {"2/3 questions"}


def test_a_rerun_staged_over_sittings_is_drawn_from_its_new_version_only(tmp_path, monkeypatch):
    data = three_questions(tmp_path)
    cells = [Cell("user", "extagents", 300, {"chunk_tokens": 120}, {"path": str(data)})]
    reply = scripted_client(lambda p: "Light 0 is kept by Ann 0.\nAnswer: Ann 0")
    run_cells(cells, reply, tmp_path / "runs", n=3, seed=0, window=1000, progress=False)
    monkeypatch.setattr(ExtAgents, "version", ExtAgents.version + 1)
    run_cells(cells, reply, tmp_path / "runs", n=3, seed=0, window=1000, progress=False, limit=1)
    drawn = run_cells(cells, refusing_client(), tmp_path / "runs", n=3, seed=0, window=1000, progress=False,
                      compute=False)
    assert len(drawn) == 1 and set(drawn["method_version"]) == {ExtAgents.version}  # never mixed with the old
    assert set(drawn["cell_note"]) == {"1/3 questions"}


def test_an_offline_client_refuses_every_call(monkeypatch):
    from extlib.methods.base import run_sync

    llm = scripted_client(lambda p: "Ann", offline=True)
    with pytest.raises(ModelCallRefused, match="--compute"):
        run_sync(llm.complete("Who?"))
    monkeypatch.setenv("EXTAGENTS_OFFLINE", "1")
    with pytest.raises(ModelCallRefused):
        run_sync(scripted_client(lambda p: "Ann").complete("Who?"))


def test_a_refused_call_stops_the_run_and_writes_no_row(tmp_path, monkeypatch):
    from extlib.cells import Cell
    from extlib.runner import answer_cell
    from extlib.trace import Task

    monkeypatch.setenv("EXTAGENTS_OFFLINE", "1")
    spec = Cell("toy", "direct", 300, n=1, seed=0, model="scripted", context_window=1000)
    with pytest.raises(ModelCallRefused):
        answer_cell(spec, [Task("q0", "Who?", "Ann keeps it. " * 10, ["Ann"])], scripted_client(lambda p: "Ann"),
            tmp_path)
    assert not spec.run_file(tmp_path).path.exists() or not spec.run_file(tmp_path).path.read_text()


def test_the_cpu_preset_is_committed_and_drawn_unless_compute_is_asked_for(tmp_path):
    config = load_preset("cpu")
    assert config["committed"]["model"] == "qwen2.5-1.5b"
    drawn = parameters("02_ablation", config, {}, tmp_path / "results", tmp_path / "figures", compute=False)
    assert drawn["compute"] is False
    assert "compute" not in parameters("04_cost", config, {}, tmp_path, tmp_path)  # it never computes


def test_run_preset_computes_exactly_the_cells_the_committed_study_notebooks_draw():
    """`extagents run --preset cpu --only ...` names the committed run files, so a sitting continues them."""
    from extlib.presets import ROOT, preset_cells

    cells, engine, results = preset_cells("cpu", ["01_scaling", "02_ablation", "05_robustness"])
    assert results == ROOT / "results" / "cpu" and engine.local_model == "qwen2.5-1.5b" and engine.cache
    assert {cell.folder for cell in cells} == {"01_scaling", "02_ablation", "05_robustness"}
    bound = [cell.bind(None, None, "qwen2.5-1.5b", None) for cell in cells]
    missing = [str(cell.run_file(results).path) for cell in bound if not cell.run_file(results).path.exists()]
    assert not missing and len(cells) == len({cell.run_file(results).path for cell in bound})


def test_an_interrupted_notebook_leaves_no_executed_copy_to_count_as_up_to_date(tmp_path):
    class Interrupted:
        PapermillExecutionError = RuntimeError

        @staticmethod
        def execute_notebook(source, output, **_):
            Path(output).write_text(json.dumps({"cells": [], "metadata": {"papermill": {"parameters": {}}}}))
            raise KeyboardInterrupt

    target = tmp_path / "notebooks" / "04_cost.ipynb"
    target.parent.mkdir()
    with pytest.raises(KeyboardInterrupt):
        execute(Interrupted, "04_cost", target, {})
    assert not target.exists() and not list(target.parent.iterdir())
    assert not up_to_date(target, "04_cost", {}, "cpu", tmp_path)


def digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.local_model  # the draws of questions count tokens with the bundled model's vocabulary
def test_drawing_the_committed_ablation_with_rows_the_code_would_answer_anew(tmp_path, capsys):
    """The committed ablation's rows, copied, with one cell made partial and every row made an older version than
    the code's: the notebook draws them (no server, EXTAGENTS_OFFLINE in the kernel), labels them, changes no row,
    and the command lists the cells with the one command that computes them."""
    rows = tmp_path / "results" / "cpu" / "02_ablation"
    shutil.copytree(ROOT / "results" / "cpu" / "02_ablation", rows)
    files = sorted(rows.rglob("*.jsonl"))
    for i, file in enumerate(files):
        lines = [json.loads(line) for line in file.read_text().splitlines()]
        lines = lines[:12] if i == 0 else lines
        file.write_text("".join(json.dumps({**r, "method_version": r["method_version"] - 1}) + "\n" for r in lines))
    before = digest(rows)
    executed = render("cpu", only=["02_ablation"], results_root=tmp_path / "results", out=tmp_path / "drawn")
    assert digest(rows) == before
    assert (tmp_path / "drawn" / "figures" / "ablation.png").stat().st_size > 10_000
    noted = [c for c in cells_not_current(executed[0]) if (rows / c["file"]).exists()]  # (cells not begun: no file)
    assert len(noted) == len(files) and any("/30 questions" in c["note"] for c in noted)
    assert all(f"code v{ExtAgents.version}" in c["note"] for c in noted)
    printed = capsys.readouterr().out
    assert "no model is called" in printed and "extagents run --preset cpu --only 02_ablation" in printed


@pytest.mark.parametrize("ename, raised", [("DataError", ValueError), ("SetupError", RuntimeError),
                                           ("KeyError", RuntimeError)])
def test_a_notebook_that_stops_on_a_user_error_says_so_in_one_line_and_a_bug_shows_its_traceback(tmp_path, ename,
                                                                                                 raised):
    import papermill

    from extlib.errors import SetupError, UserError

    class Failing:
        PapermillExecutionError = papermill.PapermillExecutionError

        @staticmethod
        def execute_notebook(source, output, **_):
            Path(output).write_text("{}")
            raise papermill.PapermillExecutionError(3, 4, "cell", ename, "what went wrong",
                                                    ["Traceback (most recent call last)", f"{ename}: in the kernel"])

    target = tmp_path / "02_ablation.ipynb"
    with pytest.raises(raised, match="stopped in cell 4") as stopped:
        execute(Failing, "02_ablation", target, {})
    assert target.exists()  # the executed copy records the error, so it is never up to date
    bug = ename == "KeyError"
    assert isinstance(stopped.value, (UserError, SetupError)) != bug
    assert ("Traceback" in str(stopped.value)) == bug


@pytest.mark.local_model  # the citation measures count tokens with the bundled model's vocabulary
def test_a_committed_survey_reads_back_as_written_and_names_a_writer_version_the_code_has_changed(monkeypatch):
    from extlib.engine import EngineSettings, clients
    from extlib.survey import read_survey
    from extlib.survey.extagents_writer import ExtAgentsWriter

    out = ROOT / "results" / "cpu" / "06_survey"
    record = json.loads((out / "history-of-astronomy" / "extagents" / "record.json").read_text())
    with clients(EngineSettings(offline=True)) as (llm, _):
        survey = read_survey("history of astronomy", "extagents", out, llm)
        assert survey.row() == record["row"] and survey.note == ""
        monkeypatch.setattr(ExtAgentsWriter, "version", ExtAgentsWriter.version + 1)
        assert read_survey("history of astronomy", "extagents", out, llm).note == \
            f"v{ExtAgentsWriter.version - 1}, code v{ExtAgentsWriter.version}"
