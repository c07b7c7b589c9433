"""Every method shares one interface: `method.run(task, llm) -> Prediction`."""

from .base import Method, PromptTooLong, run_sync
from .direct import DirectConfig, DirectInput
from .extagents import ExtAgents, ExtAgentsConfig, kar_schedule, top_k_within

METHODS = {"extagents": ExtAgents, "direct": DirectInput}

__all__ = ["METHODS", "DirectConfig", "DirectInput", "ExtAgents", "ExtAgentsConfig", "Method", "PromptTooLong",
           "kar_schedule", "run_sync", "top_k_within"]
