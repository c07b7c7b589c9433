"""Benchmarks as tasks in one call: `load_tasks("hotpotqa", input_tokens=64_000, n=50, seed=0)`.

Every dataset gives Tasks with question, gold answers, language, metric, id and knowledge of the requested
length in the serving model's tokens (the bundled Qwen vocabulary unless `tokenizer` says otherwise), plus
`meta` with where the evidence sits. `prepare()` fetches and indexes everything reachable offline.
"""

from __future__ import annotations

import contextlib
import inspect
import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from ..errors import MissingFile, UserError
from ..tokenizer import Tokenizer, load_tokenizer
from ..trace import Task
from . import babilong, en_bridge, hotpotqa, hotpotqa_bridge, hotpotqa_longdoc, longbook, user, zh_bridge, zh_longdoc
from .common import DataError
from .filler import FILLERS, paragraph_counts
from .packing import TooLong
from .sources import ARTIFACTS, data_dir, fetch

DATASETS: dict[str, Callable[..., list[Task]]] = {
    "hotpotqa": hotpotqa.tasks,  # 7,405 dev questions over a BM25 knowledge base of all dev paragraphs
    "hotpotqa-longdoc": hotpotqa_longdoc.tasks,  # their gold paragraphs placed inside long public-domain plays
    "zh-longdoc": zh_longdoc.tasks,  # generated Chinese two-hop questions planted in 三国演义
    # books where the bridge is needed: the hops among look-alike distractors, dev/test/reserve id lists
    "hotpotqa-bridge": hotpotqa_bridge.tasks,  # HotpotQA bridge questions among Wikipedia paragraphs in a play
    "zh-bridge": zh_bridge.tasks,  # Chinese two-hop chains among notes of the same kinds that lead nowhere
    "en-bridge": en_bridge.tasks,  # the same in English, in Shakespeare's plays
    "babilong": babilong.tasks,  # bAbI qa2/qa3 stories from a seeded simulation, hidden in plays (held out)
    "infinitebench-en": longbook.infinitebench_tasks("en"),  # official En.QA jsonl (path= or the hub)
    "infinitebench-zh": longbook.infinitebench_tasks("zh"),  # official Zh.QA jsonl
    "aa-lcr": longbook.aa_lcr_tasks,  # 100 long-document questions from the pinned package
    "user": user.user_tasks,  # your own file or hub dataset (path=, question=, answers=, knowledge=)
}
COMMON = {"input_tokens", "n", "seed", "tokenizer", "progress", "ids"}
# How a method that must shorten the knowledge should cut it: retrieved passages are best first (the paper's
# "retrieval priority"), so keep the front; books keep both ends (InfiniteBench).
TRUNCATION = {"hotpotqa": "front"}


def truncation(name: str) -> str:
    return TRUNCATION.get(name, "middle")


def default_tokenizer() -> Tokenizer:
    """The bundled model's vocabulary (Qwen2.5, shared by the 0.5B and 1.5B models)."""
    from ..models import DEFAULT_MODEL, ensure_model
    from ..tokenizer import GGUFTokenizer

    return GGUFTokenizer(ensure_model(DEFAULT_MODEL))


def options(name: str) -> dict[str, object]:
    """The dataset-specific keyword options of `name` and their defaults."""
    params = inspect.signature(DATASETS[name]).parameters.values()
    return {p.name: p.default for p in params if p.name not in COMMON}


def load_tasks(name: str, input_tokens: int, n: int | None = None, seed: int = 0,
               tokenizer: Tokenizer | str | None = None, progress: bool = True,
               ids: list[str] | str | Path | None = None, **dataset_options: object) -> list[Task]:
    """n questions (all if None) of dataset `name`, drawn with `seed`, each with exactly input_tokens of
    knowledge. `ids` (a list, or a JSON file such as an ∞Bench+ filter's output) restricts the questions."""
    if name not in DATASETS:
        raise UserError(f"unknown dataset {name!r}; choose one of: {', '.join(DATASETS)}")
    if isinstance(input_tokens, bool) or not isinstance(input_tokens, int) or input_tokens <= 0:
        raise UserError(f"input_tokens must be a positive integer, got {input_tokens!r}")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n <= 0):
        raise UserError(f"n must be a positive integer or None (all questions), got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise UserError(f"seed must be an integer, got {seed!r}")
    check_options(name, dataset_options)
    if isinstance(tokenizer, str):
        tokenizer = load_tokenizer(tokenizer)
    return DATASETS[name](input_tokens, n, seed, tokenizer or default_tokenizer(), progress=progress,
                          ids=read_ids(ids), **dataset_options)


def check_options(name: str, given: dict[str, object]) -> None:
    """Every option named is one dataset `name` has, or an error listing them."""
    allowed = options(name)
    unknown = set(given) - set(allowed)
    if unknown:
        raise UserError(f"{name} has no option(s) {sorted(unknown)}; its options are: "
                        f"{', '.join(f'{k}={v!r}' for k, v in allowed.items()) or 'none'}")


def read_ids(ids: list[str] | str | Path | None) -> list[str] | None:
    """A list of ids as given, or the `kept` list of a JSON file (∞Bench+ output) or a plain JSON list."""
    if ids is None or isinstance(ids, list):
        return ids
    import json

    path = Path(ids)
    if not path.is_file():
        raise MissingFile(f"ids file not found: {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path} is not JSON ({exc}); expected a list of ids or an object with a 'kept' list") from exc
    kept = data.get("kept") if isinstance(data, dict) else data
    if not isinstance(kept, list):
        raise DataError(f"{path}: expected a JSON list of ids or an object with a 'kept' list")
    return [str(i) for i in kept]


def prepare(tokenizer: Tokenizer | None = None, progress: bool = True) -> dict[str, int]:
    """Fetch every offline artifact (hash-verified), build the HotpotQA BM25 index and the token counts;
    returns the bytes each part of data/ holds."""
    for name in ARTIFACTS:
        fetch(name)
    tokenizer = tokenizer or default_tokenizer()
    _, pool = hotpotqa.load_pool()
    hotpotqa.bm25_index(pool, progress)
    hotpotqa.token_counts(pool, tokenizer, progress)
    for name in FILLERS:
        paragraph_counts(name, tokenizer, progress)
    root = data_dir()
    return {part: sum(f.stat().st_size for f in (root / part).rglob("*") if f.is_file())
            for part in ("downloads", "cache") if (root / part).exists()}


__all__ = ["DATASETS", "DataError", "TooLong", "check_options", "load_tasks", "options", "prepare", "read_ids",
           "truncation"]


def show_tasks(tasks: list[Task], out: Path | None = None) -> None:
    """Print each task's id, question, answers and evidence (`extagents data --show`); with `out`, also write the
    tasks, knowledge included, as JSONL."""
    with open(out, "w", encoding="utf-8") if out else contextlib.nullcontext() as sink:
        for task in tasks:
            gold = task.meta.get("gold", [])
            print(f"{task.id}  [{task.lang}, {task.meta.get('input_tokens')} tokens]  {task.question}\n"
                  f"  answers: {task.answers}\n  evidence: {json.dumps(gold, ensure_ascii=False)}")
            if sink:
                sink.write(json.dumps(asdict(task), ensure_ascii=False) + "\n")
