"""Control flow of every baseline and related method, driven by a scripted LLM (never a result)."""

import re

import openai
import pytest

from extlib import Task
from extlib.methods import METHODS, Demo, PromptTooLong, UnknownKnob, knobs_for, make_method
from extlib.methods.mapreduce import parse_record
from extlib.testing import scripted_client

FILLER = "The harbour town has grey stone houses and loud gulls. " * 6
DOC = "\n\n".join([FILLER, "Tobias Wrenfield was born in the village of Kettleby.", FILLER,
                   "The village of Kettleby lies in the county of Rutland.", FILLER])
QUESTION = "In which county was Tobias Wrenfield born?"


PASSAGES = ["Tobias Wrenfield was born in Kettleby.", "Kettleby lies in the county of Rutland."] + [
    f"Gulls and stone houses {i}." for i in range(30)]


def passage_task() -> Task:
    return Task("q", QUESTION, "\n\n".join(PASSAGES), ["Rutland"], passages=PASSAGES)


def task(**extra) -> Task:
    return Task("q1", QUESTION, DOC, ["Rutland"], **extra)


def chunk_of(prompt: str) -> str:
    return prompt.split("Question:")[0]


def test_make_method_builds_every_method_and_knobs_for_gives_each_the_knobs_it_has():
    shared = knobs_for(list(METHODS), dict(chunk_tokens=256, context_window=2048, rounds=2, gks=False))
    for name in METHODS:
        method = make_method(name, **shared[name])
        assert method.name == name
    assert shared["direct"] == {"context_window": 2048} and shared["longagent"]["rounds"] == 2
    assert shared["extagents"] == {"chunk_tokens": 256, "context_window": 2048, "rounds": 2, "gks": False}
    assert make_method("search-r1").config.parallel is False and make_method("iterdrag").config.iterative
    with pytest.raises(UnknownKnob, match="search-r1 has no knob parallel; its knobs: context_window"):
        make_method("search-r1", parallel=True)  # a variant's fixed setting is not a knob
    with pytest.raises(UnknownKnob, match="no method of direct, drag has the knob chunk_tokenz; their knobs: "):
        knobs_for(["direct", "drag"], {"chunk_tokenz": 512, "max_tokens": 16})  # a typo is never dropped
    with pytest.raises(ValueError, match="unknown method 'mapreduse'"):
        make_method("mapreduse")


def test_mapreduce_drops_no_information_and_reduces_by_confidence():
    def responder(prompt: str) -> str:
        if prompt.startswith("Below are records"):
            assert "Kettleby" in prompt and "[NO INFORMATION]" not in prompt
            return "Kettleby lies in Rutland.\nAnswer: Rutland"
        text = chunk_of(prompt)
        if "Kettleby" in text:
            return (f"Extracted Information: {text.strip()[-60:]}\nRationale: it names the place\n"
                    "Answer: Kettleby\nConfidence Score: 4")
        return "Extracted Information: [NO INFORMATION]\nRationale: none\nAnswer: [NO INFORMATION]\nConfidence Score: 0"

    llm = scripted_client(responder)
    prediction = make_method("mapreduce", chunk_tokens=64, context_window=2048).run(task(), llm)
    maps = [c for c in prediction.calls if c.role == "map"]
    assert prediction.answer == "Rutland" and len(maps) == -(-len(DOC.encode()) // 64)
    assert prediction.extra["map_records_kept"] == sum(c.score == 4 for c in maps) > 0
    assert prediction.calls[-1].role == "reduce"


def test_mapreduce_collapses_groups_until_they_fit():
    def responder(prompt: str) -> str:
        if prompt.startswith("Below are records extracted from all"):
            return "Answer: Rutland"
        return ("Extracted Information: " + "a relevant fact " * 30 + "\nRationale: r\nAnswer: Rutland\n"
                "Confidence Score: 3")

    llm = scripted_client(responder)
    prediction = make_method("mapreduce", chunk_tokens=64, context_window=1400).run(task(), llm)
    collapses = [c for c in prediction.calls if c.role == "collapse"]
    assert collapses and prediction.answer == "Rutland" and prediction.extra["collapse_levels"] >= 1
    reduce_prompt = llm._client.prompts[-1]
    assert len(reduce_prompt.encode()) < 1400


def test_parse_record_reads_the_protocol():
    record = parse_record("Extracted Information: X was born in Y.\nRationale: states it\nAnswer: Y\n"
                          "Confidence Score: 5")
    assert record == {"extracted information": "X was born in Y.", "rationale": "states it", "answer": "Y",
                      "confidence score": "5"}


def test_chain_of_agents_passes_each_summary_to_the_next_worker():
    seen = []

    def responder(prompt: str) -> str:
        if prompt.startswith("The following are given passages"):
            assert f"summary {len(seen)}\n" in prompt  # the last worker's summary
            return "The summary says Rutland.\nAnswer: Rutland"
        seen.append(prompt)
        return f"summary {len(seen)}"

    llm = scripted_client(responder)
    prediction = make_method("chain-of-agents", chunk_tokens=256, context_window=2048).run(task(), llm)
    assert prediction.answer == "Rutland" and len(seen) == -(-len(DOC.encode()) // 256)
    for i in range(1, len(seen)):
        assert f"summary of the previous source text: summary {i}\n" in seen[i]


def test_longagent_resolves_conflicting_members_before_the_leader_answers():
    leader_prompts = []

    def responder(prompt: str) -> str:
        if prompt.startswith("You lead a team"):
            leader_prompts.append(prompt)
            return "Instruction: Where was Tobias Wrenfield born?" if len(leader_prompts) == 1 else "Answer: Rutland"
        if prompt.startswith("Two readers disagree"):
            return "Tobias Wrenfield was born in Kettleby."
        text = prompt.split("From the text above only")[0]
        if "Tobias" in text:
            return "Tobias Wrenfield was born in Kettleby."
        if "Kettleby lies" in text:
            return "He was born in London."  # an invented answer that conflicts
        return "NONE"

    llm = scripted_client(responder)
    prediction = make_method("longagent", chunk_tokens=128, context_window=2048).run(task(), llm)
    assert prediction.answer == "Rutland" and prediction.extra["conflicts_resolved"] == 1
    assert any(c.role == "resolve" for c in prediction.calls)
    assert "Kettleby" in leader_prompts[1] and "London" not in leader_prompts[1]


def test_drag_fills_the_window_best_passage_next_to_the_question():
    passages = [f"Passage {i} about gulls and stone." for i in range(40)] + [
        "Tobias Wrenfield was born in Kettleby, Rutland."]
    prompts = []

    def responder(prompt: str) -> str:
        prompts.append(prompt)
        return "Rutland\nextra lines are ignored"

    demo = Demo("Who built the lighthouse?", ["The lighthouse was built by Ann Hale."], "Ann Hale")
    llm = scripted_client(responder)
    prediction = make_method("drag", context_window=700, demonstrations=[demo]).run(
        Task("q", QUESTION, "\n\n".join(passages), ["Rutland"], passages=passages), llm)
    assert prediction.answer == "Rutland"
    assert prompts[0].index("Ann Hale") < prompts[0].index("Kettleby, Rutland") < prompts[0].index("Question: In")
    documents = re.findall(r"Document \[(\d+)\]: (.*)", prompts[0])
    assert "Kettleby" in documents[-1][1] and 1 < len(documents) < 41  # the best is last; the window is full
    assert len(prompts[0].encode()) <= 700


def test_iterdrag_follows_up_retrieves_and_answers():
    prompts = []

    def responder(prompt: str) -> str:
        prompts.append(prompt)
        if prompt.endswith("Intermediate answer:"):
            return "Kettleby lies in Rutland."
        if "\nFollow up: Which" in prompt:
            return "So the final answer is: Rutland."
        return "Follow up: Which county is Kettleby in?"

    llm = scripted_client(responder)
    prediction = make_method("iterdrag", context_window=2048, passages_per_step=1).run(
        passage_task(), llm)
    assert prediction.answer == "Rutland" and prediction.extra["sub_queries"] == 1
    assert [c.role for c in prediction.calls] == ["plan", "intermediate", "plan"]
    assert "Follow up: Which county is Kettleby in?\nIntermediate answer: Kettleby lies in Rutland" in prompts[-1]


def test_parser_lead_asks_a_deeper_query_and_drops_ungrounded_evidence():
    lead_prompts = []

    def responder(prompt: str) -> str:
        if prompt.startswith("You answer a question"):
            lead_prompts.append(prompt)
            if len(lead_prompts) == 1:
                return "Query: Which county is the village of Kettleby in?"
            return "Kettleby is in Rutland.\nAnswer: Rutland"
        text, query = prompt.split("Find evidence in the text above for this query: ")
        if "Tobias" in text and "Tobias" in query:
            return "Tobias Wrenfield was born in the village of Kettleby."
        if "Rutland" in text and "Kettleby" in query:
            return "The village of Kettleby lies in the county of Rutland."
        return "Tobias Wrenfield was born in Paris, France." if "Tobias" in query else "NONE"

    llm = scripted_client(responder)
    prediction = make_method("parser", chunk_tokens=64, context_window=2048, rounds=3).run(task(), llm)
    assert prediction.answer == "Rutland" and prediction.rounds == 2
    assert prediction.extra["queries"] == [QUESTION, "Which county is the village of Kettleby in?"]
    assert any(c.dropped and c.dropped.startswith("ungrounded") for c in prediction.calls)
    assert "Paris" not in lead_prompts[0] and "Kettleby" in lead_prompts[0]
    subagents = [c for c in prediction.calls if c.role == "subagent"]
    assert len(subagents) == 2 * -(-len(DOC.encode()) // 64)  # every chunk, every round, in parallel


@pytest.mark.parametrize("name", ["parallelsearch", "search-r1"])
def test_search_agents_split_sub_queries_only_in_parallel_mode(name):
    turns = []

    def responder(prompt: str) -> str:
        turns.append(prompt)
        if prompt.startswith("<information>"):
            return "<think>Found both.</think><answer> Rutland </answer>"
        return "<think>Two parts.</think><search> Tobias Wrenfield born ## Kettleby county </search>"

    llm = scripted_client(responder)
    prediction = make_method(name, context_window=4096, top_k=1).run(
        passage_task(), llm)
    assert prediction.answer == "Rutland" and prediction.extra["turns"] == 2 and prediction.extra["searches"] == 1
    if name == "parallelsearch":
        assert prediction.extra["decomposition_ratio"] == 1.0
        assert "born in Kettleby" in turns[1] and "county of Rutland" in turns[1]
    else:
        assert prediction.extra["decomposition_ratio"] == 0.0 and turns[1].count("Doc ") == 1


def test_search_agent_is_forced_to_answer_after_its_turn_limit():
    llm = scripted_client(lambda p: "<search> gulls </search>" if p != "Give the answer now inside <answer> and "
                          "</answer>." else "<answer> Rutland </answer>")
    prediction = make_method("parallelsearch", max_turns=2).run(task(), llm)
    assert prediction.answer == "Rutland" and prediction.extra["searches"] == 2 and len(prediction.calls) == 3


def test_o2_searcher_condenses_each_round_into_learnings():
    prompts = []

    def responder(prompt: str) -> str:
        prompts.append(prompt)
        if prompt.startswith("Question:"):  # the condensing call
            return "- Tobias Wrenfield was born in Kettleby.\n- Kettleby lies in Rutland."
        if prompt.startswith("<learnings>"):
            return "<think>Enough.</think><answer> Rutland </answer>"
        return ("<think>Search.</think><search>" + "".join(f"<query>q{i} Kettleby</query>" for i in range(7)) +
                "</search>")

    llm = scripted_client(responder)
    prediction = make_method("o2-searcher", context_window=4096).run(task(), llm)
    assert prediction.answer == "Rutland" and prediction.extra["queries_per_round"] == [5]  # at most 5
    assert [c.role for c in prediction.calls] == ["agent", "condense", "agent"]
    assert "Kettleby lies in Rutland" in prompts[-1] and "Doc 1" not in prompts[-1]  # learnings, not raw passages
    open_ended = make_method("o2-searcher", open_ended=True)
    assert open_ended.config.open_ended


@pytest.mark.parametrize("name", [n for n in METHODS if n not in ("extagents", "direct")])
def test_a_failing_server_gives_a_prediction_with_an_error_not_an_exception(name):
    def down(prompt: str) -> str:
        raise openai.APIConnectionError(request=None)

    knobs = knobs_for(list(METHODS), {"chunk_tokens": 64, "context_window": 2048})[name]
    prediction = make_method(name, **knobs).run(task(), scripted_client(down, max_retries=1))
    assert prediction.error and prediction.answer == "" and prediction.calls
    assert all(c.error for c in prediction.calls)


def test_windows_too_small_are_refused_with_the_reason():
    for name, knobs in [("mapreduce", {"chunk_tokens": 900}), ("chain-of-agents", {"chunk_tokens": 900}),
                        ("parser", {"chunk_tokens": 900})]:
        with pytest.raises(PromptTooLong):
            make_method(name, context_window=1000, **knobs).run(task(), scripted_client(lambda p: "x"))
    with pytest.raises(ValueError, match="two chunks at once"):
        make_method("longagent", chunk_tokens=600, context_window=1000)


def test_small_model_slips_are_handled():
    # IterDRAG: a reply that neither follows up nor concludes is asked for the final answer
    llm = scripted_client(lambda p: "Rutland." if p.endswith("So the final answer is:") else "He was born there.")
    prediction = make_method("iterdrag").run(task(), llm)
    assert prediction.answer == "Rutland" and [c.role for c in prediction.calls] == ["plan", "answer"]
    # PARSER: a copied placeholder is no query; the lead must answer instead
    def parser_reply(prompt: str) -> str:
        if prompt.startswith("You answer a question"):
            return "Answer: Rutland" if prompt.rstrip().endswith("`Answer: <short phrase>`.") else "Query: <a query>"
        return "NONE"

    prediction = make_method("parser", chunk_tokens=256, context_window=2048).run(task(), scripted_client(parser_reply))
    assert prediction.answer == "Rutland" and prediction.extra["queries"] == [QUESTION]
    # O2-Searcher: queries written as plain lines inside <search> still search
    def o2_reply(prompt: str) -> str:
        if prompt.startswith("Question:"):
            return "- Kettleby lies in Rutland."
        if prompt.startswith("<learnings>"):
            return "<answer> Rutland </answer>"
        return "<think>x</think><search>\nTobias Wrenfield birthplace\nKettleby county\n"

    prediction = make_method("o2-searcher").run(task(), scripted_client(o2_reply))
    assert prediction.answer == "Rutland" and prediction.extra["queries_per_round"] == [2]


def test_small_model_slips_of_the_answering_agents_are_handled():
    # LongAgent: a leader that copies `Answer: <short phrase>` above its instruction has not answered
    def leader_copies(prompt: str) -> str:
        if prompt.startswith("You lead a team"):
            if "Kettleby" in prompt:
                return "Answer: Rutland"
            return "Answer: <short phrase>\n\nInstruction: Where was Tobias Wrenfield born?"
        return "Tobias Wrenfield was born in Kettleby." if "Tobias" in prompt.split("From the text")[0] else "NONE"

    prediction = make_method("longagent", chunk_tokens=128, context_window=2048).run(task(), scripted_client(
        leader_copies))
    assert prediction.answer == "Rutland" and any(c.role == "member" for c in prediction.calls)
    # MapReduce: a reducer that abstains over records that answer gets their confidence-weighted vote
    def abstaining_reducer(prompt: str) -> str:
        if prompt.startswith("Below are records"):
            return "The records conflict.\nAnswer: NO ANSWER"
        if "Kettleby" in chunk_of(prompt):
            return "Extracted Information: Kettleby is in Rutland\nRationale: r\nAnswer: Rutland\nConfidence Score: 4"
        return "Extracted Information: gulls\nRationale: r\nAnswer: London\nConfidence Score: 0"  # outvoted

    prediction = make_method("mapreduce", chunk_tokens=64, context_window=2048).run(task(), scripted_client(
        abstaining_reducer))
    assert prediction.answer == "Rutland" and prediction.extra["answer_by_vote"] == 1
    rambling = make_method("mapreduce", chunk_tokens=64, context_window=2048).run(task(), scripted_client(
        lambda p: "So the records say he was born in a county." if p.startswith("Below are records") else
        abstaining_reducer(p)))  # no `Answer:` line: its first line would be scored, the vote is better
    assert rambling.answer == "Rutland" and rambling.extra["answer_by_vote"] == 1


@pytest.mark.parametrize("name", ["parallelsearch", "search-r1", "o2-searcher"])
def test_search_agents_answering_before_any_search_are_sent_back_once(name):
    def from_memory(prompt: str) -> str:  # answers at once unless told to search; searches when told
        if prompt.startswith("Question:"):  # O2-Searcher's condensing call
            return "- Kettleby lies in Rutland."
        if prompt.startswith(("<information>", "<learnings>")):
            return "<answer> Rutland </answer>"
        if prompt.startswith("Do not answer yet"):
            return "<search><query>Kettleby county</query></search>" if name == "o2-searcher" else (
                "<search> Kettleby county </search>")
        return "<think>I know this.</think><answer> London </answer>"

    prediction = make_method(name, context_window=4096).run(passage_task(), scripted_client(from_memory))
    assert prediction.answer == "Rutland" and prediction.extra["nudged"] == 1
    assert prediction.extra["searches" if name != "o2-searcher" else "rounds"] == 1
    stubborn = make_method(name, context_window=4096).run(passage_task(), scripted_client(
        lambda p: "<answer> London </answer>"))
    assert stubborn.answer == "London" and len(stubborn.calls) == 2  # sent back once, then taken
    thinking = make_method(name, context_window=4096).run(passage_task(), scripted_client(
        lambda p: from_memory(p) if not p.startswith("Answer the") and not p.startswith("You answer") else
        "<think>It is London, I believe.</think>"))  # neither answers nor searches: also told to search
    assert thinking.answer == "Rutland" and thinking.extra["nudged"] == 1
    as_published = make_method(name, context_window=4096, min_searches=0).run(passage_task(),
                                                                              scripted_client(from_memory))
    assert as_published.answer == "London" and as_published.extra["nudged"] == 0


def test_search_agent_fits_retrieved_passages_to_the_window_and_then_answers():
    def responder(prompt: str) -> str:
        if prompt.startswith("Give the answer now"):
            return "<answer> Rutland </answer>"
        return "<search> Tobias Wrenfield born ## Kettleby county ## gulls ## stone houses </search>"

    window = 1400  # bytes = tokens here: room for the prompt and a few passages, not for all sixteen
    prediction = make_method("parallelsearch", context_window=window, top_k=4, max_tokens=64).run(
        passage_task(), scripted_client(responder))
    assert prediction.error is None and prediction.answer == "Rutland"
    search, answer = prediction.calls  # a full window forces the answer at once, not at the turn limit
    assert answer.role == "answer" and 0 < prediction.extra["passages_cut"] < 16  # cut to fit, not all dropped


def test_o2_searcher_condenses_only_the_results_that_fit_the_window():
    condensed = []

    def responder(prompt: str) -> str:
        if prompt.startswith("Question:"):
            condensed.append(prompt)
            return "- Tobias Wrenfield was born in Kettleby, in Rutland."
        if "<learnings>" in prompt or prompt.startswith("Give the answer now"):
            return "<answer> Rutland </answer>"
        return "<query>Tobias Wrenfield</query><query>gulls and stone houses</query>"

    window = 700  # bytes = tokens here: the condense prompt cannot hold every passage found
    prediction = make_method("o2-searcher", context_window=window, top_k=8, max_tokens=64).run(
        passage_task(), scripted_client(responder))
    assert prediction.error is None and prediction.answer == "Rutland"
    assert prediction.extra["passages_cut"] > 0 and "Doc 1:" in condensed[0]  # cut to fit, not all dropped
    assert len(condensed[0].encode()) + 64 <= window


@pytest.mark.parametrize("name", ["extagents", "mapreduce", "chain-of-agents", "longagent", "parser"])
def test_paragraph_chunks_never_split_a_passage_between_two_agents(name):
    passages = [f"Passage {i}\n" + " ".join(f"w{i}x{k}" for k in range(40)) for i in range(6)]
    seen: list[str] = []

    def responder(prompt):  # LongAgent's leader must instruct its members first
        seen.append(prompt)
        return "Instruction: which passage?"
    task = Task("p", "Which passage?", "\n\n".join(passages))
    make_method(name, chunk_tokens=700, context_window=4096, paragraphs=True).run(task, scripted_client(responder))
    chunked = [p for p in seen if "Passage 0" in p or "Passage 5" in p]
    assert chunked
    for passage in passages:  # a passage read at all is read whole by one agent
        holders = [p for p in seen if passage.split("\n")[0] + "\n" in p]
        assert holders and all(passage in p for p in holders), passage[:12]


def test_mapreduce_asks_for_a_chinese_answer_to_a_chinese_question():
    seen: list[str] = []
    make_method("mapreduce", chunk_tokens=200, context_window=2048).run(
        Task("z", "李明远出生在哪个省？", "李明远出生于河北省。" * 10, lang="zh"),
        scripted_client(lambda p: seen.append(p) or "Answer: 河北省"))
    assert seen and all("请用中文回答" in p for p in seen)
    seen.clear()
    make_method("mapreduce", chunk_tokens=200, context_window=2048).run(
        Task("e", "Where was Li born?", "Li was born in Hebei. " * 10),
        scripted_client(lambda p: seen.append(p) or "x"))
    assert seen and not any("请用中文回答" in p for p in seen)
