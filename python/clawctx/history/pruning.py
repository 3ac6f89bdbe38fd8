"""The cache-TTL gate of OpenClaw's context-pruning extension (OpenClaw
2026.3.13 `src/agents/pi-extensions/context-pruning/extension.ts`, ``contextPruningExtension``;
`src/agents/pi-embedded-runner/cache-ttl.ts`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from clawctx import _core

__all__ = [
    "CACHE_TTL_CUSTOM_TYPES",
    "CacheTtlPruner",
    "is_cache_ttl_eligible",
]

#: ``customType`` of the session entries that record a prompt-cache touch (the second one is
#: the name older builds used).
CACHE_TTL_CUSTOM_TYPES: Final = ("openclaw.cache-ttl", "dna.cache-ttl")


def is_cache_ttl_eligible(provider: str, model_id: str) -> bool:
    """Whether pruning applies to a model: Anthropic, or Anthropic models through OpenRouter."""
    provider = provider.strip().lower()
    return provider == "anthropic" or (
        provider == "openrouter" and model_id.strip().lower().startswith("anthropic/")
    )


def _system_now_ms() -> int:
    return time.time_ns() // 1_000_000


class CacheTtlPruner:
    """Prunes at most once per TTL window after the provider's prompt cache has expired.

    The runtime calls :meth:`touch` after each successful call to a cache-eligible provider
    (and persists that as an ``openclaw.cache-ttl`` custom entry); before every LLM call it
    passes the messages through the pruner, which returns pruned messages, or ``None`` when it
    did nothing. Pruning happens only when a touch is known, the TTL is positive and at least
    one TTL has passed since the touch; a pruning run counts as a new touch, so a second call
    within the window does nothing.
    """

    def __init__(
        self,
        settings: _core.PruningSettings,
        *,
        context_window_tokens: float | None,
        last_cache_touch_at: int | None = None,
        now_ms: Callable[[], int] | None = None,
    ) -> None:
        self.settings = settings
        self.context_window_tokens = context_window_tokens
        self.last_cache_touch_at = last_cache_touch_at
        self._now_ms = now_ms or _system_now_ms

    @classmethod
    def from_session(
        cls,
        session: _core.Session,
        settings: _core.PruningSettings,
        *,
        context_window_tokens: float | None,
        now_ms: Callable[[], int] | None = None,
    ) -> CacheTtlPruner:
        """A pruner whose last touch is the ``data.timestamp`` of the newest cache-ttl custom
        entry that has a numeric one (cache-ttl.ts, readLastCacheTtlTimestamp)."""
        entry = session.latest_custom_entry(
            list(CACHE_TTL_CUSTOM_TYPES), numeric_data_key="timestamp"
        )
        touched: int | None = None
        if entry is not None:
            data = entry.get("data")
            stamp = data.get("timestamp") if isinstance(data, dict) else None
            if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
                touched = int(stamp)
        return cls(
            settings,
            context_window_tokens=context_window_tokens,
            last_cache_touch_at=touched,
            now_ms=now_ms,
        )

    def touch(self, at_ms: int | None = None) -> None:
        """Records that the prompt cache was (re)written now (or at ``at_ms``)."""
        self.last_cache_touch_at = self._now_ms() if at_ms is None else at_ms

    def is_due(self, now: int | None = None) -> bool:
        """Whether the TTL has run out since the last touch (extension.ts,
        contextPruningExtension). A touch at 0 counts
        as no touch, as in upstream (where 0 is falsy)."""
        if not self.last_cache_touch_at or self.settings.ttl_ms <= 0:
            return False
        current = self._now_ms() if now is None else now
        return current - self.last_cache_touch_at >= self.settings.ttl_ms

    def __call__(
        self, messages: _core.Transcript | Iterable[Mapping[str, Any]]
    ) -> _core.Transcript | None:
        """The ``context`` handler: pruned messages, or ``None`` when nothing was pruned."""
        now = self._now_ms()
        if not self.is_due(now):
            return None
        if isinstance(messages, _core.Transcript):
            transcript = messages
        else:
            transcript = _core.Transcript(messages)
        pruned = _core.prune_context(
            transcript, self.settings, context_window_tokens=self.context_window_tokens
        )
        if pruned is transcript:
            return None
        self.last_cache_touch_at = now
        return pruned
