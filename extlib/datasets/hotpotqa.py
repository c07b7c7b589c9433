"""HotpotQA (dev, distractor setting) over a BM25 knowledge base of all dev paragraphs.

The paper builds each question's knowledge from BM25-retrieved Wikipedia passages in retrieval order and
cuts it at the input length (front truncation, "retrieval priority of chunks"). Offline the pool is the
66k unique paragraphs of the 7,405 dev questions (every question's 10 context paragraphs), about 9M tokens:
the gold paragraphs are in it but must be found among 66k others. The paper's pool (KILT Wikipedia) is
larger; its construction script is not public.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass
from functools import cache

import numpy as np

from ..errors import SetupError, UserError
from ..retrieval import BM25Index
from ..tokenizer import Tokenizer
from ..trace import Task
from .common import DataError, cache_path, cached_array, safe_name, sample
from .packing import SEPARATOR, pack, unit_counts
from .sources import ARTIFACTS, fetch
from .splits import in_split

MEMBER = "long_context_eval/data/synthetic/json/hotpotqa.json"
SOURCES = ("package", "hub")


def passage_text(title: str, sentences: list[str]) -> str:
    """Title line, then the text on one line: a blank line only ever separates passages."""
    return f"{title}\n{' '.join(''.join(sentences).split())}"


def read_questions(source: str = "package") -> list[dict]:
    """The 7,405 dev questions in the official schema: from the pinned package offline, or from the hub."""
    if source == "package":
        with zipfile.ZipFile(fetch("long-context-eval")) as archive:
            rows = json.loads(archive.read(MEMBER))
    elif source == "hub":
        rows = _from_hub()
    else:
        raise UserError(f"HotpotQA source must be one of {SOURCES}, got {source!r}")
    check_questions(rows, source)
    return rows


def _from_hub() -> list[dict]:
    try:
        import datasets
    except ImportError as exc:
        raise SetupError("source='hub' needs `pip install datasets` and network access; offline, use "
                         "source='package'") from exc
    split = datasets.load_dataset("hotpotqa/hotpot_qa", "distractor", split="validation")
    return [{"_id": r["id"], "question": r["question"], "answer": r["answer"], "type": r["type"],
             "level": r["level"],
             "supporting_facts": list(zip(r["supporting_facts"]["title"], r["supporting_facts"]["sent_id"])),
             "context": list(zip(r["context"]["title"], r["context"]["sentences"]))} for r in split]


def check_questions(rows: list[dict], where: str) -> None:
    seen = set()
    for i, row in enumerate(rows):
        at = f"HotpotQA ({where}), row {i + 1}"
        for key in ("_id", "question", "answer", "context", "supporting_facts"):
            if not row.get(key):
                raise DataError(f"{at}: missing or empty field {key!r}")
        if row["_id"] in seen:
            raise DataError(f"{at}: duplicate id {row['_id']!r}")
        seen.add(row["_id"])
        titles = {title for title, _ in row["context"]}
        if not {title for title, _ in row["supporting_facts"]} <= titles:
            raise DataError(f"{at} (id {row['_id']}): a supporting-fact title is not among its paragraphs")


@dataclass
class Pool:
    """Every unique dev paragraph once, in file order, and each question's gold paragraph ids."""

    passages: list[str]
    gold: dict[str, list[int]]  # question id -> its supporting paragraphs, in supporting-fact order
    context: dict[str, list[int]]  # question id -> its 10 paragraphs (gold and distractors)
    key: str  # names the caches built from this pool


@cache
def load_pool(source: str = "package") -> tuple[list[dict], Pool]:
    rows = read_questions(source)
    ids: dict[str, int] = {}
    gold: dict[str, list[int]] = {}
    context: dict[str, list[int]] = {}
    for row in rows:
        here = {title: ids.setdefault(passage_text(title, sents), len(ids)) for title, sents in row["context"]}
        gold[row["_id"]] = list(dict.fromkeys(here[title] for title, _ in row["supporting_facts"]))
        context[row["_id"]] = list(dict.fromkeys(here.values()))
    key = ARTIFACTS["long-context-eval"].sha256[:12] if source == "package" else f"hub-{len(ids)}"
    return rows, Pool(list(ids), gold, context, key)


_INDEXES: dict[str, BM25Index] = {}  # loaded once per process: a study loads tasks for many lengths


def bm25_index(pool: Pool, progress: bool = True) -> BM25Index:
    """Built once over the whole pool (about a minute), then loaded from data/cache."""
    if pool.key in _INDEXES:
        return _INDEXES[pool.key]
    path = cache_path("hotpotqa", f"bm25-{pool.key}.npz")
    if path.exists():
        index = BM25Index.load(path)
    else:
        index = BM25Index.build(pool.passages, progress=progress)
        index.save(path)
    _INDEXES[pool.key] = index
    return index


def token_counts(pool: Pool, tokenizer: Tokenizer, progress: bool = True) -> np.ndarray:
    path = cache_path("hotpotqa", f"tokens-{pool.key}-{safe_name(tokenizer.name)}.npy")
    return cached_array(path, lambda: unit_counts(tokenizer, pool.passages, progress))


def tasks(input_tokens: int, n: int | None, seed: int, tokenizer: Tokenizer, progress: bool = True,
          ids: list[str] | None = None, source: str = "package", split: str | None = None) -> list[Task]:
    """source: `package` (offline) or `hub`; split: None (every question, as the first studies drew) or dev, test
    or reserve (disjoint id lists in data/splits/hotpotqa.json, which hotpotqa-longdoc shares)."""
    rows, pool = load_pool(source)
    picked = sample(in_split(rows, "hotpotqa", split, key="_id"), n, seed, drawn_from(split), ids, key="_id")
    index = bm25_index(pool, progress)
    counts = token_counts(pool, tokenizer, progress)
    return [build_task(row, pool, index, counts, input_tokens, tokenizer, split) for row in picked]


def drawn_from(split: str | None) -> str:
    """What a HotpotQA draw is from, as its messages name it."""
    return "HotpotQA dev" if split is None else f"the {split} split of HotpotQA dev"


def build_task(row: dict, pool: Pool, index: BM25Index, counts: np.ndarray, input_tokens: int,
               tokenizer: Tokenizer, split: str | None = None) -> Task:
    order = index.rank(row["question"])
    packed = pack(pool.passages, counts, order, input_tokens, tokenizer, "HotpotQA dev paragraphs")
    where = dict(zip(packed.passage_ids, packed.offsets))
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    gold = []
    for pid in pool.gold[row["_id"]]:
        offset = where.get(pid)
        gold.append({"title": pool.passages[pid].split("\n", 1)[0], "rank": int(rank[pid]),
                     "token_offset": offset, "complete": offset is not None and pid != packed.cut})
    return Task(id=row["_id"], question=row["question"], knowledge=packed.text, answers=[row["answer"]],
                lang="en", metric="hotpotqa", passages=[p.removesuffix(SEPARATOR) for p in packed.parts],
                meta={"dataset": "hotpotqa", "type": row.get("type"), "input_tokens": packed.tokens,
                      "n_passages": len(packed.passage_ids), "gold": gold,
                      "all_gold_complete": all(g["complete"] for g in gold),
                      **({"split": split} if split else {})})  # no key by default: rows as the first studies wrote
