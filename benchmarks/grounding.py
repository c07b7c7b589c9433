"""The grounding check on labeled seeker replies: how many true facts it drops and invented ones it keeps.

`tests/data/seeker_replies.jsonl` holds real seeking-agent replies of the bundled 1.5B model, each with the
question, the agent's chunk and the messages it was shown, labeled by reading the chunk:
  extracted  every fact the reply states is in its chunk (or in what it was shown, plus something new from the
             chunk): it belongs on the scratchpad
  invented   it states a fact its chunk does not hold (a made-up birthplace, a wrong entity)
  echo       it only restates the question or the messages it was shown, adding nothing from its chunk
A check should keep `extracted` and drop the other two.

    .venv/bin/python benchmarks/grounding.py                      # the table: false drops and keeps
    .venv/bin/python benchmarks/grounding.py harvest RUN.jsonl... # unlabeled candidates from run files

`harvest` replays each recorded ExtAgents row through the method with a client that returns the recorded
outputs, so the prompts (chunk and shown messages) are exactly those the model saw.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

FIXTURE = Path(__file__).parents[1] / "tests" / "data" / "seeker_replies.jsonl"
KEEP = {"extracted"}


def read_fixture(path: Path = FIXTURE) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def replayed_seeks(row: dict) -> list[dict]:
    """The seeking calls of one recorded ExtAgents row with the question, chunk and shown messages each saw."""
    from extlib.cells import Cell
    from extlib.chunking import chunk_text
    from extlib.datasets import default_tokenizer, load_tasks
    from extlib.testing import scripted_client

    spec = Cell(**row["spec"])
    tokenizer = default_tokenizer()
    task = load_tasks(spec.dataset, spec.input_tokens, n=None, seed=spec.seed, tokenizer=tokenizer,
                      progress=False, ids=[row["id"]], **spec.options)[0]
    method = spec.make_method()
    recorded = {("seek", c["round"], c["chunk"]): c for c in row["calls"] if c["role"] == "seek"}
    queues = {role: [c for c in row["calls"] if c["role"] == role] for role in ("rate", "reason")}
    seen: dict[int, int] = {}
    out: list[dict] = []
    cfg = method.config
    chunks = chunk_text(task.knowledge, tokenizer, cfg.chunk_tokens, cfg.input_tokens, cfg.truncate,
                        cfg.paragraphs, cfg.overlap)
    by_text = {c.strip(): i for i, c in enumerate(chunks)}

    def responder(prompt: str) -> str:
        if prompt.startswith(("Information:", "信息：")):
            return queues["rate"].pop(0)["output"] if queues["rate"] else "Score: 0"
        if prompt.startswith(("Facts found in a long text", "从一篇长文中找到的信息")):
            return queues["reason"].pop(0)["output"] if queues["reason"] else "Answer: NO ANSWER"
        head, body = ("Text:\n", "\n\nQuestion:") if prompt.startswith("Text:") else ("Text:\n", "\n\nWrite down")
        if "文本：\n" in prompt:
            head, body = "文本：\n", ("\n\n问题：" if prompt.startswith("文本") else "\n\n写下")
        chunk = prompt.split(head, 1)[1].rsplit(body, 1)[0].strip()
        i = by_text[chunk]
        seen[i] = seen.get(i, 0) + 1
        call = recorded.get(("seek", seen[i], i))
        reply = call["output"] if call and not call["error"] else "NONE"
        marker = "Facts found so far:\n" if "Facts found so far:" in prompt else "目前找到的事实：\n"
        shown = prompt.split(marker, 1)[1].split("\n\nText:\n" if marker[0] == "F" else "\n\n文本：\n", 1)[0] \
            if marker in prompt else ""
        out.append({"question": task.question, "round": seen[i], "chunk_index": i, "chunk": chunk,
                    "shown": [m.strip() for m in ("\n" + shown).split("\n- ") if m.strip()],
                    "reply": reply, "dropped_then": call.get("dropped") if call else None})
        return reply

    method.run(task, scripted_client(responder, tokenizer=tokenizer))
    source = {"dataset": spec.dataset, "input_tokens": spec.input_tokens, "seed": spec.seed, "id": row["id"]}
    return [{**source, **seek} for seek in out]


def harvest(files: list[Path], per_file: int, seed: int) -> None:
    """Print up to `per_file` candidates per run file (every round-2+ reply first, then a random draw), skipping
    NONE replies, as JSON lines to label."""
    from extlib.parsing import is_no_information

    rng = random.Random(seed)
    for path in files:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        seeks = [s for r in rows if not r["error"] for s in replayed_seeks(r)]
        seeks = [s for s in seeks if not is_no_information(s["reply"])]
        later = [s for s in seeks if s["round"] > 1]
        first = [s for s in seeks if s["round"] == 1]
        rng.shuffle(later)
        rng.shuffle(first)
        for seek in (later + first)[:per_file]:
            print(json.dumps(seek, ensure_ascii=False))


def previous_check(row: dict) -> bool:
    """Version 1's check (before issue 13), for the "before" column: kept when 0.75 of the reply's content words
    beyond those it was shown and its instructions occur in its chunk (question words counted, names of two
    letters and numbers of one or two digits ignored, Chinese compared character by character)."""
    from extlib import agents
    from extlib.grounding import grounding
    from extlib.prompts import get_prompts
    from extlib.words import content_words

    prompts = get_prompts("small", "zh" if row["dataset"].startswith("zh") else "en")
    template = content_words(agents.seek_prompt(prompts, "", "", [], row["round"]))
    words = content_words(row["reply"]) - content_words(" ".join(row["shown"])) - template
    return grounding(words, row["chunk"]) >= 0.75


GROUPS = {  # the replies the grounding check was chosen on, and those of the bridge books' dev runs
    "hotpotqa, hotpotqa-longdoc, zh-longdoc": ("hotpotqa", "hotpotqa-longdoc", "zh-longdoc"),
    "en-bridge, zh-bridge (dev)": ("en-bridge", "zh-bridge"),
}


def evidence_posts(row: dict) -> bool:
    """Whether the evidence guards post anything for the reply (their chunk's own sentences, never the reply)."""
    from extlib import agents
    from extlib.grounding import grounding_terms
    from extlib.guards import make_guards
    from extlib.prompts import get_prompts

    prompts = get_prompts("small", "zh" if row["dataset"].startswith("zh") else "en")
    template = frozenset(grounding_terms(agents.seek_prompt(prompts, "", "", [], row["round"])))
    posted, _ = make_guards("evidence").admit(row["reply"], row["chunk"], row["shown"], row["question"], template)
    return posted is not None


def evaluate(path: Path, thresholds: list[float]) -> None:
    """Per group of datasets: how many extracted replies each check drops and how many others it keeps. The evidence
    guards post their chunk's sentences, not the reply, so an invention that 'posts something' posts true sentences
    of its chunk about the question's subject (tests/test_anchoring.py checks that every posted text is the chunk's)."""
    from extlib.grounding import admission
    from extlib.guards import MIN_GROUNDING

    for group, datasets in GROUPS.items():
        rows = [r for r in read_fixture(path) if r["dataset"] in datasets]
        labels = [r["label"] for r in rows]
        good = sum(label in KEEP for label in labels)
        print(f"\n{group}: {len(rows)} labeled replies: " + ", ".join(
            f"{labels.count(k)} {k}" for k in ("extracted", "invented", "echo")))
        print("| check | false drops (extracted dropped) | false keeps (invented or echo kept) |")
        print("|---|---|---|")

        def line(name: str, keeps: list[bool], rows: list[dict] = rows, good: int = good) -> None:
            drops = sum(row["label"] in KEEP and not kept for row, kept in zip(rows, keeps))
            wrong = sum(row["label"] not in KEEP and kept for row, kept in zip(rows, keeps))
            print(f"| {name} | {drops} of {good} | {wrong} of {len(rows) - good} |")
        line("version 1 (before)", [previous_check(r) for r in rows])
        for threshold in thresholds:
            mark = " (default)" if threshold == MIN_GROUNDING else ""
            line(f"admission, support {threshold:.2f}{mark}",
                 [admission(r["reply"], r["chunk"], r["shown"], r["question"], threshold) is None for r in rows])
        line("evidence guards (something posted)", [evidence_posts(r) for r in rows])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="verb")
    grab = sub.add_parser("harvest", help="unlabeled candidates from ExtAgents run files")
    grab.add_argument("files", nargs="+", type=Path)
    grab.add_argument("--per-file", type=int, default=40)
    grab.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fixture", type=Path, default=FIXTURE)
    parser.add_argument("--thresholds", default="0,0.5,0.6,0.75,0.9")
    args = parser.parse_args(argv)
    if args.verb == "harvest":
        harvest(args.files, args.per_file, args.seed)
    else:
        evaluate(args.fixture, [float(x) for x in args.thresholds.split(",")])


if __name__ == "__main__":
    sys.exit(main())
