"""A cell: one setting of an experiment (dataset, method, length, knobs, dataset options), answered into one run
file and drawn as one point or line of a figure. `extagents run`, config files, the study notebooks and the
benchmarks all describe their experiments as lists of cells, and `extlib.runner.run_cells` answers them."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .datasets import truncation
from .datasets.splits import SPLITS
from .errors import UserError
from .methods import knob_names, knobs_for, make_method
from .methods.base import Method
from .runfile import RunFile

SPEC = ("dataset", "method", "input_tokens", "n", "seed", "model", "context_window", "knobs", "options", "repeat")


@dataclass
class Cell:
    """One setting: its run file's header (`spec`, the fields in SPEC) and how a figure shows it (label, extra);
    `Cell(**row["spec"])` reads a header back."""

    dataset: str
    method: str
    input_tokens: int
    knobs: dict[str, Any] = field(default_factory=dict)  # method knobs beyond the window and the length
    options: dict[str, Any] = field(default_factory=dict)  # dataset options, e.g. where evidence is placed
    n: int | None = None  # questions drawn; None: the run's (run_cells binds it, and the next three)
    seed: int | None = None  # the draw
    model: str | None = None  # the model's name, as the client gives it
    context_window: int | None = None  # tokens the model reads at once
    repeat: int = 0  # a repeated run of the same settings (the paper reports the median of three): its own file
    label: str = ""  # the name in a figure (not part of the setting); the method's name by default
    extra: dict[str, Any] = field(default_factory=dict)  # columns copied into the cell's rows (e.g. a depth)
    drawn: bool = False  # drawn from the rows on disk, never computed: an earlier study's cell, kept with its version
    cap: int = 0  # answer at most this many of its n questions (0: all), e.g. a dear length stopped early
    folder: str = ""  # its study's folder under the run's root (a run of several notebooks' cells), "" for the root

    def __post_init__(self) -> None:
        knobs_for([self.method], self.knobs)  # a knob this method does not take is an error, not a new file name
        if self.cap < 0:
            raise UserError(f"cell {self.method} L={self.input_tokens}: cap is a number of questions (0: all), "
                            f"got {self.cap}")
        self.label = self.label or self.method

    def bind(self, n: int | None, seed: int | None, model: str, window: int | None, repeat: int = 0) -> Cell:
        """The cell with the run's draw, model and window wherever it names none of its own."""
        return replace(self, n=self.n if self.n is not None else n, seed=self.seed if self.seed is not None else seed,
                       model=self.model or model,
                       context_window=self.context_window if self.context_window is not None else window,
                       repeat=self.repeat or repeat)

    def spec(self) -> dict[str, Any]:
        """The setting as every row of its run file records it."""
        spec = {name: getattr(self, name) for name in SPEC}
        if any(spec[k] is None for k in ("n", "seed", "model", "context_window")):
            raise ValueError(f"cell {self.label} is not bound to a run (n, seed, model, window): call bind first")
        return spec

    def run_file(self, root: str | Path) -> RunFile:
        return RunFile.locate(Path(root) / self.folder, self.spec())

    def make_method(self) -> Method:
        """The method with the cell's window, length and knobs; the dataset's truncation unless a knob says."""
        settings = {"context_window": self.context_window, "input_tokens": self.input_tokens}
        if "truncate" in knob_names(self.method):
            settings["truncate"] = truncation(self.dataset)
        return make_method(self.method, **{**settings, **self.knobs})


def panel_dataset(panel: str) -> tuple[str, dict[str, Any]]:
    """A study notebook's panel names a dataset, drawn with the notebook's seed from every question it has, or
    `<dataset>:<split>` (e.g. `hotpotqa:test`), drawn from the ids of that split only (data/splits); returns the
    dataset and the loader options the panel implies."""
    dataset, colon, split = panel.partition(":")
    if not colon:
        return dataset, {}
    if split not in SPLITS:
        raise UserError(f"dataset {panel!r}: after the colon comes a split, one of {', '.join(SPLITS)}")
    return dataset, {"split": split}


def check_keyed_by_panel(panels: list[str], **parameters: Any) -> None:
    """A notebook parameter keyed by panel (a dict, or a list of panel names) whose keys name no panel of `panels`
    is a mistake (a misspelling, or a dataset left out): say which parameter and which names."""
    for name, keys in parameters.items():
        if stray := sorted(set(keys) - set(panels)):
            raise UserError(f"{name} names {stray}, not among datasets {panels}: key it by a name in datasets")
