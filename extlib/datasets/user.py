"""Your own QA data next to the built-in benchmarks: a local JSONL, JSON or CSV file (read here, line by line, so
that every problem is named by its line), a Parquet file or a dataset hub name (read with the `datasets` library).
Parameters name the fields that hold the question, the gold answers (a string or a list of strings) and the
knowledge; long knowledge is cut in the middle to the input length, as for books."""

from __future__ import annotations

import csv
import json
import reprlib
import sys
from pathlib import Path
from typing import Any

from ..errors import MissingFile, SetupError, UserError
from ..tokenizer import Tokenizer
from ..trace import Task
from .common import DataError, check_rows, json_lines
from .longbook import long_document_tasks

FILE_TYPES = (".jsonl", ".json", ".csv", ".parquet")

Records = list[tuple[str, dict]]  # (where in the file, as messages name it: "line 3", "element [2]"; the record)


def jsonl_records(file: Path) -> Records:
    records = []
    for number, record in json_lines(file):
        if not isinstance(record, dict):
            raise DataError(f"{file}, line {number}: a {type(record).__name__}, not a JSON object; each line must "
                            "be one object of fields")
        records.append((f"line {number}", record))
    return records


def json_records(file: Path) -> Records:
    """A list of objects, or an object that holds that list under one key (as in {"data": [...]})."""
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise DataError(f"{file}: cannot read it as UTF-8 text: {exc}") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{file}, line {exc.lineno}: not valid JSON ({exc.msg}, column {exc.colno})") from None
    key = ""
    if isinstance(data, dict):
        lists = [name for name, value in data.items() if isinstance(value, list)]
        if len(lists) != 1:
            raise DataError(f"{file}: an object with {len(lists)} lists ({', '.join(lists) or 'none'}); give a list "
                            "of objects, or an object with that list under one key")
        key = lists[0]
        data = data[key]
    if not isinstance(data, list):
        raise DataError(f"{file}: a {type(data).__name__}; give a list of objects, or an object with that list "
                        "under one key")
    records = []
    for i, record in enumerate(data):
        if not isinstance(record, dict):
            raise DataError(f"{file}, element {key}[{i}]: a {type(record).__name__}, not an object of fields")
        records.append((f"element {key}[{i}]", record))
    return records


def csv_records(file: Path) -> Records:
    """The rows under the header line; line numbers count the header as line 1, as an editor shows them."""
    csv.field_size_limit(sys.maxsize)  # knowledge can be a whole book
    records = []
    try:
        with open(file, encoding="utf-8-sig", newline="") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if not header:
                raise DataError(f"{file}: empty; its first line must name the fields")
            start = reader.line_num + 1
            for row in reader:
                if len(row) > len(header):
                    raise DataError(f"{file}, line {start}: {len(row)} values but the header names {len(header)} "
                                    "fields")
                if row:  # not a blank line
                    records.append((f"line {start}", dict(zip(header, row))))
                start = reader.line_num + 1
    except UnicodeDecodeError as exc:
        raise DataError(f"{file}: cannot read it as UTF-8 text: {exc}") from None
    except csv.Error as exc:
        raise DataError(f"{file}, line {reader.line_num}: not valid CSV ({exc})") from None
    return records


def dataset_records(path: str, split: str) -> Records:
    """A Parquet file or a hub dataset, read with the `datasets` library."""
    try:
        from datasets import load_dataset
    except ImportError as exc:
        raise SetupError("reading Parquet or hub data needs the `datasets` library: pip install "
                          "'extagents[notebooks]'") from exc
    if path.endswith(".parquet"):
        table = load_dataset("parquet", data_files=path, split="train")
    else:
        table = load_dataset(path, split=split)  # a hub dataset: needs the network
    return [(f"row {i + 1}", record) for i, record in enumerate(table)]


READERS = {".jsonl": jsonl_records, ".json": json_records, ".csv": csv_records}


def describe(value: Any) -> str:
    return f"{type(value).__name__} {reprlib.repr(value)}"


def user_row(record: dict, index: int, at: str, question: str, answers: str, knowledge: str, id: str) -> dict:
    """One record as a loader row (its id defaults to its index); a missing, empty or non-text value is an error
    that names where it is."""
    texts = {}
    for role, name in (("question", question), ("knowledge", knowledge)):
        value = record.get(name)
        if value is not None and not isinstance(value, str):
            raise DataError(f"{at}: the {role} (field {name!r}) is {describe(value)}, not text")
        if not value or not value.strip():
            raise DataError(f"{at}: the {role} (field {name!r}) is missing or empty")
        texts[role] = value
    gold = record.get(answers)
    if gold in (None, "", []):
        raise DataError(f"{at}: the answers (field {answers!r}) are missing or empty")
    gold = [gold] if isinstance(gold, str) else gold
    if not isinstance(gold, list):
        raise DataError(f"{at}: the answers (field {answers!r}) are {describe(gold)}; give a text or a list of texts")
    if not all(isinstance(a, str) and a.strip() for a in gold):
        raise DataError(f"{at}: an empty or non-text gold answer in field {answers!r}: {reprlib.repr(gold)}")
    key = record.get(id)
    if key is None:
        key = str(index)
    elif isinstance(key, int) and not isinstance(key, bool):
        key = str(key)
    elif not isinstance(key, str) or not key.strip():
        raise DataError(f"{at}: the id (field {id!r}) is {describe(key)}; an id is a non-empty text or a whole "
                        "number")
    return {"id": key, "question": texts["question"], "context": texts["knowledge"], "answers": gold}


def read_user_rows(path: str, split: str, question: str, answers: str, knowledge: str,
                   id: str) -> tuple[list[dict], list[str]]:
    """The rows of `path` (a file, or a hub dataset name) with the named fields, as loader rows, and where each one
    is in the file ("line 3", "element [2]", "row 4"), for check_rows' messages."""
    file = Path(path)
    if file.suffix in FILE_TYPES or file.exists():
        if not file.is_file():
            raise MissingFile(f"data file not found: {path}")
        if file.suffix not in FILE_TYPES:
            raise DataError(f"{path}: unknown file type {file.suffix!r}; give one of {', '.join(FILE_TYPES)}")
    reader = READERS.get(file.suffix)
    records = reader(file) if reader else dataset_records(path, split)
    if not records:
        raise DataError(f"{path}: no rows")
    columns = list(dict.fromkeys(name for _, record in records for name in record))
    missing = [f"{role}={name!r}" for role, name in (("question", question), ("answers", answers),
                                                      ("knowledge", knowledge)) if name not in columns]
    if missing:
        raise DataError(f"{path}: no field {', '.join(missing)}; its fields are {', '.join(columns)}. Name the "
                        "right ones with the question=, answers= and knowledge= options")
    rows = [user_row(record, i, f"{path}, {place}", question, answers, knowledge, id)
            for i, (place, record) in enumerate(records)]
    return rows, [place for place, _ in records]


def user_tasks(input_tokens: int, n: int | None, seed: int, tokenizer: Tokenizer, progress: bool = True,
               ids: list[str] | None = None, path: str | None = None, split: str = "train",
               question: str = "question", answers: str = "answers", knowledge: str = "context", id: str = "id",
               lang: str = "en", if_shorter: str = "error") -> list[Task]:
    """path: the file or hub dataset; question / answers / knowledge / id: its field names (ids default to the
    row number); lang: en or zh (picks the metric); if_shorter: as for books (error, skip, whole)."""
    if not path:
        raise UserError("the user dataset needs path= (a JSONL/JSON/CSV/Parquet file or a hub dataset name)")
    rows, places = read_user_rows(path, split, question, answers, knowledge, id)
    check_rows(rows, path, lang, places)
    return long_document_tasks(rows, "user", lang, input_tokens, n, seed, tokenizer, progress, ids, if_shorter)
