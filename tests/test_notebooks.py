"""The teaching notebooks run headless from top to bottom with small parameters (papermill)."""

from pathlib import Path

import papermill
import pytest

NOTEBOOKS = Path(__file__).parents[1] / "notebooks"


def test_datasets_notebook_runs_and_draws_its_figure(tmp_path):
    papermill.execute_notebook(str(NOTEBOOKS / "datasets.ipynb"), str(tmp_path / "out.ipynb"), cwd=str(NOTEBOOKS),
                               parameters={"n_questions": 20, "lengths": [8_000, 64_000], "input_tokens": 4_000,
                                           "figure_dir": str(tmp_path)}, progress_bar=False, kernel_name="python3")
    assert (tmp_path / "hotpotqa_gold_recall.png").stat().st_size > 10_000


def test_a_bad_notebook_parameter_is_named(tmp_path):
    with pytest.raises(papermill.PapermillExecutionError, match="dataset must be one of"):
        papermill.execute_notebook(str(NOTEBOOKS / "datasets.ipynb"), str(tmp_path / "out.ipynb"),
                                   cwd=str(NOTEBOOKS), parameters={"dataset": "hotpot"}, progress_bar=False,
                                   kernel_name="python3")


def test_compare_notebook_draws_quality_against_cost_from_run_files(tmp_path):
    from extlib import Task
    from extlib.experiments import RunSpec, run
    from extlib.testing import scripted_client

    tasks = [Task(f"q{i}", f"Who keeps light {i}?", f"Light {i} is kept by Ann. " * 20, ["Ann"]) for i in range(3)]
    for method in ("direct", "drag"):
        for length in (200, 800):
            spec = RunSpec("toy", method, length, 3, 0, "scripted", 1000)
            run(spec, tasks, scripted_client(lambda p: "Ann"), tmp_path / "runs", progress=False)
    papermill.execute_notebook(str(NOTEBOOKS / "compare_methods.ipynb"), str(tmp_path / "out.ipynb"),
                               cwd=str(NOTEBOOKS), parameters={"run_dir": str(tmp_path / "runs"), "dataset": "toy",
                                                               "figure_dir": str(tmp_path)},
                               progress_bar=False, kernel_name="python3")
    assert (tmp_path / "toy_method_comparison.png").stat().st_size > 10_000
