"""ExtAgents toolkit: scale external knowledge beyond an LLM's context window with multi-agent collaboration."""

from .cache import ResponseCache
from .llm import Completion, LLMClient, LLMError
from .methods import METHODS, DirectInput, ExtAgents, ExtAgentsConfig, PromptTooLong
from .models import MODELS, ensure_model
from .serve import LocalServer
from .trace import CallRecord, Prediction, Task

__all__ = ["METHODS", "MODELS", "CallRecord", "Completion", "DirectInput", "ExtAgents", "ExtAgentsConfig",
           "LLMClient", "LLMError", "LocalServer", "Prediction", "PromptTooLong", "ResponseCache", "Task",
           "ensure_model"]
