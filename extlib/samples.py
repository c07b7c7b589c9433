"""The bundled two-hop demo (data/samples/two_hop_demo.txt and .json): the document and question `make demo` asks,
which the benchmarks time."""

from __future__ import annotations

import json
from pathlib import Path

from .trace import Task

DEMO_TEXT = Path(__file__).parents[1] / "data" / "samples" / "two_hop_demo.txt"


def demo_task() -> Task:
    meta = json.loads(DEMO_TEXT.with_suffix(".json").read_text())
    return Task(meta["id"], meta["question"], DEMO_TEXT.read_text(), meta["answers"], meta["lang"])
