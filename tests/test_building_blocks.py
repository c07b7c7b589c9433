"""The pieces every method is built from: token budgets, the fan-out of agent calls, declared configs."""

import asyncio
from dataclasses import dataclass

import pytest

from extlib.budget import PromptTooLong, consecutive_groups, greedy_within, prefix_within, require_fit
from extlib.fan_out import fan_out
from extlib.methods import METHODS, ExtAgentsConfig, MapReduceConfig, UnknownKnob, knob_names
from extlib.methods.base import ChunkedConfig, Method, knob


def test_require_fit_says_what_does_not_fit_and_how_to_fix_it():
    require_fit(100, 100, "the prompt")
    with pytest.raises(PromptTooLong, match="the prompt need 101 tokens, more than the 100-token window; lower"):
        require_fit(101, 100, "the prompt")
    with pytest.raises(PromptTooLong, match="use smaller segments"):
        require_fit(101, 100, "a segment", fix="use smaller segments")


def test_the_three_packers():
    size = {"a": 3, "b": 3, "c": 5, "d": 1}.get
    assert greedy_within(["a", "b", "c", "d"], size, 8) == ["a", "b", "d"]  # skips the misfit, goes on
    assert prefix_within(["a", "b", "c", "d"], lambda kept: sum(map(size, kept)), 8) == ["a", "b"]  # stops at it
    assert consecutive_groups(["a", "b", "c", "d"], size, 6) == [["a", "b"], ["c", "d"]]
    assert consecutive_groups(["c", "c"], size, 4) == [["c"], ["c"]]  # an item over the budget: a group of its own
    assert greedy_within([], size, 8) == [] and consecutive_groups([], size, 8) == [[]]


def test_fan_out_keeps_job_order_and_its_sequential_mode_runs_one_at_a_time():
    running, most = [0], [0]

    async def job(i: int, delay: float) -> int:
        running[0] += 1
        most[0] = max(most[0], running[0])
        await asyncio.sleep(delay)
        running[0] -= 1
        return i

    delays = [0.03, 0.01, 0.02]
    assert asyncio.run(fan_out([job(i, d) for i, d in enumerate(delays)])) == [0, 1, 2]
    assert most[0] == 3
    most[0] = 0
    assert asyncio.run(fan_out([job(i, d) for i, d in enumerate(delays)], sequential=True, progress=True)) == [0, 1, 2]
    assert most[0] == 1


def test_every_config_checks_its_declared_bounds():
    for knobs, message in [({"chunk_tokens": 0}, "chunk_tokens must be a positive integer"),
                           ({"chunk_tokens": True}, "chunk_tokens must be a positive integer"),
                           ({"overlap": -1}, "overlap must be an integer >= 0"),
                           ({"gks": "yes"}, "gks must be true or false"),
                           ({"truncate": "end"}, "truncate must be one of"),
                           ({"input_tokens": 0}, "input_tokens must be a positive integer or None")]:
        with pytest.raises(ValueError, match=message):
            ExtAgentsConfig(**knobs)
    with pytest.raises(ValueError, match="max_collapse_levels must be a positive"):
        MapReduceConfig(max_collapse_levels=0)


def test_every_knob_says_what_it_is_for():
    for name, (method, _) in METHODS.items():
        for knob_name in knob_names(name):
            field = method.config_class.__dataclass_fields__[knob_name]
            assert field.metadata.get("help"), f"{name}.{knob_name} has no help"


def test_a_new_method_gets_the_same_checks_by_declaring_its_config():
    @dataclass
    class EchoConfig(ChunkedConfig):
        repeats: int = knob(2, "how often to say it")

    class Echo(Method):
        config_class = EchoConfig

    assert Echo(repeats=3).config.repeats == 3
    with pytest.raises(UnknownKnob, match="unknown Echo option.*: repeat; valid: context_window"):
        Echo(repeat=3)
    with pytest.raises(ValueError, match="must be below context_window"):
        Echo(chunk_tokens=9000)
