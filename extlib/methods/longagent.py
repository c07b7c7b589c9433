"""LongAgent (Zhao et al., 2024): a leader who never sees the document instructs members, each holding one
chunk, over rounds; members answer each instruction from their chunk; when members disagree, the
disagreeing members read each other's chunks together and settle which answer the text supports (the
paper's inter-member communication against hallucination); the leader answers when it can.

Deviations: the paper fine-tunes its members; here all agents are prompted. Disagreement is detected on
normalized answers and only the two largest groups are reconciled (one call per pair, at most
`max_conflicts` pairs a round), which bounds the cost on small models that word the same answer many ways.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ..budget import CHAT_OVERHEAD_TOKENS, require_fit
from ..calls import call
from ..chunking import chunk_text
from ..errors import UserError
from ..fan_out import fan_out
from ..llm import LLMClient
from ..metrics import normalize_answer
from ..parsing import is_no_information, labeled_line, parse_answer
from ..trace import CallRecord, Prediction, Task
from .base import ChunkedConfig, Method, knob

LEADER = ("You lead a team that reads a long document for you; each member holds one part of it and you "
          "cannot see it.\n\nQuestion: {question}\n\nWhat the members have reported so far:\n{history}\n\n"
          "{ask}")
ASK = ("If the reports answer the question, write `Answer: <short phrase>`. Otherwise write one line that starts "
       "with `Instruction:` and asks every member one simple question that gets you closer to the answer; do not "
       "repeat an instruction the members could not answer.")
MUST = "Answer now from the reports: reason in one sentence, then write a last line `Answer: <short phrase>`."
MEMBER = ("{chunk}\n\nFrom the text above only, answer: {instruction}\nIf the text does not say, write NONE. "
          "Otherwise answer in one short sentence with names.")
RESOLVE = ("Two readers disagree about a question.\n\nText A:\n{chunk_a}\n\nText B:\n{chunk_b}\n\n"
           "Question: {instruction}\nReader of A says: {answer_a}\nReader of B says: {answer_b}\n\n"
           "Which statement do the texts support? Reply with the supported statement only, or NONE.")


@dataclass
class LongAgentConfig(ChunkedConfig):
    rounds: int = knob(3, "leader rounds (instruct, members answer) before the leader must answer")
    max_conflicts: int = knob(2, "member pairs reconciled per round when their answers disagree", low=0)
    member_max_tokens: int = knob(96, "tokens of each member's answer")
    leader_max_tokens: int = knob(128, "tokens of the leader's instruction or answer")

    def check(self) -> None:
        super().check()
        if 2 * self.chunk_tokens >= self.context_window:
            raise UserError(f"conflict resolution reads two chunks at once: 2 x chunk_tokens ({self.chunk_tokens}) "
                            f"must be below context_window ({self.context_window})")


class LongAgent(Method):
    name = "longagent"
    version = 1

    config_class = LongAgentConfig

    async def arun(self, task: Task, llm: LLMClient, reasoning_llm: LLMClient | None = None) -> Prediction:
        cfg, leader = self.config, reasoning_llm or llm
        fixed = CHAT_OVERHEAD_TOKENS + llm.count_tokens(RESOLVE.format(
            chunk_a="", chunk_b="", instruction=task.question, answer_a="", answer_b=""))
        require_fit(fixed + 2 * cfg.chunk_tokens + 4 * cfg.member_max_tokens, cfg.context_window,
                    f"two {cfg.chunk_tokens}-token chunks, the resolution prompt and the answers")
        chunks = chunk_text(task.knowledge, llm.tokenizer, cfg.chunk_tokens, cfg.input_tokens, cfg.truncate,
                            cfg.paragraphs)
        history: list[str] = []
        calls: list[CallRecord] = []
        conflicts = 0
        for t in range(1, cfg.rounds + 1):
            final = t == cfg.rounds
            ask = MUST if final else ASK
            text, record = await call(leader, LEADER.format(question=task.question, history="\n".join(history)
                                                            or "(nothing yet)", ask=ask), cfg.leader_max_tokens,
                                      "leader", t)
            calls.append(record)
            if text is None:
                return Prediction(task.id, "", t, calls, error=f"leader failed: {record.error}")
            answer = parse_answer(text, answer_line=not final)  # a forced reply without the line: its first line
            instruction = labeled_line(text, "instruction")
            if instruction and "<" in instruction:  # a copied placeholder is no instruction
                instruction = None
            if answer is not None or final or not instruction:
                if answer is None and not final:  # no instruction and no answer: make it answer
                    continue
                return Prediction(task.id, answer or "", t, calls, extra={"conflicts_resolved": conflicts})
            results = await fan_out([call(llm, MEMBER.format(chunk=c, instruction=instruction), cfg.member_max_tokens,
                                          "member", t, i) for i, c in enumerate(chunks)],
                                    f"{task.id} round {t}: members", progress=self.progress)
            calls += [r for _, r in results]
            said = {i: text.strip() for i, (text, _) in enumerate(results)
                    if text is not None and text.strip() and not is_no_information(text) and
                    not text.strip().upper().startswith("NONE")}
            groups: dict[str, list[int]] = defaultdict(list)
            for i, statement in said.items():
                groups[normalize_answer(statement)].append(i)
            big = sorted(groups.values(), key=len, reverse=True)
            if len(big) > 1 and cfg.max_conflicts:
                pairs = list(zip(big[0], big[1]))[:cfg.max_conflicts]
                settled = await fan_out([call(llm, RESOLVE.format(
                    chunk_a=chunks[a], chunk_b=chunks[b], instruction=instruction, answer_a=said[a],
                    answer_b=said[b]), cfg.member_max_tokens, "resolve", t, a) for a, b in pairs],
                    f"{task.id} round {t}: resolving", progress=self.progress)
                calls += [r for _, r in settled]
                conflicts += len(pairs)
                for (a, b), (text, _) in zip(pairs, settled):
                    if text is None:
                        continue  # unresolved: both statements stay
                    keep = text.strip()
                    if keep.upper().startswith("NONE"):
                        said.pop(a, None)
                        said.pop(b, None)
                    else:
                        said[a] = said[b] = keep
            reports = list(dict.fromkeys(said.values()))
            history.append(f"Instruction {t}: {instruction}\n" + ("\n".join(f"- {r}" for r in reports)
                                                                   or "- no member found anything"))
        raise AssertionError("unreachable: the last round always answers")

