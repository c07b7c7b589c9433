"""Issue 13's question-by-question account of ExtAgents' rows: for each question, where its evidence lay (the chunks
holding the gold paragraphs or facts), what the seeking agents of those chunks replied (kept, dropped and why, or
nothing), whether any kept message stated the gold answer, which message KAR read first, and what went wrong.

    .venv/bin/python benchmarks/beyond_window_account.py --version 3 \
        results/cpu/beyond_window/hotpotqa-longdoc/extagents__*L8192*.jsonl

Classes (the first that applies): right (F1 >= 50); never extracted (no seeker reply states the answer); dropped (a
reply stated it, every such reply was kept off the scratchpad); outranked (a kept message stated it, but the answering
KAR step did not read it); misread (the answering step read it and answered otherwise).

Only rows of one version of ExtAgents count (the code's, unless --version names another: issue 13's rows under
results/cpu/beyond_window are version 3), each question's latest: a run file that two versions answered holds both.
"""

from __future__ import annotations

import argparse
import re
import string
from collections import Counter
from pathlib import Path

from extlib.chunking import chunk_text
from extlib.datasets import load_tasks, truncation
from extlib.methods import METHODS
from extlib.models import ensure_model
from extlib.runfile import RunFile, row_version
from extlib.tokenizer import GGUFTokenizer


def normalized(text: str) -> str:
    text = "".join(ch for ch in text.lower() if ch not in string.punctuation + "，。、“”（）：")
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())


def states(text: str, answers: list[str]) -> bool:
    return any(normalized(a) and normalized(a) in normalized(text) for a in answers)


def gold_chunks(meta: dict, chunks: list[str]) -> list[int | None]:
    """The chunk holding each gold paragraph (by its title line) or planted fact; None when it is not in the input."""
    found = []
    for gold in meta.get("gold", []):
        marker = gold.get("fact") or f"{gold.get('title')}\n"
        found.append(next((i for i, chunk in enumerate(chunks) if marker in chunk), None))
    return found


def reply_status(calls: list[dict], chunk: int | None, answers: list[str]) -> str:
    if chunk is None:
        return "not in the input"
    seen = [c for c in calls if c["role"] == "seek" and c["chunk"] == chunk]
    parts = []
    for c in seen:
        text = c["output"].strip()
        status = "none" if not text or text.upper().startswith(("NONE", "NO INFORMATION")) else \
            f"dropped ({c['dropped']})" if c.get("dropped") else "kept"
        parts.append(f"r{c['round']}: {status}{' +answer' if states(text, answers) else ''}")
    return "; ".join(parts) or "not read"


def account(path: Path, version: int) -> list[dict]:
    rows = list({r["id"]: r for r in RunFile(path).rows() if row_version(r) == version}.values())
    if not rows:
        raise SystemExit(f"{path}: no rows of ExtAgents version {version} (--version picks another)")
    spec = rows[0]["spec"]
    tokenizer = GGUFTokenizer(ensure_model(spec["model"]))
    # a question's input depends only on the seed and its id, so the rows' ids rebuild exactly their tasks
    tasks = {t.id: t for t in load_tasks(spec["dataset"], spec["input_tokens"], n=None, seed=spec["seed"],
                                         tokenizer=tokenizer, ids=[r["id"] for r in rows],
                                         **spec.get("options", {}))}
    knobs = spec["knobs"]
    out = []
    for row in rows:
        task = tasks[row["id"]]
        chunks = chunk_text(task.knowledge, tokenizer, knobs.get("chunk_tokens", 2048), None,
                            truncation(spec["dataset"]), knobs.get("paragraphs", False))
        calls, answers = row["calls"], row["answers"]
        seeks = [c for c in calls if c["role"] == "seek"]
        stating = [c for c in seeks if states(c["output"], answers)]
        kept = [c for c in stating if not c.get("dropped")]
        reasons = [c for c in calls if c["role"] == "reason"]
        ranking = (row.get("extra") or {}).get("ranking") or [[]]
        last = reasons[-1] if reasons else None
        read = ranking[last["round"] - 1][:last["step"]] if last and last["round"] <= len(ranking) else []
        scores = {c["chunk"]: c.get("score") for c in calls if c["role"] == "rate"}
        if row["f1"] >= 0.5:
            kind = "right"
        elif not stating:
            kind = "never extracted"
        elif not kept:
            kind = "dropped"
        elif not {c["chunk"] for c in kept} & set(read):
            kind = "outranked"
        else:
            kind = "misread"
        hops = gold_chunks(row["meta"], chunks)
        out.append({"id": row["id"], "f1": round(100 * row["f1"]), "answer": row["answer"][:60],
                    "gold": answers[0][:40], "rounds": row["rounds"],
                    "hop chunks": ", ".join("-" if h is None else str(h) for h in hops),
                    "hop replies": " | ".join(reply_status(calls, h, answers) for h in hops),
                    "kept stating the answer": ", ".join(str(c["chunk"]) for c in kept) or "-",
                    "answering step read": ", ".join(f"{i} ({scores.get(i)})" for i in read) or "-",
                    "class": kind})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path, help="ExtAgents run files (JSONL)")
    parser.add_argument("--version", type=int, default=METHODS["extagents"][0].version,
                        help="count the rows of this version of ExtAgents (default: the code's)")
    args = parser.parse_args()
    for path in args.files:
        rows = account(path, args.version)
        print(f"\n### {path.parent.name}/{path.name} ({len(rows)} questions)\n")
        columns = list(rows[0])
        print("| " + " | ".join(columns) + " |\n|" + "---|" * len(columns))
        for row in rows:
            print("| " + " | ".join(str(row[c]).replace("|", "/") for c in columns) + " |")
        print("\n" + ", ".join(f"{kind}: {n}" for kind, n in Counter(r["class"] for r in rows).most_common()))


if __name__ == "__main__":
    main()
