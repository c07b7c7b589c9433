import pytest

from extlib.agents import reason_prompt, seek_prompt
from extlib.prompts import PROMPT_SETS, get_prompts


@pytest.mark.parametrize("prompt_set, variant", [(s, v) for s in PROMPT_SETS for v in PROMPT_SETS[s]])
def test_every_prompt_formats_with_its_fields(prompt_set, variant):
    prompts = get_prompts(prompt_set, variant)
    first = seek_prompt(prompts, "QUESTION?", "CHUNK TEXT", [], 1)
    later = seek_prompt(prompts, "QUESTION?", "CHUNK TEXT", ["FACT ONE", "FACT TWO"], 3)
    assert "CHUNK TEXT" in first and "QUESTION?" in first
    assert "CHUNK TEXT" in later and "FACT ONE" in later and "FACT TWO" in later
    assert ("3rd" in later or "第3轮" in later) if prompt_set == "paper" else True
    rate = prompts.rate.format(message="FACT", question="QUESTION?")
    assert "FACT" in rate and "Score" in rate
    ask = reason_prompt(prompts, "QUESTION?", ["FACT ONE"], must_answer=False)
    must = reason_prompt(prompts, "QUESTION?", ["FACT ONE"], must_answer=True)
    assert "NO ANSWER" in ask and "NO ANSWER" not in must
    assert "{" not in first + later + rate + ask + must


def test_unknown_prompt_set_or_variant():
    with pytest.raises(ValueError, match="unknown prompt set"):
        get_prompts("tiny", "en")
    with pytest.raises(ValueError, match="unknown prompt variant"):
        get_prompts("paper", "fr")


@pytest.mark.parametrize("variant", ["en", "zh", "hotpotqa"])
def test_chunk_first_layout_repeats_round_one_up_to_the_question(variant):
    """What a prefix cache can reuse in round 2 is the longest start shared with round 1's prompt: with the
    chunk first that is the chunk and the question; with the facts first, nothing past the first words."""
    def shared_start(layout: str) -> str:
        prompts = get_prompts("small", variant, layout)
        first = seek_prompt(prompts, "QUESTION?", "CHUNK TEXT", [], 1)
        later = seek_prompt(prompts, "QUESTION?", "CHUNK TEXT", ["FACT ONE"], 2)
        return first[:next(i for i, (a, b) in enumerate(zip(first, later)) if a != b)]

    assert "CHUNK TEXT" in shared_start("chunk-first") and "QUESTION?" in shared_start("chunk-first")
    assert "CHUNK TEXT" not in shared_start("facts-first")
    prompts = get_prompts("small", variant, "chunk-first")
    assert "{" not in seek_prompt(prompts, "Q?", "C", ["F"], 2)


def test_layout_is_checked_and_belongs_to_the_small_set():
    with pytest.raises(ValueError, match="unknown layout"):
        get_prompts("small", "en", "sideways")
    with pytest.raises(ValueError, match="small prompt set"):
        get_prompts("paper", "en", "chunk-first")
