"""Request assembly: the last stage of the pipeline.

Puts the stages together for one model request: ``ContextPipeline`` runs the whole
per-request order (prompt body, repair, hygiene, history limit, context engine, system prompt,
hooks, images); plugin hooks (``HookRunner``), pluggable context engines
(``ContextEngine``, ``LegacyContextEngine`` and the registry), input provenance and the
internal runtime events (task completions) injected into prompts.

Layer: the top stage; it may import every stage below it.
"""

from __future__ import annotations

from clawctx.engine import context_engine, diagnose, hooks, internal_events, pipeline, provenance
from clawctx.engine.cache_report import CacheReport, CacheTurn, cache_report
from clawctx.engine.context_engine import *  # noqa: F403
from clawctx.engine.diagnose import *  # noqa: F403
from clawctx.engine.hooks import *  # noqa: F403
from clawctx.engine.internal_events import *  # noqa: F403
from clawctx.engine.pipeline import *  # noqa: F403
from clawctx.engine.provenance import *  # noqa: F403
from clawctx.engine.turn import TurnMessageError, check_turn_messages

# What each module exports is listed once, in its own ``__all__``: the package exports it whole
# (the typing spec's ``__all__ += submodule.__all__``, which mypy, pyright and griffe read).
__all__: list[str] = []
__all__ += context_engine.__all__
__all__ += diagnose.__all__
__all__ += hooks.__all__
__all__ += internal_events.__all__
__all__ += pipeline.__all__
__all__ += provenance.__all__
__all__ += ["CacheReport", "CacheTurn", "cache_report"]
__all__ += ["TurnMessageError", "check_turn_messages"]
