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
