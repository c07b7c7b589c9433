import re

import openai
import pytest

from extlib import ExtAgents, PromptTooLong, Task
from extlib.agents import LEADS_TOKENS
from extlib.budget import CHAT_OVERHEAD_TOKENS, greedy_within
from extlib.methods import kar_schedule
from extlib.methods.extagents import ABLATION_VARIANTS, ablation_variant
from extlib.testing import scripted_client

FILLER = "The sea was grey and the gulls were loud over the harbour. "
HOP1 = "The lighthouse keeper Ezra Holloway was born in the village of Marrowby. "
HOP2 = "The village of Marrowby lies in the county of Westmarch. "
QUESTION = "In which county was the lighthouse keeper Ezra Holloway born?"


def document(chunk_bytes: int = 400, chunks: int = 6) -> str:
    """Hop 1 in chunk 1, hop 2 in chunk 4: the second hop is only findable once Marrowby is known."""
    parts = []
    for i in range(chunks):
        body = (FILLER * (chunk_bytes // len(FILLER) + 1))
        fact = HOP1 if i == 1 else HOP2 if i == 4 else ""
        parts.append((fact + body)[:chunk_bytes])
    return "".join(parts)


def two_hop_reader(prompt: str) -> str:
    """A scripted model: extracts a fact only if it is related to the question or to shared findings."""
    if "How useful" in prompt:
        return "Score: 90" if "Marrowby" in prompt else "Score: 10"
    if prompt.startswith("Facts found"):
        facts = prompt.split("Question:")[0]
        if "Westmarch" in facts and "Ezra" in facts:
            return "Ezra was born in Marrowby, which lies in Westmarch.\nAnswer: Westmarch"
        return "The facts do not say.\nAnswer: NO ANSWER"
    text = prompt.split("Text:\n", 1)[1].split("\n\n", 1)[0]
    shared = prompt.split("Facts found so far:\n", 1)[1].split("\n\n")[0] if "so far" in prompt else ""
    if "Ezra Holloway" in text:
        return HOP1.strip()
    if "Marrowby lies" in text and "Marrowby" in shared:
        return HOP2.strip()
    return "NO INFORMATION"


def run(responder=two_hop_reader, delay_s=0.0, **knobs):
    llm = scripted_client(responder, delay_s=delay_s)
    knobs = {"chunk_tokens": 400, "context_window": 2000, "rating": "llm", **knobs}
    task = Task("t1", QUESTION, document(), ["Westmarch"])
    return ExtAgents(**knobs).run(task, llm), llm._client


def test_kar_schedule_doubles_then_takes_all():
    assert kar_schedule(1) == [1]
    assert kar_schedule(4) == [1, 2, 4]
    assert kar_schedule(5) == [1, 2, 4, 5]
    assert kar_schedule(0) == [0]


def test_top_k_within_takes_the_best_messages_that_fit_and_skips_a_misfit():
    size = {"a": 3, "b": 3, "c": 5, "d": 1}.get
    assert greedy_within(["a", "b", "c", "d"], size, 8) == ["a", "b", "d"]
    assert greedy_within(["a", "b"], {"a": 9, "b": 2}.get, 8) == ["b"]
    assert greedy_within(["a"], {"a": 9}.get, 8) == []


def test_gks_finds_the_second_hop_in_round_two():
    prediction, backend = run(guards="small-model")
    assert prediction.answer == "Westmarch"
    assert prediction.rounds == 2
    seeks = [c for c in prediction.calls if c.role == "seek"]
    assert [c.round for c in seeks] == [1] * 6 + [2] * 6
    assert sorted(c.chunk for c in seeks if c.round == 1) == list(range(6))
    assert next(c for c in seeks if c.round == 2 and c.chunk == 1).dropped == (  # it repeats what it was shown
        "echoes the question or the messages it was shown")
    round2_chunk4 = next(c for c in seeks if c.round == 2 and c.chunk == 4)
    assert round2_chunk4.output == HOP2.strip()
    rates = [c for c in prediction.calls if c.role == "rate"]
    assert [(c.round, c.chunk, c.score) for c in rates] == [(1, 1, 90.0), (2, 4, 90.0)]  # chunk 1 only repeated
    reasons = [c for c in prediction.calls if c.role == "reason"]
    # round 2 does not ask again over round 1's one message (same prompt, same reply): it starts at step 2
    assert [(c.round, c.step) for c in reasons] == [(1, 1), (2, 2)]
    assert reasons[-1].output.endswith("Westmarch")
    assert all(c.end >= c.start and c.error is None for c in prediction.calls)
    # what GKS broadcast in each round, and the ranking KAR read after it
    assert prediction.extra == {"broadcast": [[], [1]], "ranking": [[1], [1, 4]]}


def village_answerer(prompt: str) -> str:
    """The 1.5B model's habit: shown the first hop alone, it answers the village to 'In which county ...?'."""
    if prompt.startswith("Facts found") and "Westmarch" not in prompt.split("Question:")[0]:
        return "Ezra Holloway was born in Marrowby.\nAnswer: Marrowby"
    return two_hop_reader(prompt)


def test_the_evidence_guards_take_an_answer_only_once_every_agent_whose_chunk_names_it_has_seen_it():
    prediction, _ = run(village_answerer, guards="evidence")
    reasons = [c for c in prediction.calls if c.role == "reason"]
    assert reasons[0].round == 1 and reasons[0].output.endswith("Answer: Marrowby")
    assert reasons[0].dropped.startswith("chunk 4's agent has not seen the answer")
    assert prediction.rounds == 2 and prediction.answer == "Westmarch"
    round2_chunk4 = next(c for c in prediction.calls if c.role == "seek" and c.round == 2 and c.chunk == 4)
    assert round2_chunk4.posted is None and round2_chunk4.dropped is None  # the bridge, posted once GKS showed hop 1
    # the small-model guards take the village at once: a message states it
    small, _ = run(village_answerer, guards="small-model")
    assert small.rounds == 1 and small.answer == "Marrowby"


def misattributing_reader(prompt: str) -> str:
    """The 1.5B model's round 1 on a second hop: it gives the question's person the county its note gives the
    village; shown the first hop in round 2, it writes NONE."""
    text = prompt.split("Text:\n", 1)[1].split("\n\n", 1)[0] if "Text:\n" in prompt else ""
    if "Marrowby lies" in text:
        return "NONE" if "so far" in prompt else "Ezra Holloway was born in the county of Westmarch."
    return two_hop_reader(prompt)


@pytest.mark.parametrize("guards, bridge_posted", [("evidence", True), ("small-model", False)])
def test_the_evidence_guards_hold_a_second_hop_found_before_its_chain_and_post_it_once_gks_joins_it(guards,
                                                                                                  bridge_posted):
    prediction, _ = run(misattributing_reader, guards=guards)
    chunk4 = {c.round: c for c in prediction.calls if c.role == "seek" and c.chunk == 4}
    assert chunk4[1].output.startswith("Ezra Holloway was born in the county of Westmarch")
    assert chunk4[2].output == "NONE" and prediction.rounds == 2
    if bridge_posted:  # round 1 anchored it to its note, which no chain joined; round 2 showed hop 1, which does
        assert chunk4[1].dropped.startswith("names nothing the question or the messages shown name")
        assert chunk4[2].posted == HOP2.strip() and chunk4[2].dropped is None
        assert prediction.answer == "Westmarch"
    else:  # the small-model guards drop the misattribution and hold nothing
        assert chunk4[2].posted is None and prediction.answer != "Westmarch"


def test_an_answer_no_other_chunk_names_is_taken_in_round_one():
    from extlib.guards import make_guards

    refuse = make_guards("evidence").refusal([HOP1, FILLER, HOP2], {0: [], 1: [], 2: []}, {0: HOP1})
    assert refuse("Marrowby", [HOP1], QUESTION).startswith("chunk 2's agent")  # it names Marrowby, has seen nothing
    assert refuse("Westmarch", [HOP1], QUESTION) == "answer not stated by the messages on a chain from the question"
    assert refuse("Marrowby in Kent", [HOP1], QUESTION).startswith("chunk 2's agent")  # Kent is joined, no message's
    shown = make_guards("evidence").refusal([HOP1, FILLER, HOP2], {0: [], 1: [], 2: [HOP1]}, {0: HOP1})
    assert shown("Marrowby", [HOP1], QUESTION) is None  # chunk 2's agent is shown hop 1 this round
    alone = make_guards("evidence").refusal([HOP1 + HOP2, FILLER], {0: [], 1: []}, {0: HOP1 + HOP2})
    assert alone("Westmarch", [HOP1 + HOP2], QUESTION) is None
    assert make_guards("small-model").refusal([HOP1, HOP2], {0: [], 1: []}, {0: HOP1})("Marrowby", [HOP1],
                                                                                       QUESTION) is None


def test_a_kar_step_over_messages_read_without_an_answer_is_skipped_with_the_small_model_guards_only():
    from extlib.guards import Guards
    from extlib.methods.extagents import Scratchpad

    llm = scripted_client(lambda p: "x")
    for skip in (True, False):
        pad = Scratchpad(llm, "q?", Guards(skip_repeats=skip))
        pad.read_without_answer(["hop 1"])
        assert pad.read_before(["hop 1"]) is skip and not pad.read_before(["hop 1", "hop 2"])
    paper = ExtAgents(prompt_set="paper", guards="none")
    assert ExtAgents().config.chosen_guards.skip_repeats  # the paper's KAR asks every step
    assert not paper.config.chosen_guards.skip_repeats


def test_the_guards_are_chosen_by_their_own_knob_not_by_the_prompt_set():
    from extlib.guards import ANCHOR_FLOOR, MIN_GROUNDING, Guards

    assert ExtAgents(prompt_set="paper").config.chosen_guards == ExtAgents().config.chosen_guards == Guards(
        skip_repeats=True, anchor=ANCHOR_FLOOR, connected=True, subject=True, hold=True, synced_answers=True,
        forced_stated=True)
    assert ExtAgents(guards="small-model").config.chosen_guards == Guards(MIN_GROUNDING, links=True, skip_repeats=True)
    assert ExtAgents(guards="none").config.chosen_guards == Guards()  # the paper's loop: no guard at any point
    assert ExtAgents(guards="none", grounding=0.5).config.chosen_guards == Guards(0.5)
    assert ExtAgents(guards="small-model", grounding=0.0, links=False).config.chosen_guards == Guards(
        skip_repeats=True)


def test_a_round_one_that_posts_nothing_is_followed_by_one_that_asks_about_what_the_question_asks():
    """A 1.5B model replies NONE to round 1's request for related facts from a chunk that names the question's
    person; asked in round 2 what the text says about what the question asks, it states the first hop."""
    def shy_reader(prompt: str) -> str:
        if "What does the text say about" not in prompt and not prompt.startswith(("Facts found", "How useful")):
            return "NONE"
        return two_hop_reader(prompt)

    prediction, backend = run(shy_reader, guards="evidence")
    assert prediction.answer == "Westmarch" and prediction.rounds == 3
    assert any("say about the person or thing the question asks about?" in p for p in backend.prompts)


def test_without_gks_the_second_hop_is_never_found_and_the_last_round_must_answer():
    prediction, backend = run(gks=False, rounds=3)
    assert prediction.answer == ""
    assert prediction.rounds == 2  # round 2 added nothing new, so the reasoning agent had to answer
    final = [p for p in backend.prompts if p.startswith("Facts found")][-1]
    assert "best answer" in final and "NO ANSWER" not in final


def test_kar_reads_top_1_then_2_then_4_until_an_answer():
    def reader(prompt):
        if prompt.startswith("Facts found"):
            n = prompt.count("\n- clue")
            return "Answer: seven" if n >= 3 else "Answer: NO ANSWER"
        if "How useful" in prompt:
            digit = re.search(r"clue (\d)", prompt).group(1)
            return f"Score: {digit}0"
        chunk = prompt.split("Text:\n", 1)[1][:400]
        return f"clue {chunk[0]}" if chunk[0].isdigit() else "NO INFORMATION"
    llm = scripted_client(reader)
    text = "".join(str(i) * 400 for i in range(1, 6))
    method = ExtAgents(chunk_tokens=400, context_window=2000, grounding=0.0, guards="small-model")
    prediction = method.run(Task("k", "q?", text), llm)
    steps = [c.step for c in prediction.calls if c.role == "reason"]
    assert steps == [1, 2, 4]
    assert prediction.answer == "seven" and prediction.rounds == 1
    best_first = [p for p in llm._client.prompts if p.startswith("Facts found")][0]
    assert "clue 5" in best_first  # ranked by the 0-100 score, highest first


def inventive_reader(prompt: str) -> str:
    """Like two_hop_reader, but chunks that never mention Ezra make up a birthplace for him."""
    text = prompt.split("Text:\n", 1)[1].split("\n\n", 1)[0] if "Text:" in prompt else ""
    if text and "Ezra" not in text and "Marrowby" not in text:
        return "Ezra Holloway was born in London."
    if prompt.startswith("Facts found") and "London" in prompt:
        return "Answer: London"
    return two_hop_reader(prompt)


def test_invented_facts_are_dropped_by_the_grounding_check_and_kept_in_the_trace():
    prediction, _ = run(inventive_reader, guards="small-model")
    assert prediction.answer == "Westmarch"
    dropped = [c for c in prediction.calls if c.dropped]
    assert {c.chunk for c in dropped if c.round == 1} == {0, 2, 3, 5}
    assert all(c.dropped == "names what its chunk does not: ezra, holloway, london" for c in dropped if c.round == 1)
    unchecked, _ = run(inventive_reader, grounding=0.0, guards="small-model")
    assert unchecked.answer == "London"  # without the check the invented fact wins the first KAR step


def guessing_reasoner(prompt: str) -> str:
    """Like two_hop_reader, but the reasoning agent guesses a county when it knows only the first hop."""
    if prompt.startswith("Facts found") and "Westmarch" not in prompt:
        return "He was born in Marrowby, which is in the county of Northumberland. Answer: Northumberland"
    return two_hop_reader(prompt)


def test_an_answer_the_messages_do_not_state_does_not_halt_reasoning():
    prediction, _ = run(guessing_reasoner, guards="small-model")
    assert prediction.answer == "Westmarch" and prediction.rounds == 2
    first = [c for c in prediction.calls if c.role == "reason"][0]
    assert first.dropped == "answer not stated by the messages"
    unchecked, _ = run(guessing_reasoner, grounding=0.0, guards="small-model")
    assert unchecked.answer == "Northumberland" and unchecked.rounds == 1


@pytest.mark.parametrize("guards, answer", [("evidence", ""), ("small-model", "Northumberland"),
                                            ("none", "Northumberland")])
def test_a_forced_answer_no_message_states_is_no_answer_with_the_evidence_guards_only(guards, answer):
    prediction, _ = run(guessing_reasoner, guards=guards, gks=False, rounds=2)  # hop 2 is never found
    assert prediction.answer == answer
    forced = [c for c in prediction.calls if c.role == "reason"][-1]
    unstated = "answer not stated by the messages on a chain from the question"
    assert (forced.dropped == unstated) == (guards == "evidence")
    assert "Northumberland" in forced.output  # what the agent answered stays in the trace


def test_a_forced_answer_the_messages_state_is_taken_without_waiting_for_other_agents():
    from extlib.guards import make_guards

    refuse = make_guards("evidence").refusal([HOP1, FILLER, HOP2], {0: [], 1: [], 2: []}, {0: HOP1})
    assert refuse("Marrowby", [HOP1], QUESTION, True) is None  # no round follows in which chunk 2's agent sees it
    assert refuse("Westmarch", [HOP1], QUESTION, True) == ("answer not stated by the messages on a chain from the "
                                                           "question")


def test_an_invention_built_from_a_chunk_word_is_dropped_whether_or_not_the_agent_was_shown_the_entity():
    def inventive_later(prompt):
        text = prompt.split("Text:\n", 1)[1].split("\n\n", 1)[0] if "Text:" in prompt else ""
        if "so far" in prompt and "Ezra" not in text and "Marrowby" not in text:
            return "Ezra Holloway was born by the harbour."  # "harbour" is in every filler chunk
        return two_hop_reader(prompt)

    def round2_inventions(prediction):
        return [c for c in prediction.calls if c.role == "seek" and c.round == 2 and c.chunk in (0, 2, 3, 5)]
    unseen, _ = run(inventive_later, gks=False, guards="small-model")
    assert [c.dropped for c in round2_inventions(unseen)] == ["names what its chunk does not: ezra, holloway"] * 4
    # With GKS the agents were shown "Ezra Holloway was born in ... Marrowby": every word of the invention is
    # either shown or in the chunk, but none of the shown names is in the chunk, so nothing links the two.
    shown, _ = run(inventive_later, guards="small-model")
    assert [c.dropped for c in round2_inventions(shown)] == ["links the shown messages to nothing in its chunk"] * 4
    assert shown.answer == "Westmarch"
    assert {i for i in shown.extra["ranking"][-1]} == {1, 4}  # only the two true facts reached the scratchpad


def test_a_reply_that_echoes_its_instructions_is_still_grounded():
    def echoing(prompt):
        reply = two_hop_reader(prompt)
        if reply == HOP2.strip():
            return "The facts from the text that continue or complete the facts found so far are:\n\n" + reply
        return reply
    prediction, _ = run(echoing)
    assert prediction.answer == "Westmarch"
    assert not [c for c in prediction.calls if c.dropped and "ungrounded" in c.dropped]


def test_no_kar_reads_everything_at_once():
    prediction, _ = run(kar=False)
    assert [c.step for c in prediction.calls if c.role == "reason"] == [1, 2]


@pytest.mark.parametrize("names", [False, True])
def test_shared_messages_always_fit_the_context_window(names):
    """With `names`, every finding names new people at length, so the names a later round asks about (its {leads},
    twice in the prompt) would overflow the budget if they were not capped."""
    said = []

    def chatty(prompt):
        if "How useful" in prompt:
            return "Score: 50"
        if prompt.startswith("Facts found"):
            return "Answer: NO ANSWER"
        said.append(1)
        n = len(said)
        who = f"Bartholomew Ashdown{n} met Evangeline Whitcombe{n} and Rosalind Pemberton{n}. "
        return (who if names else "") + f"Finding number{n}. " + "A long finding. " * 20
    window = 2600
    prediction, backend = run(chatty, rounds=3, context_window=window, chunk_tokens=400, grounding=0.0,
                              guards="small-model")
    seek_prompts = [p for p in backend.prompts if "Text:\n" in p]
    assert len(seek_prompts) == 18
    assert all(len(p.encode()) + 256 + CHAT_OVERHEAD_TOKENS <= window for p in seek_prompts)
    round3 = seek_prompts[-1]
    assert 0 < round3.count("A long finding.") < 6 * 20 * 2  # some, not all, of the messages
    if names:
        asked = round3.split("What does the text say about ", 1)[1].split("?", 1)[0]
        assert asked.startswith("Bartholomew Ashdown") and len(asked.encode()) <= LEADS_TOKENS  # one token a byte
    reason_prompts = [p for p in backend.prompts if p.startswith("Facts found")]
    assert all(len(p.encode()) + 128 + CHAT_OVERHEAD_TOKENS <= window for p in reason_prompts)


def test_the_chunk_first_layout_finds_the_second_hop_too():
    prediction, backend = run(layout="chunk-first")
    assert prediction.answer == "Westmarch" and prediction.rounds == 2
    round2 = [p for p in backend.prompts if "Facts found so far" in p]
    assert round2 and all(p.startswith("Text:\n") for p in round2)


def test_the_layout_is_chosen_per_language_unless_asked():
    def layout(variant: str, **knobs) -> str:
        return ExtAgents(context_window=1024, input_tokens=4096, chunk_tokens=384, **knobs).config.layout_for(variant)

    # chosen on each language's bridge book (dev split): chunk-first tied facts-first in English, lost in Chinese
    assert [layout(v) for v in ("en", "hotpotqa", "zh")] == ["chunk-first", "chunk-first", "facts-first"]
    assert layout("zh", layout="chunk-first") == "chunk-first" and layout("en", layout="facts-first") == "facts-first"
    assert layout("en", prompt_set="paper", guards="none") == "facts-first"  # the paper's prompts keep their own


@pytest.mark.parametrize("layout", ["facts-first", "chunk-first"])
def test_pipelined_kar_asks_the_same_steps_with_the_same_messages(layout):
    """§4.3's pipeline changes when KAR's steps start, never what they read: the answer, the rounds and every
    reasoning prompt equal those of the round-by-round schedule, whatever order the agents finish in."""
    def finishing_order(prompt: str) -> float:  # agents behind the first hop finish late, reasoning is quick
        return 0.0 if prompt.startswith("Facts found") or "Ezra Holloway was" in prompt else 0.02

    knobs = {"rating": "order", "links": False, "layout": layout}
    plain, plain_backend = run(**knobs)
    piped, piped_backend = run(delay_s=finishing_order, pipeline=True, **knobs)
    assert (piped.answer, piped.rounds) == (plain.answer, plain.rounds) == ("Westmarch", 2)
    reasoning = [p for p in plain_backend.prompts if p.startswith("Facts found")]
    assert [p for p in piped_backend.prompts if p.startswith("Facts found")] == reasoning
    assert [(c.round, c.step) for c in piped.calls if c.role == "reason"] == [(1, 1), (2, 2)]
    assert sorted((c.round, c.chunk) for c in piped.calls if c.role == "seek") == \
        sorted((c.round, c.chunk) for c in plain.calls if c.role == "seek")
    first_step = next(c for c in piped.calls if c.role == "reason")
    assert first_step.end < max(c.end for c in piped.calls if c.role == "seek" and c.round == 1)  # it did overlap


def test_pipelined_kar_answers_while_later_agents_read_and_ends_the_round():
    """The first chunk holds both hops: KAR's top-1 step answers as soon as the agents ahead of it are done, and
    the slow agents' calls are cancelled (named in the trail) instead of waited for. The reasoning call has a slot
    of its own, so it is not queued behind the seeking calls waiting for one of the client's four."""
    def reader(prompt: str) -> str:
        if prompt.startswith("Facts found"):
            return "Answer: Westmarch" if "Westmarch" in prompt else "Answer: NO ANSWER"
        text = prompt.split("Text:\n", 1)[1].split("\n\n", 1)[0]
        return "Ezra was born in Marrowby, which lies in Westmarch." if "Marrowby lies" in text else "NONE"

    def slow_behind(prompt: str) -> float:
        return 0.0 if prompt.startswith("Facts found") or "Marrowby lies" in prompt else 0.5

    llm = scripted_client(reader, delay_s=slow_behind)
    knowledge = (HOP1 + HOP2 + FILLER * 6)[:400] + FILLER * 30
    knobs = {"chunk_tokens": 400, "context_window": 2000, "rating": "order", "links": False, "grounding": 0.0}
    task = Task("t", QUESTION, knowledge, ["Westmarch"])
    piped = ExtAgents(pipeline=True, guards="small-model", **knobs).run(task, llm)
    assert piped.answer == "Westmarch" and piped.rounds == 1
    assert [c.chunk for c in piped.calls if c.role == "seek"] == [0]
    assert piped.extra["cancelled"] == [[1, 2, 3, 4, 5]]
    plain = ExtAgents(guards="small-model", **knobs).run(task, scripted_client(reader))
    assert plain.answer == "Westmarch" and len([c for c in plain.calls if c.role == "seek"]) == 6


def test_pipelined_kar_never_asks_the_last_step_unforced_in_a_final_round():
    """One round (so it is final): the step over every usable message must be asked in its forced form only, as
    the round-by-round schedule asks it, even when the agents still reading turn out to add nothing."""
    def slow_behind_first_hop(prompt: str) -> float:
        return 0.0 if prompt.startswith("Facts found") or "Ezra Holloway was" in prompt else 0.02

    knobs = {"rating": "order", "links": False, "rounds": 1}
    plain, plain_backend = run(**knobs)
    piped, piped_backend = run(delay_s=slow_behind_first_hop, pipeline=True, **knobs)
    assert piped.answer == plain.answer
    reasoning = [p for p in plain_backend.prompts if p.startswith("Facts found")]
    assert [p for p in piped_backend.prompts if p.startswith("Facts found")] == reasoning
    assert len(reasoning) == 1 and "best answer" in reasoning[0]  # the forced step alone


def test_bm25_and_order_ratings_need_no_rating_calls():
    for rating in ("bm25", "order"):
        prediction, _ = run(rating=rating)
        assert prediction.answer == "Westmarch"
        assert not [c for c in prediction.calls if c.role == "rate"]


def test_exclusion_stops_reading_chunks_that_had_nothing():
    prediction, _ = run(exclusion=True, rounds=2)
    round2 = sorted(c.chunk for c in prediction.calls if c.role == "seek" and c.round == 2)
    assert round2 == [1]  # only the agent that found something reads again, so hop 2 is missed
    assert prediction.answer == ""


def test_paper_mode_runs_a_round_concurrently_and_reference_code_mode_one_at_a_time():
    _, backend = run(delay_s=0.01)
    assert backend.max_in_flight >= 4
    prediction, backend = run(delay_s=0.01, mode="reference-code")
    assert backend.max_in_flight == 1
    assert prediction.answer == "Westmarch"
    # KAR only in round 1; in round 2 a single call reads every message
    assert [(c.round, c.step) for c in prediction.calls if c.role == "reason"] == [(1, 1), (2, 2)]


def test_reference_code_mode_broadcasts_messages_in_chunk_order():
    def reader(prompt):
        if "How useful" in prompt:
            return "Score: 10" if "first" in prompt else "Score: 90"
        if prompt.startswith("Facts found"):
            return "Answer: NO ANSWER"
        return "first finding" if prompt.split("Text:\n", 1)[1].startswith("a") else "second finding"
    llm = scripted_client(reader)
    text = "a" * 400 + "b" * 400
    reference = ExtAgents(chunk_tokens=400, context_window=2000, rounds=2, mode="reference-code", grounding=0.0,
                          guards="small-model")
    reference.run(Task("r", "q?", text), llm)
    round2 = [p for p in llm._client.prompts if "so far" in p][0]
    assert round2.index("first finding") < round2.index("second finding")
    llm = scripted_client(reader)
    ExtAgents(chunk_tokens=400, context_window=2000, rounds=2, grounding=0.0, guards="small-model").run(
        Task("r", "q?", text), llm)
    round2 = [p for p in llm._client.prompts if "so far" in p][0]
    assert round2.index("second finding") < round2.index("first finding")  # by score


def test_a_failed_seeking_call_is_recorded_and_the_question_still_answers():
    failed = []

    def flaky(prompt):
        if prompt.startswith("Text:\nThe sea") and not failed:
            failed.append(1)
            raise openai.APIConnectionError(request=None)
        return two_hop_reader(prompt)
    llm = scripted_client(flaky, max_retries=0)
    prediction = ExtAgents(chunk_tokens=400, context_window=2000).run(Task("t", QUESTION, document()), llm)
    errors = [c for c in prediction.calls if c.error]
    assert len(errors) == 1 and "retries-exhausted" in errors[0].error and errors[0].round == 1
    assert prediction.answer == "Westmarch" and prediction.error is None


def test_a_retried_call_succeeds_and_records_its_attempts():
    failures = []

    def flaky(prompt):
        if "Marrowby lies" in prompt and "so far" in prompt and not failures:
            failures.append(1)
            raise openai.APITimeoutError(request=None)
        return two_hop_reader(prompt)
    llm = scripted_client(flaky, max_retries=2)
    prediction = ExtAgents(chunk_tokens=400, context_window=2000).run(Task("t", QUESTION, document()), llm)
    hop2 = next(c for c in prediction.calls if c.role == "seek" and c.round == 2 and c.chunk == 4)
    assert hop2.attempts == 2 and hop2.error is None and prediction.answer == "Westmarch"


def test_when_a_later_round_fails_entirely_the_agent_answers_from_what_was_found():
    def down_after_round_one(prompt):
        if "so far" in prompt:
            raise openai.APIConnectionError(request=None)
        return two_hop_reader(prompt)
    llm = scripted_client(down_after_round_one, max_retries=0)
    prediction = ExtAgents(chunk_tokens=400, context_window=2000).run(Task("t", QUESTION, document()), llm)
    assert prediction.error is None and prediction.rounds == 2
    last = [c for c in prediction.calls if c.role == "reason"][-1]
    assert "Marrowby" in llm._client.prompts[-1] and last.round == 2  # forced answer over round-1 findings


def test_when_every_call_fails_the_prediction_says_why():
    def down(prompt):
        raise openai.APIConnectionError(request=None)
    llm = scripted_client(down, max_retries=1)
    prediction = ExtAgents(chunk_tokens=400, context_window=2000).run(Task("t", QUESTION, document()), llm)
    assert prediction.answer == "" and "seeking calls failed" in prediction.error
    assert all("retries-exhausted" in c.error and "2 attempts" in c.error for c in prediction.calls)


def test_a_prompt_that_cannot_fit_is_rejected_before_any_call():
    llm = scripted_client(two_hop_reader)
    with pytest.raises(PromptTooLong, match="lower --chunk-tokens"):
        ExtAgents(chunk_tokens=1900, context_window=2000).run(Task("t", QUESTION, document(1900, 2)), llm)
    assert llm._client.prompts == []


@pytest.mark.parametrize("knobs, message", [
    ({"chunk_tokens": 8192, "context_window": 8192}, "must be below"),
    ({"rounds": 0}, "rounds must be a positive"),
    ({"rating": "vibes"}, "rating must be one of"),
    ({"mode": "fast"}, "mode must be one of"),
    ({"input_tokens": -5}, "input_tokens must be a positive"),
    ({"prompt_set": "huge"}, "unknown prompt set"),
    ({"grounding": 1.5}, "grounding must be between"),
    ({"layout": "sideways"}, "layout must be one of"),
    ({"pipeline": True, "rating": "bm25", "links": False}, "rating=order"),
    ({"pipeline": True, "rating": "order", "guards": "small-model"}, "links=false"),
    ({"pipeline": True, "rating": "order", "links": False, "mode": "reference-code"}, "mode=paper"),
])
def test_invalid_knobs_are_rejected_with_a_clear_message(knobs, message):
    with pytest.raises(ValueError, match=message):
        ExtAgents(**knobs)


def test_unknown_knob_is_a_type_error():
    with pytest.raises(TypeError, match="unknown ExtAgents option"):
        ExtAgents(chunk_size=10)


def test_empty_question_or_knowledge_is_rejected():
    with pytest.raises(ValueError, match="question is empty"):
        Task("t", "  ", "text")
    with pytest.raises(ValueError, match="knowledge text is empty"):
        Task("t", "q?", "")


def test_an_ablation_variant_is_named_back_from_the_knobs_its_run_file_records():
    for variant, knobs in ABLATION_VARIANTS.items():
        assert ablation_variant({"chunk_tokens": 384, "rating": "llm", **knobs}) == variant
    assert ablation_variant({"gks": True, "kar": True}) == "full"  # knobs set to their defaults
