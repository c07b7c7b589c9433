"""Where ExtAgents' evidence went, question by question, on the bridge-needed books: which chunks held the two hops,
whether their agents put them on the scratchpad and in which round, whether GKS showed the second hop's agent the
first hop, whether the answering KAR step read both, and what it answered. Reads run files only (no model call).

    .venv/bin/python benchmarks/evidence_account.py results/dev/design/zh-bridge/extagents__*.jsonl
    .venv/bin/python benchmarks/evidence_account.py --version 13 --against 12 \
        results/dev/design/en-bridge/extagents__*__chunk_tokens-384_seek_max_tokens-128.jsonl
    .venv/bin/python benchmarks/evidence_account.py --version 20 --against 19 \
        --against-file results/dev/design/zh-bridge/extagents__*L4096*__chunk_tokens-384_seek_max_tokens-128.jsonl \
        results/dev/design-prompt-cache/zh-bridge/extagents__*.jsonl

With --lost-to, the classes of the questions another method's run file answers better (the 1x questions lost
to Direct Input). "On the scratchpad": a gold answer is in what the agents posted.

    .venv/bin/python benchmarks/evidence_account.py \
        results/cpu/01_scaling/hotpotqa-longdoc/extagents__*split-test.jsonl \
        --lost-to results/cpu/01_scaling/hotpotqa-longdoc/direct__qwen2.5-1.5b__L1024__W1024__n30__s2__split-test.jsonl

Classes (the first that applies): right (the answer holds a gold answer: "湖南省" for "湖南", not "江苏" for "浙江",
whose character F1 is 0.5); hop 1 missing (no message of its chunk holds it); hop 2 missing
(hop 1 was posted, hop 2 never: the bridge was not found); outranked (both posted, the answering step did not read
both); misread (it read both and answered otherwise).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from extlib.chunking import chunk_text  # noqa: E402
from extlib.datasets import default_tokenizer, load_tasks, truncation  # noqa: E402
from extlib.methods import make_method  # noqa: E402
from extlib.metrics import normalize_answer  # noqa: E402
from extlib.runfile import RunFile, row_version  # noqa: E402
from extlib.tables import bootstrap_interval  # noqa: E402


def hop_markers(task_meta: dict) -> list[str]:
    """A text that marks each hop in a chunk: the planted note, or the gold paragraph's title line."""
    return [g.get("fact") or f"{g['title']}\n" for g in task_meta["gold"]]


def posted(call: dict) -> str:
    """What a seeking call put on the scratchpad ("" when nothing)."""
    if call["role"] != "seek" or call.get("dropped") or call.get("error"):
        return ""
    text = call.get("posted") or call["output"]
    return "" if text.strip().upper().startswith(("NONE", "NO INFORMATION")) else text


def account(row: dict, task, tokenizer) -> dict:
    spec = row["spec"]
    method = make_method("extagents", context_window=spec["context_window"], input_tokens=spec["input_tokens"],
                         truncate=truncation(spec["dataset"]), **spec["knobs"])
    cfg = method.config
    chunks = chunk_text(task.knowledge, tokenizer, cfg.chunk_tokens, cfg.input_tokens, cfg.truncate, cfg.paragraphs,
                        cfg.overlap)
    markers = hop_markers(task.meta)
    holders = [next((i for i, c in enumerate(chunks) if m.strip() in c), None) for m in markers]
    calls = row["calls"]
    found = [min((c["round"] for c in calls if c["chunk"] == h and posted(c)), default=None) for h in holders]
    reasons = [c for c in calls if c["role"] == "reason"]
    last = reasons[-1] if reasons else None
    ranking = row["extra"].get("ranking", [])
    read = set(ranking[last["round"] - 1][:last["step"]]) if last and ranking and last["step"] else set()
    said = normalize_answer(row["answer"])
    if any(normalize_answer(gold) and normalize_answer(gold) in said for gold in row["answers"]):
        verdict = "right"
    elif found[0] is None:
        verdict = "hop 1 missing"
    elif found[1] is None:
        verdict = "hop 2 missing"
    elif not {h for h in holders if h is not None} <= read:
        verdict = "outranked"
    else:
        verdict = "misread"
    scratchpad = normalize_answer(" ".join(posted(c) for c in calls))
    on_scratchpad = any(normalize_answer(gold) and normalize_answer(gold) in scratchpad for gold in row["answers"])
    return {"id": row["id"], "f1": row["f1"], "rounds": row["rounds"], "holders": holders, "found in round": found,
            "answer": row["answer"], "gold": row["answers"][0], "verdict": verdict, "on scratchpad": on_scratchpad}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+")
    parser.add_argument("--version", type=int, default=None,
                        help="account for the rows of this method version (default: each question's newest row)")
    parser.add_argument("--against", type=int, default=None,
                        help="also give the paired F1 difference with this version's rows of the same questions")
    parser.add_argument("--against-file", type=Path, default=None,
                        help="take the --against rows from this run file (another arm, e.g. another layout), not "
                             "from the file accounted for")
    parser.add_argument("--lost-to", type=Path, default=None,
                        help="also count the classes of the questions that score below this run file's rows of the "
                             "same ids (another method on the same cell, e.g. Direct Input's)")
    args = parser.parse_args()
    if args.against_file is not None and (args.against is None or not args.against_file.is_file()):
        parser.error("--against-file needs --against and an existing run file")
    if args.lost_to is not None and not args.lost_to.is_file():
        parser.error(f"--lost-to {args.lost_to}: no such run file")
    tokenizer = default_tokenizer()
    for file in args.files:
        every = RunFile(file).rows()
        rows = list({r["id"]: r for r in every if args.version in (None, row_version(r))}.values())
        if args.against is not None:
            other = RunFile(args.against_file).rows() if args.against_file else every
            before = {r["id"]: r["f1"] for r in other if row_version(r) == args.against}
            diffs = [100 * (r["f1"] - before[r["id"]]) for r in rows if r["id"] in before]
            if not diffs:
                sys.exit(f"{file}: no question has rows of both version {args.against} and the version accounted for; "
                         f"versions in the file: {sorted({row_version(r) for r in every})}")
            low, high = bootstrap_interval(diffs)
            print(f"{Path(file).name}: against version {args.against} on {len(diffs)} questions: "
                  f"{sum(diffs) / len(diffs):+.1f} F1 (95% interval {low:+.0f} to {high:+.0f}; "
                  f"{sum(d > 0 for d in diffs)}/{sum(d == 0 for d in diffs)}/{sum(d < 0 for d in diffs)})")
        spec = rows[0]["spec"]
        tasks = {t.id: t for t in load_tasks(spec["dataset"], spec["input_tokens"], n=spec["n"], seed=spec["seed"],
                                             tokenizer=tokenizer, progress=False, **spec["options"])}
        lines = [account(r, tasks[r["id"]], tokenizer) for r in rows if r["id"] in tasks]
        print(f"{Path(file).name}: {len(lines)} questions, mean F1 {100 * sum(x['f1'] for x in lines) / len(lines):.1f}"
              f", knobs {spec['knobs']}")
        for x in lines:
            print(f"  {x['id']}: {x['verdict']:13} rounds {x['rounds']} hops in chunks {x['holders']} posted in round "
                  f"{x['found in round']}; answered {x['answer'][:40]!r} (gold {x['gold']!r}"
                  f"{', on the scratchpad' if x['on scratchpad'] else ''})")
        print("  " + summary(lines))
        if args.lost_to is not None:
            other = {key: r["f1"] for key, r in RunFile(args.lost_to).newest().items()}
            lost = [x for x in lines if x["id"] in other and x["f1"] < other[x["id"]]]
            won = sum(x["id"] in other and x["f1"] > other[x["id"]] for x in lines)
            print(f"  lost to {args.lost_to.name} ({len(lost)} questions; {won} won): {summary(lost)}")


def summary(lines: list[dict]) -> str:
    """The classes' counts, and in how many questions of each a gold answer was on the scratchpad."""
    counts = Counter(x["verdict"] for x in lines)
    posted_answer = Counter(x["verdict"] for x in lines if x["on scratchpad"])
    return ", ".join(f"{k} {v} (answer on the scratchpad in {posted_answer[k]})" for k, v in counts.most_common())


if __name__ == "__main__":
    main()
