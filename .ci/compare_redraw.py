"""Compare a redraw of the committed figures with the committed ones: every committed PNG must be redrawn, at the
same size, within a small pixel tolerance (matplotlib's RMS of the pixel difference on a 0-255 scale), with its SVG
beside it and its numbers (the CSV) the same to the byte."""

from __future__ import annotations

import sys
from pathlib import Path

from matplotlib.testing.compare import compare_images

TOLERANCE = 2.0  # RMS over 0-255: same data drawn by the same code; text antialiasing may move a few pixels


def main(committed: Path, redrawn: Path) -> int:
    failures = []
    for figure in sorted(committed.glob("*.png")):
        again = redrawn / figure.name
        if not again.exists():
            failures.append(f"{figure.name}: not redrawn")
            continue
        try:
            problem = compare_images(str(figure), str(again), tol=TOLERANCE, in_decorator=True)
        except Exception as exc:  # e.g. the sizes differ
            problem = str(exc)
        for suffix in (".svg", ".csv"):
            if not figure.with_suffix(suffix).exists() or not again.with_suffix(suffix).exists():
                problem = problem or f"its {suffix} is missing (committed or redrawn)"
        if not problem and figure.with_suffix(".csv").read_bytes() != again.with_suffix(".csv").read_bytes():
            problem = "its numbers (the CSV) differ"
        if problem:
            failures.append(f"{figure.name}: {problem}")
        print(f"{figure.name}: {'differs' if problem else 'same'}")
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
