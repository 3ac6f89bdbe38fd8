"""``trim_messages`` in LangChain's shape that never orphans a ``ToolMessage``
(langchain-ai/langchain#33245)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from clawctx.interop._budget import fit_to_budget

__all__ = [
    "trim_messages",
]


def trim_messages(
    messages: Sequence[Any],
    *,
    max_tokens: int,
    token_counter: Literal["estimate", "o200k_base", "cl100k_base"]
    | Callable[[list[Any]], int] = "estimate",
    strategy: Literal["last", "first"] = "last",
    include_system: bool = True,
    start_on: Literal["human", "any"] = "human",
) -> list[Any]:
    """The kept messages. ``token_counter`` may be LangChain's kind (a callable over a list of
    messages, such as ``len`` or ``count_tokens_approximately``)."""
    fit = fit_to_budget(
        list(messages),
        max_tokens,
        counter=token_counter,
        keep_first="system" if include_system else 0,
        strategy=strategy,
        start_on="user" if start_on == "human" else "any",
    )
    kept: list[Any] = fit.messages
    return kept
