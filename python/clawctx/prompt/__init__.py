"""Prompt assembly: the second stage of the pipeline.

Builds what is sent with the history: the system prompt (``build_system_prompt`` and its
layout, sections and parameters), the workspace bootstrap files and skills it lists (with the
bootstrap budget analysis and truncation warning, ``build_bootstrap_prompt_warning``), the
prompt body of an inbound message (``build_prompt_body``: sender, thread, media notes, queued
system events), the system event queue, the escaping of untrusted text (the markers the runtime
uses to frame trusted structure) and the images a prompt refers to.

Layer: above ``clawctx.history``; imports nothing from ``runtime`` or ``engine``.
"""

from __future__ import annotations

from clawctx.prompt import (
    bootstrap_budget,
    prompt_body,
    prompt_images,
    skills,
    system_events,
    system_prompt,
    untrusted,
    workspace,
)
from clawctx.prompt.bootstrap_budget import *  # noqa: F403
from clawctx.prompt.prompt_body import *  # noqa: F403
from clawctx.prompt.prompt_images import *  # noqa: F403
from clawctx.prompt.skills import *  # noqa: F403
from clawctx.prompt.system_events import *  # noqa: F403
from clawctx.prompt.system_prompt import *  # noqa: F403
from clawctx.prompt.untrusted import *  # noqa: F403
from clawctx.prompt.workspace import *  # noqa: F403

# What each module exports is listed once, in its own ``__all__``: the package exports it whole
# (the typing spec's ``__all__ += submodule.__all__``, which mypy, pyright and griffe read).
__all__: list[str] = []
__all__ += bootstrap_budget.__all__
__all__ += prompt_body.__all__
__all__ += prompt_images.__all__
__all__ += skills.__all__
__all__ += system_events.__all__
__all__ += system_prompt.__all__
__all__ += untrusted.__all__
__all__ += workspace.__all__
