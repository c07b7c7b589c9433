"""The teaching notebooks run headless from top to bottom with small parameters (papermill)."""

import re
from pathlib import Path

import pandas as pd
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


@pytest.mark.parametrize("name", ["01_scaling", "02_ablation"])
def test_options_for_a_dataset_not_drawn_are_named(tmp_path, name):
    with pytest.raises(papermill.PapermillExecutionError, match=r"names \['en-bridge'\], not among datasets"):
        papermill.execute_notebook(str(NOTEBOOKS / f"{name}.ipynb"), str(tmp_path / "out.ipynb"),
                                   cwd=str(NOTEBOOKS), progress_bar=False, kernel_name="python3",
                                   parameters={"dataset_knobs": {"en-bridge": {"chunk_tokens": 384}}, "compute": False})


@pytest.mark.parametrize("name, parameters, message", [
    ("01_scaling", {"method_lengths": {"map-reduce": [8]}}, r"method_lengths names \['map-reduce'\], not among"),
    ("02_ablation", {"variants": ["full", "no gks"]}, r"variants names \['no gks'\]; the variants are")])
def test_a_method_or_variant_that_the_study_lacks_is_named(tmp_path, name, parameters, message):
    with pytest.raises(papermill.PapermillExecutionError, match=message):
        papermill.execute_notebook(str(NOTEBOOKS / f"{name}.ipynb"), str(tmp_path / "out.ipynb"),
                                   cwd=str(NOTEBOOKS), progress_bar=False, kernel_name="python3",
                                   parameters={**parameters, "compute": False})


@pytest.mark.parametrize("name, parameters, cells", [
    ("01_scaling", {"methods": ["extagents", "mapreduce"], "method_lengths": {"mapreduce": [8]}}, 7),
    ("02_ablation", {"variants": ["full"]}, 10)])
def test_a_study_computes_the_methods_and_variants_asked_and_draws_all_of_an_earlier_panel(tmp_path, name,
                                                                                         parameters, cells):
    import json

    out = tmp_path / "out.ipynb"
    with pytest.raises(papermill.PapermillExecutionError, match="no rows under .* for any of the"):  # none drawn
        papermill.execute_notebook(str(NOTEBOOKS / f"{name}.ipynb"), str(out), cwd=str(NOTEBOOKS), progress_bar=False,
                                   kernel_name="python3", parameters={
                                       **parameters, "datasets": ["hotpotqa", "hotpotqa:test"], "drawn": ["hotpotqa"],
                                       "lengths_x_window": [1, 8], "compute": False,
                                       "results_dir": str(tmp_path / "rows"), "figure_dir": str(tmp_path)})
    shown = json.dumps([c.get("outputs", []) for c in json.loads(out.read_text())["cells"]])
    assert f"{cells} cells x 3 questions" in shown  # the earlier panel: all at both lengths; the test panel: as asked


def test_compare_notebook_draws_quality_against_cost_from_run_files(tmp_path):
    from extlib import Task
    from extlib.cells import Cell
    from extlib.runner import answer_cell
    from extlib.testing import scripted_client

    tasks = [Task(f"q{i}", f"Who keeps light {i}?", f"Light {i} is kept by Ann. " * 20, ["Ann"]) for i in range(3)]
    for method in ("direct", "drag"):
        for length in (200, 800):
            spec = Cell("toy", method, length, n=3, seed=0, model="scripted", context_window=1000)
            answer_cell(spec, tasks, scripted_client(lambda p: "Ann"), tmp_path / "runs")
    papermill.execute_notebook(str(NOTEBOOKS / "compare_methods.ipynb"), str(tmp_path / "out.ipynb"),
                               cwd=str(NOTEBOOKS), parameters={"run_dir": str(tmp_path / "runs"), "dataset": "toy",
                                                               "figure_dir": str(tmp_path)},
                               progress_bar=False, kernel_name="python3")
    assert (tmp_path / "toy_method_comparison.png").stat().st_size > 10_000


def test_beyond_window_notebook_draws_the_study_and_checks_its_targets(tmp_path):
    import json

    from extlib import Task
    from extlib.cells import Cell
    from extlib.runner import answer_cell
    from extlib.testing import scripted_client

    tasks = [Task(f"q{i}", f"Who keeps light {i}?", f"Light {i} is kept by Ann. " * 20, ["Ann"]) for i in range(3)]
    def reader(prompt: str) -> str:  # states what its question's light's text says (the messages then state it)
        light = re.search(r"keeps light (\d)", prompt)
        return f"Light {light.group(1) if light else 0} is kept by Ann.\nAnswer: Ann"

    answers = {"extagents": reader, "direct": lambda p: "Bob", "mapreduce": lambda p: "Bob"}
    for method, reply in answers.items():
        knobs = {"chunk_tokens": 200} if method != "direct" else {}
        spec = Cell("hotpotqa-longdoc", method, 8192, knobs, n=3, seed=2, model="scripted", context_window=1024)
        answer_cell(spec, tasks, scripted_client(reply), tmp_path / "rows")
    out = tmp_path / "out.ipynb"
    papermill.execute_notebook(str(NOTEBOOKS / "beyond_window.ipynb"), str(out), cwd=str(NOTEBOOKS),
                               parameters={"rows_dir": str(tmp_path / "rows"), "figure_dir": str(tmp_path),
                                           "method_versions": {}},  # the rows of the code's versions
                               progress_bar=False, kernel_name="python3")
    assert (tmp_path / "beyond_window.png").stat().st_size > 10_000
    shown = json.dumps(json.loads(out.read_text())["cells"][-2]["outputs"])
    assert "| hotpotqa-longdoc | Direct Input | 3 | +100.0 |" in shown and "| met |" in shown


@pytest.mark.local_model
def test_every_experiment_notebook_runs_on_the_real_model_and_writes_rows_and_figures(tmp_path):
    """The smoke preset (configs/presets/smoke.yaml: the 0.5B model, one question a point) through
    `extagents figures`' runner; then a second run finds every row and only redraws."""
    import json

    from extlib.presets import NOTEBOOKS as EXPERIMENTS
    from extlib.presets import render

    executed = render("smoke", results_root=tmp_path / "results", figures_root=tmp_path / "figures")
    assert [p.stem for p in executed] == EXPERIMENTS
    results, figures = tmp_path / "results" / "smoke", tmp_path / "figures" / "smoke"
    for name in ("01_scaling", "02_ablation", "03_latency", "05_robustness"):
        rows = [json.loads(line) for f in (results / name).rglob("*.jsonl") for line in f.read_text().splitlines()]
        assert rows and all(r["method_version"] >= 1 and r["model_sha256"] and r["date"] for r in rows), name
    assert json.loads((results / "00_lesson" / "trace.json").read_text())["extagents"]["calls"]
    for system in ("extagents", "autosurvey"):  # a survey with its sections' calls, and the judgements
        record = json.loads((results / "06_survey" / "history-of-astronomy" / system / "record.json").read_text())
        assert record["sections"] and all(s["calls"] for s in record["sections"]), system
    assert json.loads((results / "06_survey" / "history-of-astronomy" / "judge.json").read_text())["judgements"]
    for figure in ("lesson_chunks", "lesson_rounds", "lesson_kar", "lesson_timeline", "scaling", "ablation", "latency",
                   "cost", "robustness", "survey_table4"):
        assert colored_share(figures / f"{figure}.png") > 0.0002, figure  # data in colour, not an empty frame
        assert (figures / f"{figure}.svg").stat().st_size > 1_000, figure  # a vector copy for print
        assert len(pd.read_csv(figures / f"{figure}.csv")) >= 1, figure  # and the numbers it draws
    for notebook in executed:  # no cell ended in an error, and no progress bar or warning was saved
        cells = json.loads(notebook.read_text())["cells"]
        outputs = [o for c in cells for o in c.get("outputs", [])]
        assert not [o for o in outputs if o.get("output_type") == "error"], notebook.name
        streams = "".join("".join(o["text"]) for o in outputs if o.get("output_type") == "stream")
        assert not re.search(r"\d+%\||it/s\]|IProgress|Warning", streams), notebook.name  # no progress bar, no warning
        if notebook.stem in ("01_scaling", "02_ablation", "03_latency", "04_cost", "05_robustness"):
            said = "".join(cells[-1]["outputs"][0]["data"]["text/markdown"])  # it ends with what its numbers say
            assert "What the numbers say" in "".join(cells[-2]["source"]) and said.startswith("- "), notebook.name
    stamps = {f: f.stat().st_mtime for f in results.rglob("*.jsonl")}
    render("smoke", only=["01_scaling"], results_root=tmp_path / "results", figures_root=tmp_path / "figures")
    assert {f: f.stat().st_mtime for f in results.rglob("*.jsonl")} == stamps  # nothing recomputed


def colored_share(png: Path) -> float:
    """Share of a PNG's pixels in colour: the theme's frames, grids and text are grey, data (lines, markers, bars,
    cells, marked evidence) is coloured."""
    import matplotlib.image

    rgb = matplotlib.image.imread(png)[..., :3]
    return float(((rgb.max(axis=-1) - rgb.min(axis=-1)) > 0.2).mean())


def test_an_empty_frame_has_no_colour_and_a_drawn_line_has(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from extlib import plots

    plots.theme()
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.set(title="empty", xlabel="x", ylabel="y")
    line = pd.DataFrame({"x": [0, 1], "y": [0.0, 1.0]})
    assert colored_share(plots.save(fig, tmp_path, "empty", data=line)) == 0.0
    ax.plot(line["x"], line["y"], color=plots.COLORS["extagents"])
    assert colored_share(plots.save(fig, tmp_path, "line", data=line)) > 0.001


def test_a_figure_is_saved_as_png_and_svg_with_its_numbers_as_csv_and_the_same_rows_give_the_same_files(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from extlib import plots

    plots.theme()
    numbers = pd.DataFrame({"method": ["extagents", "direct"], "x": [1, 1], "mean": [0.5, 0.25]})
    files = []
    for attempt in ("first", "again"):
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.bar(numbers["method"], numbers["mean"], color=[plots.COLORS[m] for m in numbers["method"]])
        png = plots.save(fig, tmp_path / attempt, "bars", data=numbers)
        plt.close(fig)
        files.append({suffix: png.with_suffix(suffix).read_bytes() for suffix in (".png", ".svg", ".csv")})
    assert files[0][".svg"] == files[1][".svg"] and files[0][".csv"] == files[1][".csv"]  # no date, no random ids
    assert pd.read_csv(tmp_path / "first" / "bars.csv").equals(numbers.astype({"mean": float}))
    with pytest.raises(ValueError, match="saved with the numbers it draws"):
        plots.save(fig, tmp_path, "nothing", data=pd.DataFrame())


def test_a_panel_of_fewer_lengths_keeps_the_scale_of_one_of_1x_to_8x_and_its_bars_their_width():
    import matplotlib

    matplotlib.use("Agg")
    import math

    import matplotlib.pyplot as plt

    from extlib import plots

    fig, (four, one) = plt.subplots(1, 2)
    plots.length_axis(four, [1, 2, 4, 8])
    plots.length_axis(one, [1])
    assert four.get_xlim() == pytest.approx((1 / 1.3, 8 * 1.3))  # the studies' axis, unchanged
    span = [math.log(high / low) for low, high in (four.get_xlim(), one.get_xlim())]
    assert span[0] == pytest.approx(span[1])
    for ax in (four, one):
        plots.length_bars(ax, [1], [50])
    widths = [math.log(b.get_x() + b.get_width()) - math.log(b.get_x()) for ax in (four, one) for b in ax.patches]
    assert widths == pytest.approx([widths[0]] * 2) and widths[0] < span[0] / 8  # a bar, not the whole axis
    plt.close(fig)


def test_preset_and_parameter_mistakes_are_named(tmp_path):
    from extlib.presets import PresetError, render

    with pytest.raises(PresetError, match="no preset 'quik'; presets: .*quick"):
        render("quik", results_root=tmp_path)
    with pytest.raises(PresetError, match="01_scaling has no parameter chunk_size; its parameters: datasets"):
        render("smoke", overrides={"01_scaling": {"chunk_size": 5}}, results_root=tmp_path)
    with pytest.raises(PresetError, match="no notebook 07_survey"):
        render("smoke", only=["07_survey"], results_root=tmp_path)


def test_run_preset_reaches_the_study_notebooks_only_with_their_draw_and_window():
    from extlib.presets import PresetError, load_preset, preset_cells

    config = load_preset("cpu")
    cells, _, _ = preset_cells("cpu", ["02_ablation"])
    assert {(c.n, c.seed, c.context_window, c.folder) for c in cells} == {
        (config["notebooks"]["02_ablation"]["n"], config["common"]["seed"], config["common"]["window"], "02_ablation")}
    with pytest.raises(PresetError, match="03_latency is computed by extagents figures"):
        preset_cells("cpu", ["03_latency"])


@pytest.mark.parametrize("name", ["00_lesson", "01_scaling", "02_ablation", "03_latency", "04_cost", "05_robustness",
                                  "06_survey"])
def test_every_parameter_of_an_experiment_notebook_is_declared_typed_and_commented(name):
    import json

    path = NOTEBOOKS / f"{name}.ipynb"
    [cell] = [c for c in json.loads(path.read_text())["cells"] if "parameters" in c["metadata"].get("tags", [])]
    lines = [line for line in "".join(cell["source"]).splitlines() if line.strip()]
    declared = papermill.inspect_notebook(str(path))  # papermill skips a line it cannot parse, with a warning
    assert len(declared) == len(lines)
    assert all(p["inferred_type_name"] != "None" and p["help"] for p in declared.values()), name


@pytest.mark.parametrize("preset", sorted(p.stem for p in (NOTEBOOKS.parent / "configs" / "presets").glob("*.yaml")))
def test_every_preset_sets_only_parameters_its_notebooks_declare(preset, tmp_path):
    from extlib.presets import NOTEBOOKS as EXPERIMENTS
    from extlib.presets import load_preset, parameters

    config = load_preset(preset)
    for name in EXPERIMENTS:  # an undeclared setting raises PresetError; a declared one reaches the notebook
        plan = parameters(name, config, {}, tmp_path / "results", tmp_path / "figures")
        assert all(plan[k] == v for k, v in config["notebooks"].get(name, {}).items()), (preset, name)
        assert plan.get("results_dir", plan.get("scaling_dir")) in (str(tmp_path / "results" / name),
                                                                    str(tmp_path / "results" / "01_scaling"))


@pytest.mark.parametrize("name", ["01_scaling", "02_ablation"])
def test_passage_chunks_for_a_dataset_not_in_the_study_are_named(name, tmp_path):
    with pytest.raises(papermill.PapermillExecutionError, match=r"paragraphs names \['zh-longdoc'\], not among"):
        papermill.execute_notebook(str(NOTEBOOKS / f"{name}.ipynb"), str(tmp_path / "out.ipynb"), cwd=str(NOTEBOOKS),
                                   parameters={"datasets": ["hotpotqa"], "paragraphs": ["zh-longdoc"],
                                               "results_dir": str(tmp_path), "figure_dir": str(tmp_path)},
                                   progress_bar=False, kernel_name="python3")
