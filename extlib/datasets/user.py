"""Your own QA data next to the built-in benchmarks: a local JSONL, JSON, CSV or Parquet file, or a dataset hub
name, read with the `datasets` library. Parameters name the fields that hold the question, the gold answers
(a string or a list of strings) and the knowledge; long knowledge is cut in the middle to the input length,
as for books."""

from __future__ import annotations

from pathlib import Path

from ..tokenizer import Tokenizer
from ..trace import Task
from .common import DataError, check_rows
from .longbook import long_document_tasks

FILE_BUILDERS = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet"}


def read_user_rows(path: str, split: str, question: str, answers: str, knowledge: str, id: str) -> list[dict]:
    """The rows of `path` (a file, or a hub dataset name) with the named fields, as loader rows."""
    try:
        from datasets import load_dataset
    except ImportError as exc:
        raise ImportError("reading your own data needs the `datasets` library: pip install 'extagents[notebooks]'") \
            from exc
    file = Path(path)
    if file.suffix in FILE_BUILDERS or file.exists():
        if not file.is_file():
            raise FileNotFoundError(f"data file not found: {path}")
        if file.suffix not in FILE_BUILDERS:
            raise DataError(f"{path}: unknown file type {file.suffix!r}; give one of {', '.join(FILE_BUILDERS)}")
        table = load_dataset(FILE_BUILDERS[file.suffix], data_files=str(file), split="train")
    else:
        table = load_dataset(path, split=split)  # a hub dataset: needs the network
    columns = list(table.column_names)
    missing = [f"{role}={name!r}" for role, name in (("question", question), ("answers", answers),
                                                      ("knowledge", knowledge)) if name not in columns]
    if missing:
        raise DataError(f"{path}: no field {', '.join(missing)}; its fields are {', '.join(columns)}. Name the "
                        "right ones with the question=, answers= and knowledge= options")
    rows = []
    for i, record in enumerate(table):
        gold = record[answers]
        rows.append({"id": str(record[id]) if id in columns and record[id] is not None else str(i),
                     "question": record[question], "context": record[knowledge],
                     "answers": [gold] if isinstance(gold, str) else list(gold or [])})
    if not rows:
        raise DataError(f"{path}: no rows")
    return rows


def user_tasks(input_tokens: int, n: int | None, seed: int, tokenizer: Tokenizer, progress: bool = True,
               ids: list[str] | None = None, path: str | None = None, split: str = "train",
               question: str = "question", answers: str = "answers", knowledge: str = "context", id: str = "id",
               lang: str = "en", if_shorter: str = "error") -> list[Task]:
    """path: the file or hub dataset; question / answers / knowledge / id: its field names (ids default to the
    row number); lang: en or zh (picks the metric); if_shorter: as for books (error, skip, whole)."""
    if not path:
        raise ValueError("the user dataset needs path= (a JSONL/JSON/CSV/Parquet file or a hub dataset name)")
    rows = read_user_rows(path, split, question, answers, knowledge, id)
    check_rows(rows, path, lang)
    return long_document_tasks(rows, "user", lang, input_tokens, n, seed, tokenizer, progress, ids, if_shorter)
