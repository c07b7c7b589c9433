"""Every method shares one interface: `method.run(task, llm) -> Prediction`; `make_method(name, **knobs)`
builds any of them by name. Several methods share one set of knobs through `knobs_for`: each takes the
knobs its configuration has, and a knob none of them has is an error, never dropped."""

from dataclasses import fields
from typing import Any

from ..budget import PromptTooLong
from ..errors import UserError
from .base import Method, MethodConfig, UnknownKnob, run_sync
from .chain_of_agents import ChainOfAgents, ChainOfAgentsConfig
from .direct import DirectConfig, DirectInput
from .drag import DRAG, Demo, DRAGConfig
from .extagents import ExtAgents, ExtAgentsConfig, kar_schedule
from .longagent import LongAgent, LongAgentConfig
from .mapreduce import LLMxMapReduce, MapReduceConfig
from .o2_searcher import O2Searcher, O2SearcherConfig
from .parallel_search import SearchAgent, SearchAgentConfig
from .parser_lead import ParserConfig, ParserPrompted

# name -> (method, fixed settings that make it this variant)
METHODS: dict[str, tuple[type[Method], dict[str, Any]]] = {
    "extagents": (ExtAgents, {}),
    "direct": (DirectInput, {}),
    "mapreduce": (LLMxMapReduce, {}),
    "chain-of-agents": (ChainOfAgents, {}),
    "longagent": (LongAgent, {}),
    "drag": (DRAG, {"iterative": False}),
    "iterdrag": (DRAG, {"iterative": True}),
    "parser": (ParserPrompted, {}),
    "parallelsearch": (SearchAgent, {"parallel": True}),
    "search-r1": (SearchAgent, {"parallel": False}),
    "o2-searcher": (O2Searcher, {}),
}


def check_method(name: str) -> None:
    if name not in METHODS:
        raise UserError(f"unknown method {name!r}; choose from: {', '.join(METHODS)}")


def knob_names(name: str) -> list[str]:
    """The knobs method `name` takes (its fixed settings excluded)."""
    return list(knob_defaults(name))


def knob_defaults(name: str) -> dict[str, Any]:
    """The knobs method `name` takes and their default values."""
    check_method(name)
    method, fixed = METHODS[name]
    return {f.name: f.default for f in fields(method.config_class) if f.name not in fixed}


def make_method(name: str, progress: bool = False, **knobs: Any) -> Method:
    """The method called `name` with these knobs; one it does not take is an error listing the valid ones."""
    valid = knob_names(name)
    unknown = sorted(set(knobs) - set(valid))
    if unknown:
        raise UnknownKnob(f"{name} has no knob {', '.join(unknown)}; its knobs: {', '.join(valid)}")
    method, fixed = METHODS[name]
    return method(**knobs, **fixed, progress=progress)


def knobs_for(names: list[str], knobs: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Method name -> the knobs it takes, for a run of several methods with one set of knobs (e.g.
    chunk_tokens applies to the chunked methods, rating to ExtAgents). A knob none of them takes is an
    error listing the knobs they do take."""
    taken = {name: set(knob_names(name)) for name in names}
    unknown = sorted(set(knobs) - set().union(*taken.values()))
    if unknown:
        valid = sorted(set().union(*taken.values()))
        raise UnknownKnob(f"no method of {', '.join(names)} has the knob {', '.join(unknown)}; "
                          f"their knobs: {', '.join(valid)}")
    return {name: {k: v for k, v in knobs.items() if k in taken[name]} for name in names}


__all__ = ["DRAG", "METHODS", "ChainOfAgents", "ChainOfAgentsConfig", "DRAGConfig", "Demo", "DirectConfig",
           "DirectInput", "ExtAgents", "ExtAgentsConfig", "LLMxMapReduce", "LongAgent", "LongAgentConfig",
           "MapReduceConfig", "Method", "MethodConfig", "O2Searcher", "O2SearcherConfig", "ParserConfig",
           "ParserPrompted", "PromptTooLong", "SearchAgent", "SearchAgentConfig", "UnknownKnob", "check_method",
           "kar_schedule", "knob_defaults", "knob_names", "knobs_for", "make_method", "run_sync"]
