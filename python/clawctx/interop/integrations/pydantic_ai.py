"""A pydantic-ai history processor: repair tool pairing, then fit a token budget.

Use it as ``Agent(history_processors=[...])`` (pydantic-ai before capabilities) or
``Agent(capabilities=[ProcessHistory(...)])``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from clawctx.interop._budget import Counter, fit_to_budget

__all__ = [
    "history_processor",
]


def history_processor(
    max_tokens: int | None = None, *, counter: Counter = "estimate"
) -> Callable[[list[Any]], list[Any]]:
    """A processor that repairs pairing (orphaned returns dropped, missing returns added as
    retry prompts) and, with ``max_tokens``, keeps the newest messages that fit."""

    def process(messages: list[Any]) -> list[Any]:
        if not messages:
            return messages
        budget = max_tokens if max_tokens is not None else 2**62
        kept: list[Any] = fit_to_budget(messages, budget, counter=counter).messages
        return kept

    return process
