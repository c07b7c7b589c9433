"""One look for every figure of the notebooks: a seaborn theme, one colour and one name per method, means with
bootstrap 95% intervals, the context window marked, the paper's reported numbers as labelled reference marks,
failed questions counted on the figure, and every figure saved as PNG and SVG with its numbers as CSV."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from .paper import reference_points
from .tables import bootstrap_interval

NAMES = {"extagents": "ExtAgents", "direct": "Direct Input", "mapreduce": "LLM×MapReduce",
         "chain-of-agents": "Chain of Agents", "longagent": "LongAgent", "drag": "DRAG", "iterdrag": "IterDRAG",
         "parser": "PARSER", "parallelsearch": "ParallelSearch", "search-r1": "Search-R1",
         "o2-searcher": "O2-Searcher", "autosurvey": "AutoSurvey"}
LENGTH_SPAN = 8  # a length axis spans at least 1x-8x of the window (the studies' range), whatever its ticks
BAR_HALF_WIDTH = 1.15  # a bar at length x spans x / 1.15 to x * 1.15 on the log axis
# one colour per method in every figure: tab10 in NAMES' order, then O2-Searcher dark teal and AutoSurvey gold
COLORS = dict(zip(NAMES, sns.color_palette("tab10", 10) + [(0.0, 0.35, 0.37), (0.85, 0.65, 0.1)]))


def theme() -> None:
    sns.set_theme(context="notebook", style="whitegrid", font_scale=0.9)
    # 160 dpi PNGs for the page, SVGs for print; a fixed hash salt so an SVG redrawn from the same rows is the same
    plt.rcParams.update({"figure.dpi": 110, "savefig.dpi": 160, "savefig.bbox": "tight", "svg.hashsalt": "extagents"})


def name(method: str) -> str:
    return NAMES.get(method, method)


def mean_ci(rows: pd.DataFrame, by: list[str], value: str = "f1") -> pd.DataFrame:
    """Per group of `by`: the mean of `value` over questions with its 95% bootstrap interval, the number of
    questions and of failed ones (a failed question counts 0 in the mean). Repeated runs (a `repeat` column)
    count once per question, with the median over the repeats (the paper reports the median of three runs).
    A group drawn from cells with a note (extlib.runner.cell_note: partial, or another method version) keeps it
    in `note`."""
    notes = "cell_note" in rows
    if "repeat" in rows and rows["repeat"].nunique() > 1:
        rows = (rows.groupby([*by, "id"], sort=False)
                .agg(**{value: (value, "median"), "failed": ("failed", "max"),
                        **({"cell_note": ("cell_note", "first")} if notes else {})}).reset_index())
    out = []
    for keys, group in rows.groupby(by, sort=True):
        low, high = bootstrap_interval(group[value].astype(float).tolist())
        note = "; ".join(sorted({n for n in group["cell_note"] if n})) if notes else ""
        out.append({**dict(zip(by, keys if isinstance(keys, tuple) else (keys,))), "mean": group[value].mean(),
                    "low": low, "high": high, "questions": len(group), "failed": int(group["failed"].sum()),
                    "note": note})
    return pd.DataFrame(out)


def lines_with_ci(ax: plt.Axes, summary: pd.DataFrame, x: str, hue: str, scale: float = 100.0,
                  colors: dict | None = None, styles: dict | None = None, order: list | None = None,
                  dodge: float = 0.03) -> None:
    """One line per `hue` value through its means (in `order`, else as they come), with the 95% interval as a
    band; each line's x is scaled by a few percent (`dodge`) so that equal values do not hide each other."""
    keys = [k for k in (order or list(dict.fromkeys(summary[hue]))) if k in set(summary[hue])]
    for k, key in enumerate(keys):
        group = summary[summary[hue] == key].sort_values(x)
        group = group.assign(**{x: group[x] * (1 + dodge * (k - (len(keys) - 1) / 2))})
        color = (colors or COLORS).get(key)
        ax.plot(group[x], scale * group["mean"], marker="o", label=name(key), color=color,
                linestyle=(styles or {}).get(key, "-"))
        ax.fill_between(group[x], scale * group["low"], scale * group["high"], color=color, alpha=0.15, lw=0)
        label_notes(ax, group, x, scale, color)


def label_notes(ax: plt.Axes, summary: pd.DataFrame, x: str, scale: float = 100.0, color=None) -> None:
    """Draw each point with a note (a partial cell, or one of another method version than the code's) hollow and
    write the note beside it, once per line (at the rightmost point that has it) and once per panel (lines ending
    side by side share one), so a figure drawn from committed rows never passes such a point off as a computed one
    and four lines of one old version stay readable."""
    if "note" not in summary:
        return
    noted = summary[summary["note"].fillna("").astype(bool)]
    for _, point in noted.iterrows():
        ax.scatter([point[x]], [scale * point["mean"]], s=36, facecolors="white", edgecolors=color or "black",
                   zorder=6)  # hollow: not a point computing would draw now
    for note, points in noted.groupby("note"):
        if any(text.get_text() == note for text in ax.texts):
            continue  # another line of this panel wrote it: the hollow points say which
        point = points.loc[points[x].idxmax()]
        ax.annotate(note, (point[x], scale * point["mean"]), textcoords="offset points", xytext=(4, -9),
                    fontsize=6, color=color or "black", zorder=7)


def mark_noted_bars(ax: plt.Axes, bars, notes: list[str], color) -> None:
    """Bars drawn from cells with a note (see label_notes) hatched and hollow, the note written once above them."""
    noted = [(bar, note) for bar, note in zip(bars, notes) if isinstance(note, str) and note]
    for bar, _ in noted:
        bar.set(facecolor="white", edgecolor=color, hatch="//")
    for note in dict.fromkeys(note for _, note in noted):
        bar = [b for b, n in noted if n == note][-1]
        ax.annotate(note, (bar.get_x() + bar.get_width() / 2, bar.get_height()), textcoords="offset points",
                    xytext=(0, 3), ha="center", fontsize=6, color=color, zorder=7)


def length_axis(ax: plt.Axes, ticks: list[float], label: str = "knowledge length (x window)") -> None:
    """A log axis of knowledge lengths in multiples of the window, labelled 1x, 2x, ... at `ticks` only."""
    ax.set_xscale("log")
    low, high = min(ticks), max(ticks)
    # margins of 1.3x, and at least the span of 1x-8x around the ticks' middle: a panel of one or two lengths is
    # drawn to the same scale as its neighbours of four (the same margins whatever it holds, or if nothing yet)
    half_span = max(high / low, LENGTH_SPAN) ** 0.5 * 1.3
    ax.set_xlim((low * high) ** 0.5 / half_span, (low * high) ** 0.5 * half_span)
    ax.set_xticks(ticks, [f"{t:g}x" for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel(label)


def length_bars(ax: plt.Axes, xs: list[float], heights: list[float], color: str = "gray") -> None:
    """Bars at knowledge lengths on `length_axis`'s log axis, each as wide on the page as the others."""
    ax.bar([x / BAR_HALF_WIDTH for x in xs], heights, width=[x * BAR_HALF_WIDTH - x / BAR_HALF_WIDTH for x in xs],
           align="edge", color=color)


def plain_log(axis) -> None:
    """Log-axis tick labels as plain numbers (2, 5, 10, 20, ... and 0.0002), not powers of ten."""
    axis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.10g}"))
    axis.set_minor_formatter(NullFormatter())


def mark_window(ax: plt.Axes, at: float = 1.0, label: str = "context window") -> None:
    """The window as a dotted line, named in the legend (a label written on the panel covers its points)."""
    ax.axvline(at, color="black", lw=1, ls=":", label=label)


def token_axis(ax: plt.Axes, window: int, ticks: list[float]) -> None:
    """A second x axis on top of a `length_axis` panel: the same lengths in tokens (x times the window)."""
    top = ax.secondary_xaxis("top", functions=(lambda x: x * window, lambda t: t / window))
    top.set_xticks([t * window for t in ticks], [f"{round(t * window):,}" for t in ticks], fontsize=7)
    top.minorticks_off()
    top.tick_params(length=2, pad=1)
    top.set_xlabel("tokens", fontsize=7, labelpad=2)


def mark_paper(ax: plt.Axes, dataset: str, methods: list[str], scale: float = 100.0) -> bool:
    """The paper's Table 3 points (gpt-4o-mini, 128k window) for `dataset`, as hollow stars at length/window;
    False when the paper has no matching setting."""
    points = [p for p in reference_points(dataset) if p[0] in methods]
    for method, x, f1 in points:
        ax.scatter([x], [scale * f1], marker="*", s=160, facecolors="none", edgecolors=COLORS.get(method), lw=1.4,
                   zorder=5)
        right = x <= 1  # at the panel's left edge a label to the left would run into the tick labels
        ax.annotate(f"paper: {name(method)}", (x, scale * f1), textcoords="offset points",
                    xytext=(7, 4) if right else (-7, 4), ha="left" if right else "right", fontsize=7,
                    color=COLORS.get(method), bbox={"facecolor": "white", "alpha": 0.7, "lw": 0, "pad": 0.5})
    return bool(points)


def f1_scale(ax: plt.Axes) -> None:
    """F1 from 0 to 100 with room around it: a point at 0 or 100 is drawn whole, and one at 0 is not covered by
    note_failures' footnote, which sits in the room below 0."""
    ax.set_ylim(-10, 104)
    ax.set_yticks(range(0, 101, 20))


def note_failures(ax: plt.Axes, summary: pd.DataFrame) -> None:
    """Say on the figure how many questions failed (they count 0) and how many each point averages, or that the
    panel has no rows yet (a staged study's cells not begun); at the panel's foot, under 0 on an `f1_scale`."""
    if summary.empty:
        ax.text(0.5, 0.5, "no rows yet", transform=ax.transAxes, ha="center", va="center", color="dimgray")
        return
    failed, questions = int(summary["failed"].sum()), int(summary["questions"].max())
    ax.text(0.01, 0.01, f"{per_point(questions)}; {failed} failed (scored 0)",
            transform=ax.transAxes, fontsize=7, color="dimgray", va="bottom", zorder=6,
            bbox={"facecolor": "white", "alpha": 0.6, "lw": 0, "pad": 1})


def per_point(n: int) -> str:
    return f"{n} question{'' if n == 1 else 's'} a point"


def save(fig: plt.Figure, folder: str | Path, stem: str, data: pd.DataFrame) -> Path:
    """Write the figure as `stem.png` and `stem.svg` and the numbers it draws as `stem.csv` (one row per point or
    bar, with its interval and question count where it has them), so a reader can cite it and redraw it; returns
    the PNG's path."""
    if not isinstance(data, pd.DataFrame) or data.empty:
        raise ValueError(f"{stem}: a figure is saved with the numbers it draws (a non-empty DataFrame), got {data!r}")
    path = Path(folder) / f"{stem}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path)
    fig.savefig(path.with_suffix(".svg"), metadata={"Date": None})  # no date: the same rows give the same file
    data.to_csv(path.with_suffix(".csv"), index=False, float_format="%.4f")
    return path
