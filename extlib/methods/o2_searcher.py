"""O2-Searcher, prompted: the agent thinks (<think>), searches with up to 5 queries a round (<search> holding
<query> tags), and answers (<answer>). Each round's results are condensed into short learnings by a separate
call, and the agent reads the learnings instead of the raw passages, so its context grows slowly.
Closed-ended questions get a short answer; open-ended ones a Markdown list of findings.

O2-Searcher trains the agent with reinforcement learning and searches the web; here the protocol is prompted
and the search engine is BM25 over the task's own knowledge. As for the other search agents, a reply that
answers (or neither answers nor searches) before `min_searches` search rounds is sent back once with the
request to search first (`nudged`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from ..calls import call
from ..llm import LLMClient
from ..parsing import parse_answer
from ..retrieval import PassageSearch
from ..trace import CallRecord, Prediction, Task
from .base import Method, knob
from .search_tools import (
    FORCE,
    SearchConfig,
    all_tags,
    conversation_tokens,
    fitting_results,
    last_tag,
    results_block,
    send_back_to_search,
    without_tags,
)

AGENT = ("You answer a question by searching a knowledge source. Each turn, first think inside <think> and "
         "</think>. Then either search with up to {max_queries} queries, written as <search><query>first query"
         "</query><query>second query</query></search>, or, when what you have learned is enough, answer inside "
         "<answer> and </answer>. {answer_style}\nQuestion: {question}\n")
CLOSED = "The answer is a short phrase, for example <answer> Beijing </answer>."
OPEN = "The answer is a Markdown list of the findings that answer the question, one finding per line."
CONDENSE = ("Question: {question}\nSearch queries: {queries}\n\nSearch results:\n{results}\n\nWrite the learnings "
            "from these results that help answer the question, as short bullet points with names and numbers. "
            "If nothing helps, write NONE.")


@dataclass
class O2SearcherConfig(SearchConfig):
    open_ended: bool = knob(False, "answer with a Markdown list of findings instead of a short phrase")
    max_queries: int = knob(5, "queries per search round")
    max_rounds: int = knob(4, "search rounds before the answer is forced")


class O2Searcher(Method):
    name = "o2-searcher"
    version = 1

    config_class = O2SearcherConfig

    async def arun(self, task: Task, llm: LLMClient, reasoning_llm: LLMClient | None = None) -> Prediction:
        cfg = self.config
        search = PassageSearch.from_task(task, llm.tokenizer, cfg.passage_tokens, cfg.input_tokens)
        messages = [{"role": "user", "content": AGENT.format(
            max_queries=cfg.max_queries, answer_style=OPEN if cfg.open_ended else CLOSED, question=task.question)}]
        calls: list[CallRecord] = []
        queries_per_round: list[int] = []
        stalled = False  # a reply with neither a search nor an answer: ask for the answer
        nudged = False
        passages_cut = 0
        for turn in range(1, cfg.max_rounds + 2):
            used = conversation_tokens(llm, messages)
            forced = stalled or turn > cfg.max_rounds or used + 2 * cfg.max_tokens > cfg.context_window
            if forced:
                messages.append({"role": "user", "content": FORCE})
            text, record = await call(llm, messages, cfg.max_tokens, "answer" if forced else "agent", turn,
                                      stop=["</search>", "</answer>"])
            calls.append(record)
            stats = {"rounds": len(queries_per_round), "queries_per_round": queries_per_round, "nudged": int(nudged),
                     "passages_cut": passages_cut}
            if text is None:
                return Prediction(task.id, "", turn, calls, error=f"turn {turn} failed: {record.error}", extra=stats)
            answer = last_tag(text, "answer")
            before = text.split("<answer>")[0]
            queries = [] if forced else (all_tags(before + "</query>", "query") or [  # untagged: one query a line
                line.strip() for line in (last_tag(before, "search") or "").splitlines() if line.strip()])
            queries = queries[:cfg.max_queries]
            if not queries and not forced and not nudged and len(queries_per_round) < cfg.min_searches:
                nudged = True
                send_back_to_search(messages, text)
                continue
            if answer is not None or forced:
                return Prediction(task.id, answer or parse_answer(without_tags(text)) or "", turn, calls, extra=stats)
            if not queries:
                stalled = True
                messages.append({"role": "assistant", "content": text})
                continue
            queries_per_round.append(len(queries))
            found = list(dict.fromkeys(i for q in queries for i in search.search(q, cfg.top_k)))
            condense = partial(CONDENSE.format, question=task.question, queries="; ".join(queries))
            # five queries' passages can exceed a small window: condense what fits
            room = cfg.context_window - cfg.max_tokens - conversation_tokens(
                llm, [{"role": "user", "content": condense(results="")}])
            passages = fitting_results(llm, [search.passages[i] for i in found], room)
            passages_cut += len(found) - len(passages)
            learned, record = await call(llm, condense(results=results_block(passages)), cfg.max_tokens, "condense",
                                         turn)
            calls.append(record)
            messages += [{"role": "assistant", "content": text.split("</search>")[0] + "</search>"},
                         {"role": "user", "content": f"<learnings>\n{(learned or 'NONE').strip()}\n</learnings>"}]
        raise AssertionError("unreachable: the last round is forced to answer")
