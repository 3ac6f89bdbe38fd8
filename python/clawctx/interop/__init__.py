"""Histories from other runtimes, in and out, and pair-safe token budgets.

Converters between clawctx transcripts and OpenAI Chat messages, OpenAI Responses / Agents SDK
input items, Anthropic messages, Gemini contents, LangChain and pydantic-ai messages (the last
two import their package only when called); ``read``/``apply`` to run any transcript operation
on a foreign history and get the result back in its shape; ``fit_to_budget``. Framework hooks
live in ``clawctx.interop.integrations`` (imported on demand).

The ``to_*`` converters are safe by default: unless ``safe=False`` is given (or under
:func:`clawctx.compat`), the messages pass the request guard first, so the result is valid for a
request to the converter's API (for LangChain and pydantic-ai, to every provider): repeated ids
made unique, results paired with their calls, aborted turns left out.

Layer: after ``history`` (it imports only ``clawctx._core``), before ``prompt``.
"""

from __future__ import annotations

from clawctx.interop._anthropic_messages import from_anthropic, to_anthropic
from clawctx.interop._budget import Fit, fit_to_budget
from clawctx.interop._formats import FORMATS, Converted, apply, read
from clawctx.interop._gemini_contents import from_gemini, to_gemini
from clawctx.interop._langchain_messages import from_langchain, to_langchain
from clawctx.interop._openai_agents_items import from_openai_agents, to_openai_agents
from clawctx.interop._openai_chat import from_openai_chat, to_openai_chat
from clawctx.interop._openai_responses import from_openai_responses, to_openai_responses
from clawctx.interop._pydantic_ai_messages import from_pydantic_ai, to_pydantic_ai

__all__ = [
    "FORMATS",
    "Converted",
    "Fit",
    "apply",
    "fit_to_budget",
    "from_anthropic",
    "from_gemini",
    "from_langchain",
    "from_openai_agents",
    "from_openai_chat",
    "from_openai_responses",
    "from_pydantic_ai",
    "read",
    "to_anthropic",
    "to_gemini",
    "to_langchain",
    "to_openai_agents",
    "to_openai_chat",
    "to_openai_responses",
    "to_pydantic_ai",
]
