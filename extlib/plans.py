"""The study notebooks' cells as functions of their parameters, so a notebook and `extagents run --preset P --only
NB` build the same cells: the notebook computes and draws them, the command computes them (every notebook named,
question by question across all their cells, on one server) and `make figures` then draws them."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from .cells import Cell, check_keyed_by_panel, panel_dataset
from .errors import UserError
from .methods import knobs_for
from .methods.extagents import ABLATION_VARIANTS

BOOKS = ("hotpotqa-longdoc", "zh-longdoc")  # two hops placed at `position` and `distance`
BRIDGE_BOOKS = ("en-bridge", "zh-bridge", "babilong")  # hops drawn per question among look-alike facts


def _options(panel: str, position: float, distance: float, dataset_options: dict, user_data: dict) -> dict:
    dataset, split = panel_dataset(panel)
    placed = {"position": position, "distance": distance} if dataset in BOOKS else \
        user_data if dataset == "user" else {}
    return placed | split | dataset_options.get(panel, {})


def scaling_cells(datasets: list, methods: list, lengths_x_window: list, drawn: list, dataset_lengths: dict,
                  method_lengths: dict, window: int, chunk_tokens: int, paragraphs: list, position: float,
                  distance: float, dataset_options: dict, dataset_knobs: dict, user_data: dict, rating_retrieved: str,
                  rating_books: str) -> list[Cell]:
    """01_scaling: every method at every length on every panel (a dataset, or `<dataset>:<split>`)."""
    if stray := sorted(set(method_lengths) - set(methods)):
        raise UserError(f"method_lengths names {stray}, not among methods {methods}")
    check_keyed_by_panel(datasets, dataset_options=dataset_options, dataset_knobs=dataset_knobs,
                         paragraphs=paragraphs, dataset_lengths=dataset_lengths, drawn=drawn)
    cells = []
    for panel in datasets:
        dataset, _ = panel_dataset(panel)
        options = _options(panel, position, distance, dataset_options, user_data)
        rating = rating_books if dataset in BOOKS + BRIDGE_BOOKS else rating_retrieved
        for method, knobs in knobs_for(methods, {"chunk_tokens": chunk_tokens, "rating": rating,
                                                 "paragraphs": panel in paragraphs,
                                                 **dataset_knobs.get(panel, {})}).items():
            for x in dataset_lengths.get(panel, lengths_x_window):
                if panel not in drawn and x not in method_lengths.get(method, [x]):
                    continue
                cells.append(Cell(dataset, method, int(x * window), knobs, options, extra={"x": x, "panel": panel},
                                  drawn=panel in drawn))
    return cells


def ablation_cells(datasets: list, lengths_x_window: list, drawn: list, variants: list, dataset_lengths: dict,
                   window: int, chunk_tokens: int, paragraphs: list, position: float, distance: float,
                   dataset_options: dict, dataset_knobs: dict, user_data: dict, rating_retrieved: str,
                   rating_books: str) -> list[Cell]:
    """02_ablation: ExtAgents and its variants without GKS, KAR or both, at every length on every panel."""
    if stray := sorted(set(variants) - set(ABLATION_VARIANTS)):
        raise UserError(f"variants names {stray}; the variants are {list(ABLATION_VARIANTS)}")
    check_keyed_by_panel(datasets, dataset_options=dataset_options, dataset_knobs=dataset_knobs,
                         paragraphs=paragraphs, dataset_lengths=dataset_lengths, drawn=drawn)
    cells = []
    for panel in datasets:
        dataset, _ = panel_dataset(panel)
        options = _options(panel, position, distance, dataset_options, user_data)
        rating = rating_books if dataset in BOOKS + BRIDGE_BOOKS else rating_retrieved
        for variant, knobs in ABLATION_VARIANTS.items():
            for x in dataset_lengths.get(panel, lengths_x_window):
                if panel not in drawn and variant not in variants:
                    continue
                cells.append(Cell(dataset, "extagents", int(x * window),
                                  {"chunk_tokens": chunk_tokens, "paragraphs": panel in paragraphs, "rating": rating,
                                   **dataset_knobs.get(panel, {}), **knobs},
                                  options, label=variant, extra={"x": x, "panel": panel}, drawn=panel in drawn))
    return cells


def robustness_cells(dataset: str, methods: list, x: float, window: int, chunk_tokens: int, depths: list,
                     depth_distance: float, distances: list, distance_position: float, orders: list,
                     order_position: float, order_distance: float, rating: str, knobs: dict) -> list[Cell]:
    """05_robustness: every method with the two hops moved through the book (depth, distance, order sweeps)."""
    if depths and max(depths) + depth_distance > 1 or distances and distance_position + max(distances) > 1:
        raise UserError("a placement must stay inside the text: depth + distance <= 1")
    book, split = panel_dataset(dataset)
    if book not in BOOKS:
        raise UserError(f"dataset {dataset!r}: the sweeps move two planted hops, so the book is hotpotqa-longdoc or "
                        "zh-longdoc (with :test or :dev for a split's questions)")
    placements = ([("depth", d, {"position": d, "distance": depth_distance}) for d in depths]
                  + [("distance", d, {"position": distance_position, "distance": d}) for d in distances]
                  + [("order", o, {"position": order_position, "distance": order_distance, "order": o})
                     for o in orders])
    return [Cell(book, method, int(x * window), method_knobs, {"order": "forward", **split, **options},
                 extra={"sweep": sweep, "setting": value})
            for method, method_knobs in knobs_for(methods, {"chunk_tokens": chunk_tokens, "rating": rating,
                                                            **knobs}).items()
            for sweep, value, options in placements]


PLANS: dict[str, Callable[..., list[Cell]]] = {"01_scaling": scaling_cells, "02_ablation": ablation_cells,
                                                "05_robustness": robustness_cells}


def notebook_cells(notebook: str, parameters: dict[str, Any]) -> list[Cell]:
    """The cells notebook `notebook` builds from `parameters` (its parameters, e.g. a preset's plan for it)."""
    if notebook not in PLANS:
        raise UserError(f"{notebook} has no cells to run outside it; the study notebooks are {', '.join(PLANS)}")
    plan = PLANS[notebook]
    return plan(**{name: parameters[name] for name in inspect.signature(plan).parameters})
