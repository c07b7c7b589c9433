"""`make figures`: every experiment notebook executed with papermill under one preset's parameters, one after
another, with the executed copies in results/<preset>/notebooks/, the rows in results/<preset>/<notebook>/ and
the figures in figures/<preset>/. Every notebook's rows are resumable run files, so a stopped run continues
where it stopped and a finished one only redraws."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import yaml
from tqdm import tqdm

from .engine import EngineSettings
from .serve import LocalServer

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ["00_lesson", "01_scaling", "02_ablation", "03_latency", "04_cost", "05_robustness"]
PRESETS = ROOT / "configs" / "presets"
ENGINE_KEYS = {"base_url", "model", "local_model", "concurrency"}


class PresetError(ValueError):
    """A preset or parameter the notebooks do not have; the message lists what they have."""


def load_preset(preset: str) -> dict[str, Any]:
    path = PRESETS / f"{preset}.yaml"
    if not path.is_file():
        have = sorted(p.stem for p in PRESETS.glob("*.yaml"))
        raise PresetError(f"no preset {preset!r}; presets: {', '.join(have)} (files in {PRESETS})")
    config = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    unknown = set(config) - {"engine", "common", "notebooks"}
    if unknown or set(config.get("notebooks", {})) - set(NOTEBOOKS):
        raise PresetError(f"{path}: top-level keys are engine, common, notebooks; notebooks are {NOTEBOOKS}")
    return config


def parameters(preset: str, name: str, config: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """A notebook's parameters: engine and common settings, its own, the layout, then `overrides`."""
    import papermill

    declared = papermill.inspect_notebook(str(ROOT / "notebooks" / f"{name}.ipynb"))
    given = {**config.get("engine", {}), **config.get("common", {}), **config.get("notebooks", {}).get(name, {}),
             "results_dir": str(ROOT / "results" / preset / name), "figure_dir": str(ROOT / "figures" / preset),
             **overrides}
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise PresetError(f"{name} has no parameter {', '.join(unknown)}; its parameters: {', '.join(declared)}")
    return given


def render(preset: str = "quick", only: list[str] | None = None,
           overrides: dict[str, dict[str, Any]] | None = None) -> list[Path]:
    """Execute the notebooks (all, or `only`) under `preset`; returns the executed copies."""
    import papermill

    config = load_preset(preset)
    names = only or NOTEBOOKS
    unknown = sorted(set(names) - set(NOTEBOOKS)) + sorted(set(overrides or {}) - set(NOTEBOOKS))
    if unknown:
        raise PresetError(f"no notebook {', '.join(unknown)}; notebooks: {', '.join(NOTEBOOKS)}")
    plans = {name: parameters(preset, name, config, (overrides or {}).get(name, {})) for name in names}
    out = ROOT / "results" / preset / "notebooks"
    out.mkdir(parents=True, exist_ok=True)
    engine = config.get("engine", {})
    written = []
    with contextlib.ExitStack() as stack:
        if not engine.get("base_url"):  # one local server for all notebooks (each reuses it)
            settings = EngineSettings(local_model=engine.get("local_model", EngineSettings.local_model),
                                      context_window=config.get("common", {}).get("window", 8192))
            stack.enter_context(LocalServer(settings.local_model, context_window=settings.context_window,
                                            persistent=True))
        for name in tqdm(names, desc=f"preset {preset}: notebooks", unit="notebook"):
            target = out / f"{name}.ipynb"
            papermill.execute_notebook(str(ROOT / "notebooks" / f"{name}.ipynb"), str(target),
                                       parameters=plans[name], cwd=str(ROOT / "notebooks"), progress_bar=True,
                                       kernel_name="python3")
            written.append(target)
    return written
