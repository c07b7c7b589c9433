"""Each method's behaviour as one hash: every prompt it sends and every prediction it makes on a few tasks,
driven by scripted LLMs that answer in all the ways the methods must handle (facts, NO INFORMATION, NO ANSWER,
invented facts, instructions, searches, scores). A change to prompts, parsing, selection or control flow
changes the hash; a docstring or a rename does not. tests/test_method_versions.py checks that a method whose
hash changed also got a new `version`, so rows of the old behaviour are never mixed with the new.

    .venv/bin/python -m tests.method_fingerprints --update     # after bumping a method's version
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

from extlib import Task
from extlib.methods import METHODS, knob_names, make_method
from extlib.testing import scripted_client

STORE = Path(__file__).parent / "data" / "method_fingerprints.json"
FILL = "The harbour town has grey stone houses and loud gulls. " * 6
DOC = "\n\n".join([FILL, "Tobias Wrenfield was born in the village of Kettleby.", FILL,
                   "The village of Kettleby lies in the county of Rutland.", FILL, FILL])
QUESTION = "In which county was Tobias Wrenfield born?"
PASSAGES = ["Tobias Wrenfield was born in Kettleby.", "Kettleby lies in the county of Rutland."] + [
    f"Gulls and stone houses {i}." for i in range(30)]
ZH = "\n\n".join(["港口小镇有灰色石屋和喧闹的海鸥。" * 8, "托比亚斯出生在凯特尔比村。", "港口小镇有灰色石屋。" * 8,
                  "凯特尔比村位于拉特兰郡。", "海鸥。" * 20])
TASKS = [Task("en", QUESTION, DOC, ["Rutland"]), Task("pa", QUESTION, "\n\n".join(PASSAGES), ["Rutland"],
                                                       passages=PASSAGES),
         Task("zh", "托比亚斯出生在哪个郡？", ZH, ["拉特兰郡"], lang="zh")]
SEARCH_REPLIES = ["<think>x</think><search> Kettleby ## Rutland county </search>",
                  "<think>y</think><answer> Rutland </answer>",
                  "<search><query>Wrenfield born</query><query>Kettleby county</query></search>", "I am not sure.",
                  "<think>z</think><search> Tobias Wrenfield </search>", "<answer>Kettleby</answer>", "Answer: Rutland"]
# Per method: the knob settings it is exercised with (on top of a small window and small chunks).
SETTINGS = {"extagents": [{}, {"rating": "bm25"}, {"rating": "order"}, {"gks": False}, {"kar": False},
                          {"mode": "reference-code"}, {"exclusion": True, "rounds": 3},
                          {"prompt_set": "paper", "guards": "none"},
                          {"guards": "evidence"}, {"guards": "evidence", "rating": "order"},
                          {"paragraphs": True}, {"grounding": 0.0}, {"grounding": 0.0, "mode": "reference-code"}],
            "mapreduce": [{}, {"chunk_tokens": 48}], "chain-of-agents": [{"context_window": 2048}],
            "longagent": [{"context_window": 3000, "chunk_tokens": 300}], "o2-searcher": [{}, {"open_ended": True}]}


def responder(salt: str):
    def reply(prompt: str) -> str:
        h = int(hashlib.sha1((salt + prompt).encode()).hexdigest(), 16)
        facts = [s.strip() for s in prompt.replace("\n", ". ").split(".")
                 if ("Kettleby" in s or "Rutland" in s or "凯特尔比" in s) and len(s) < 120]
        fact = facts[h % len(facts)] + "." if facts else "Nothing."
        k = h % 7
        if "Score" in prompt or "score" in prompt:
            return f"Score: {h % 101}"
        if any(w in prompt for w in ("<search>", "<information>", "<learnings>", "Give the answer now",
                                     "Do not answer yet")):
            return SEARCH_REPLIES[k]
        if h % 3 == 0:
            return "Reasoning.\nAnswer: NO ANSWER"
        return ["NO INFORMATION", "Answer: NO ANSWER",
                f"{fact}\nExtracted Information: {fact}\nRationale: r\nAnswer: Kettleby\nConfidence Score: {h % 6}",
                "Tobias Wrenfield was born in London, the capital.",
                "Instruction: Where is Kettleby?\nQuery: county of Kettleby\nFollow up: Where is Kettleby?",
                f"{fact} So the answer follows.\nAnswer: Rutland",
                f"{fact}\nAnswer: Kettleby\nSo the final answer is: Rutland"][k]
    return reply


def fingerprint(name: str) -> str:
    """sha256 over the method's prompts and predictions (answers, rounds, errors, every call); not over the
    measures a method reports in `extra`, which describe its behaviour without being it."""
    digest = hashlib.sha256()
    for settings in SETTINGS.get(name, [{}]):
        small = {"chunk_tokens": 160} if "chunk_tokens" in knob_names(name) else {}
        knobs = {"context_window": 1024, **small, **settings}
        for salt in "abc":
            for task in TASKS:
                llm = scripted_client(responder(salt))
                try:
                    p = make_method(name, **knobs).run(task, llm)
                    seen = [p.answer, p.rounds, p.error, [(c.role, c.round, c.chunk, c.step, c.prompt_tokens,
                            c.completion_tokens, c.score, c.dropped, c.output) for c in p.calls]]
                except ValueError as exc:  # e.g. PromptTooLong: the refusal is behaviour too
                    seen = [type(exc).__name__]
                digest.update(json.dumps([seen, sorted(llm._client.prompts)], ensure_ascii=False,
                                         default=str).encode())
    return digest.hexdigest()


def current() -> dict[str, dict]:
    return {name: {"version": METHODS[name][0].version, "sha256": fingerprint(name)} for name in METHODS}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--update", action="store_true", help="write the current fingerprints to " + str(STORE))
    args = parser.parse_args()
    now = current()
    if args.update:
        STORE.write_text(json.dumps(now, indent=1) + "\n")
    print(json.dumps(now, indent=1))
