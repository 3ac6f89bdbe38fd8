"""OpenAI Agents SDK input items <-> clawctx transcripts.

The Agents SDK's ``TResponseInputItem`` is the Responses API input item, so these are the
Responses converters under the SDK's name (``RunResult.to_input_list()`` reads directly).
"""

from __future__ import annotations

from clawctx.interop._openai_responses import from_openai_responses as from_openai_agents
from clawctx.interop._openai_responses import to_openai_responses as to_openai_agents

__all__ = ["from_openai_agents", "to_openai_agents"]
