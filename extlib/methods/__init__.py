"""Every method shares one interface: `method.run(task, llm) -> Prediction`; `make_method(name, **knobs)`
builds any of them by name from one set of knobs (each takes the ones its configuration has)."""

from dataclasses import fields

from .base import Method, PromptTooLong, run_sync
from .chain_of_agents import ChainOfAgents, ChainOfAgentsConfig
from .direct import DirectConfig, DirectInput
from .drag import DRAG, Demo, DRAGConfig
from .extagents import ExtAgents, ExtAgentsConfig, kar_schedule, top_k_within
from .longagent import LongAgent, LongAgentConfig
from .mapreduce import LLMxMapReduce, MapReduceConfig
from .o2_searcher import O2Searcher, O2SearcherConfig
from .parallel_search import SearchAgent, SearchAgentConfig
from .parser_lead import ParserConfig, ParserPrompted

# name -> (method, its configuration, fixed settings)
METHODS = {
    "extagents": (ExtAgents, ExtAgentsConfig, {}),
    "direct": (DirectInput, DirectConfig, {}),
    "mapreduce": (LLMxMapReduce, MapReduceConfig, {}),
    "chain-of-agents": (ChainOfAgents, ChainOfAgentsConfig, {}),
    "longagent": (LongAgent, LongAgentConfig, {}),
    "drag": (DRAG, DRAGConfig, {}),
    "iterdrag": (DRAG, DRAGConfig, {"iterative": True}),
    "parser": (ParserPrompted, ParserConfig, {}),
    "parallelsearch": (SearchAgent, SearchAgentConfig, {"parallel": True}),
    "search-r1": (SearchAgent, SearchAgentConfig, {"parallel": False}),
    "o2-searcher": (O2Searcher, O2SearcherConfig, {}),
}


def make_method(name: str, **knobs) -> Method:
    """The method called `name`, configured with those of `knobs` its configuration has."""
    if name not in METHODS:
        raise ValueError(f"unknown method {name!r}; choose from: {', '.join(METHODS)}")
    method, config, fixed = METHODS[name]
    names = {f.name for f in fields(config)}
    return method(config(**{**{k: v for k, v in knobs.items() if k in names}, **fixed}))


__all__ = ["DRAG", "METHODS", "ChainOfAgents", "ChainOfAgentsConfig", "DRAGConfig", "Demo", "DirectConfig",
           "DirectInput", "ExtAgents", "ExtAgentsConfig", "LLMxMapReduce", "LongAgent", "LongAgentConfig",
           "MapReduceConfig", "Method", "O2Searcher", "O2SearcherConfig", "ParserConfig", "ParserPrompted",
           "PromptTooLong", "SearchAgent", "SearchAgentConfig", "kar_schedule", "make_method", "run_sync",
           "top_k_within"]
