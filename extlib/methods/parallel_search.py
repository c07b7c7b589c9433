"""ParallelSearch, prompted, next to the sequential Search-R1 agent it extends: the agent reasons in
<think>, searches with <search>, reads <information>, and answers in <answer>. With `parallel` on, one
<search> may hold independent sub-queries separated by `##`, all retrieved in the same step; the
sequential agent searches one query per step. The search engine is BM25 over the task's own knowledge.

Both papers train the agent with reinforcement learning; here the same protocol is prompted. A trained agent
searches before it answers; the prompted 1.5B answers most questions from memory at once, so a reply that
answers (or neither answers nor searches) before `min_searches` searches is sent back once with the request
to search first (`nudged`). Recorded per question, as ParallelSearch reports: LLM turns, searches, the
decomposition ratio (share of searches with more than one sub-query), and wall time (usage).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..calls import call
from ..llm import LLMClient
from ..parsing import parse_answer
from ..retrieval import PassageSearch
from ..trace import CallRecord, Prediction, Task
from .base import Method, knob
from .search_tools import (
    FORCE,
    SearchConfig,
    conversation_tokens,
    fitting_results,
    last_tag,
    results_block,
    send_back_to_search,
    without_tags,
)

SEARCH_R1 = ("Answer the given question. You must conduct reasoning inside <think> and </think> first every time "
             "you get new information. After reasoning, if you find you lack some knowledge, you can call a "
             "search engine by <search> query </search> and it will return the top searched results between "
             "<information> and </information>. You can search as many times as your want. If you find no "
             "further external knowledge needed, you can directly provide the answer inside <answer> and "
             "</answer>, without detailed illustrations. For example, <answer> Beijing </answer>.")
PARALLEL = (" If the question has independent parts, search them in one step by separating the queries with ##, "
            "for example <search> first query ## second query </search>; they are searched in parallel.")


@dataclass
class SearchAgentConfig(SearchConfig):
    parallel: bool = knob(True, "ParallelSearch: one search may hold ##-separated sub-queries; False = Search-R1")
    max_turns: int = knob(4, "searching turns before the answer is forced")
    max_subqueries: int = knob(4, "sub-queries read from one search")


class SearchAgent(Method):
    name = "parallelsearch"
    version = 1

    config_class = SearchAgentConfig

    def __init__(self, config: SearchAgentConfig | None = None, **knobs) -> None:
        super().__init__(config, **knobs)
        if not self.config.parallel:
            self.name = "search-r1"

    async def arun(self, task: Task, llm: LLMClient, reasoning_llm: LLMClient | None = None) -> Prediction:
        cfg = self.config
        search = PassageSearch.from_task(task, llm.tokenizer, cfg.passage_tokens, cfg.input_tokens)
        messages = [{"role": "user", "content": SEARCH_R1 + (PARALLEL if cfg.parallel else "") +
                     f"\nQuestion: {task.question}\n"}]
        calls: list[CallRecord] = []
        subqueries: list[int] = []  # sub-queries of each search step
        stalled = False  # a reply with neither a search nor an answer: ask for the answer
        nudged = False
        full = False  # the last retrieved block was cut to fit the window: answer now
        passages_cut = 0
        for turn in range(1, cfg.max_turns + 2):
            used = conversation_tokens(llm, messages)
            forced = stalled or full or turn > cfg.max_turns or used + cfg.max_tokens > cfg.context_window
            if forced:
                messages.append({"role": "user", "content": FORCE})
            text, record = await call(llm, messages, cfg.max_tokens, "answer" if forced else "agent", turn,
                                      stop=["</search>", "</answer>"])
            calls.append(record)
            stats = {"turns": len(calls), "searches": len(subqueries), "subqueries": subqueries, "nudged": int(nudged),
                     "decomposition_ratio": sum(n > 1 for n in subqueries) / len(subqueries) if subqueries else 0.0,
                     "passages_cut": passages_cut}
            if text is None:
                return Prediction(task.id, "", turn, calls, error=f"turn {turn} failed: {record.error}", extra=stats)
            answer = last_tag(text, "answer")
            query = None if forced else last_tag(text.split("<answer>")[0], "search")
            if query is None and not forced and not nudged and len(subqueries) < cfg.min_searches:
                nudged = True
                send_back_to_search(messages, text)
                continue
            if answer is not None or forced:
                return Prediction(task.id, answer or parse_answer(without_tags(text)) or "", turn, calls, extra=stats)
            if query is None:
                stalled = True
                messages.append({"role": "assistant", "content": text})
                continue
            parts = [q.strip() for q in query.split("##") if q.strip()] if cfg.parallel else [query]
            parts = parts[:cfg.max_subqueries]
            subqueries.append(len(parts))
            found = list(dict.fromkeys(i for q in parts for i in search.search(q, cfg.top_k)))
            messages.append({"role": "assistant", "content": text.split("</search>")[0] + "</search>"})
            # room for the block, the forced-answer request and the answer itself
            room = cfg.context_window - cfg.max_tokens - conversation_tokens(
                llm, messages + [{"role": "user", "content": ""}, {"role": "user", "content": FORCE}])
            passages = fitting_results(llm, [search.passages[i] for i in found], room)
            full = len(passages) < len(found)
            passages_cut += len(found) - len(passages)
            messages.append({"role": "user", "content": "<information>" + results_block(passages) + "</information>"})
        raise AssertionError("unreachable: the last turn is forced to answer")
