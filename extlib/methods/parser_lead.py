"""PARSER, prompted: a lead agent broadcasts a query to every chunk's subagent in parallel each round,
aggregates the evidence they return, and either answers or writes a deeper follow-up query conditioned on
what was found, for at most R rounds.

PARSER trains its lead agent with reinforcement learning; training is out of reach on a CPU, so this is the
inference protocol with a prompted lead. Evidence is kept only when most of its words occur in the
subagent's own chunk (the grounding check ExtAgents used before its version 2), and the lead sees as much
evidence as fits its window, ranked by BM25 against the question.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..budget import CHAT_OVERHEAD_TOKENS, greedy_within, require_fit
from ..calls import call
from ..chunking import chunk_text
from ..fan_out import fan_out
from ..grounding import grounding
from ..llm import LLMClient
from ..parsing import is_no_information, labeled_line, parse_answer
from ..retrieval import bm25_scores
from ..trace import CallRecord, Prediction, Task
from ..words import content_words
from .base import ChunkedConfig, Method, knob

SUBAGENT = ("{chunk}\n\nFind evidence in the text above for this query: {query}\nCopy or closely restate the "
            "sentences that answer it, with names. If the text has nothing on it, write NONE.")
LEAD = ("You answer a question using evidence that readers of a long document return for your queries.\n\n"
        "Question: {question}\n\nEvidence so far:\n{evidence}\n\nQueries asked so far: {queries}\n\n{ask}")
ASK = ("If the evidence answers the question, write `Answer: <short phrase>`. Otherwise write one line that starts "
       "with `Query:` and asks for the missing fact, using names from the evidence.")
MUST = "Answer now: reason in one sentence, then write a last line `Answer: <short phrase>`."


@dataclass
class ParserConfig(ChunkedConfig):
    rounds: int = knob(3, "R, scatter-gather rounds before the lead must answer")
    grounding: float = knob(0.75, "least share of a reply's new words found in its chunk for it to count as "
                            "evidence", low=0.0, high=1.0)
    evidence_max_tokens: int = knob(160, "tokens of each subagent's evidence")
    lead_max_tokens: int = knob(128, "tokens of the lead's query or answer")


class ParserPrompted(Method):
    name = "parser"
    version = 1

    config_class = ParserConfig

    async def arun(self, task: Task, llm: LLMClient, reasoning_llm: LLMClient | None = None) -> Prediction:
        cfg, lead = self.config, reasoning_llm or llm
        fixed = CHAT_OVERHEAD_TOKENS + llm.count_tokens(SUBAGENT.format(chunk="", query=task.question))
        require_fit(fixed + cfg.chunk_tokens + cfg.evidence_max_tokens, cfg.context_window,
                    f"a {cfg.chunk_tokens}-token chunk, the subagent prompt and its evidence")
        chunks = chunk_text(task.knowledge, llm.tokenizer, cfg.chunk_tokens, cfg.input_tokens, cfg.truncate,
                            cfg.paragraphs)
        evidence: list[str] = []
        queries = [task.question]  # round 1 broadcasts the question itself
        calls: list[CallRecord] = []
        room = cfg.context_window - CHAT_OVERHEAD_TOKENS - cfg.lead_max_tokens - llm.count_tokens(
            LEAD.format(question=task.question, evidence="", queries="", ask=ASK)) - 64
        for t in range(1, cfg.rounds + 1):
            results = await fan_out([call(llm, SUBAGENT.format(chunk=c, query=queries[-1]), cfg.evidence_max_tokens,
                                          "subagent", t, i) for i, c in enumerate(chunks)],
                                    f"{task.id} round {t}: subagents", progress=self.progress)
            calls += [r for _, r in results]
            query_words = content_words(queries[-1])
            for i, (text, record) in enumerate(results):
                if text is None or is_no_information(text) or text.strip().upper().startswith("NONE"):
                    continue
                words = content_words(text) - query_words
                support = grounding(words, chunks[i])
                if support < cfg.grounding:
                    record.dropped = f"ungrounded: {support:.2f} of its words are in the chunk"
                elif text.strip() not in evidence:
                    evidence.append(text.strip())
            scores = bm25_scores(task.question, evidence)
            ranked = [evidence[i] for i in sorted(range(len(evidence)), key=lambda i: -scores[i])]
            shown = "\n".join(f"- {e}" for e in greedy_within(ranked, lambda e: llm.count_tokens(e) + 2, room))
            for ask in (MUST,) if t == cfg.rounds else (ASK, MUST):  # MUST again only if it neither asked nor answered
                text, record = await call(lead, LEAD.format(question=task.question, evidence=shown or "(none yet)",
                                                            queries="; ".join(queries), ask=ask),
                                          cfg.lead_max_tokens, "lead", t)
                calls.append(record)
                if text is None:
                    return Prediction(task.id, "", t, calls, error=f"lead failed: {record.error}")
                answer, query = parse_answer(text, answer_line=ask is not MUST), labeled_line(text, "query")
                if answer is not None or ask is MUST:
                    return Prediction(task.id, answer or "", t, calls,
                                      extra={"queries": queries, "evidence": len(evidence)})
                if query is not None and "<" not in query and query not in queries:  # not a copied placeholder
                    queries.append(query)
                    break
        raise AssertionError("unreachable: the last round always answers")

