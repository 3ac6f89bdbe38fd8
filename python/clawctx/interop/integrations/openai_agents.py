"""An OpenAI Agents SDK ``call_model_input_filter`` that repairs calls and outputs before each
model call (openai/openai-agents-python#4322), and optionally fits a budget."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from clawctx.interop._budget import Counter, fit_to_budget

__all__ = [
    "input_filter",
]


def input_filter(
    max_tokens: int | None = None, *, counter: Counter = "estimate"
) -> Callable[[Any], Any]:
    """For ``RunConfig(call_model_input_filter=input_filter())``."""

    def filter_input(data: Any) -> Any:
        from agents.run import ModelInputData

        items = list(data.model_data.input)
        if not items:
            return data.model_data
        budget = max_tokens if max_tokens is not None else 2**62
        kept = fit_to_budget(items, budget, counter=counter, start_on="any").messages
        return ModelInputData(input=kept, instructions=data.model_data.instructions)

    return filter_input
