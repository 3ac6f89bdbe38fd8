"""The agent runtime around a session: the third stage of the pipeline.

Decides when and with what a turn runs: the per-session lane (``SessionLane``) that serializes
turns, the follow-up queue with its modes, debounce, dedupe and overflow summaries, sub-agent
announces, and the reply tokens and prompts of heartbeat, cron and exec events.

Layer: above ``clawctx.prompt`` and ``clawctx.history``; imports nothing from ``engine``.
"""

from __future__ import annotations

from clawctx.runtime import announce, lane, queues, replies
from clawctx.runtime.announce import *  # noqa: F403
from clawctx.runtime.lane import *  # noqa: F403
from clawctx.runtime.queues import *  # noqa: F403
from clawctx.runtime.replies import *  # noqa: F403

# What each module exports is listed once, in its own ``__all__``: the package exports it whole
# (the typing spec's ``__all__ += submodule.__all__``, which mypy, pyright and griffe read).
__all__: list[str] = []
__all__ += announce.__all__
__all__ += lane.__all__
__all__ += queues.__all__
__all__ += replies.__all__
