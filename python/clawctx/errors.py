"""Every exception clawctx defines, in one tree (indentation is inheritance)::

    ClawctxError(Exception)                       base of every clawctx error
        SessionFormatError                        not a usable session file (path, line, reason)
            NotASessionFileError                  a FIFO, device, directory or socket, unread
        SessionLockError                          the session file's lock was not taken in time
        RepairError                               rewriting a damaged file failed; original kept
        InternalError                             a bug: a native call panicked
        StoreError                                an OpenClaw SQLite store that cannot be read
        PayloadError(ValueError)                  no request body can be built for this input
        HookError(RuntimeError)                   a hook handler failed (catch_errors=False)
        ContextEngineNotRegisteredError(LookupError)  the configured engine id is unknown
        ReportDependencyError(ImportError)        the report's charting extra is missing
        TurnMessageError(ValueError)              record_turn got a message that is not pi's
        ResponseParseError(ValueError)            a provider reply that cannot be read at all
        ToolDefinitionError(ValueError)           a tool definition in no shape clawctx reads
        RequestBodyError(ValueError)              a body given to cache_diff is not a JSON object
        _ImageError                               internal to history.images, never escapes

A name in parentheses is a built-in base kept beside ``ClawctxError``, so ``except ValueError``
(or ``RuntimeError``, ``LookupError``, ``ImportError``) written before these classes joined the
tree still catches them. The first six are raised by the native module (``clawctx._core``,
mapped from Rust errors in ``rust/python/src/errors.rs``) and re-exported here;
``_ImageError`` (``clawctx.history.images``) becomes the replacement text of an image that
cannot be read and is never raised to callers. Failures that are not about clawctx's own
input (a missing file, a bad argument type) stay the built-ins ``FileNotFoundError``,
``ValueError``, ``TypeError``, ``KeyError``.

The stage subpackages re-export the errors of their stage (``clawctx.history.SessionFormatError``,
``clawctx.wire.PayloadError``, ``clawctx.engine.HookError``, ``clawctx.report
.ReportDependencyError``, …); those names are these classes. ``tests/project/test_errors.py``
checks that this tree lists every exception class in the package, with its real bases.

Layer: with ``_core``, below every stage (it imports only ``clawctx._core``).
"""

from __future__ import annotations

from clawctx._core import (
    ClawctxError,
    InternalError,
    NotASessionFileError,
    RepairError,
    SessionFormatError,
    SessionLockError,
)

__all__ = [
    "ClawctxError",
    "ContextEngineNotRegisteredError",
    "HookError",
    "InternalError",
    "NotASessionFileError",
    "PayloadError",
    "RepairError",
    "ReportDependencyError",
    "RequestBodyError",
    "SessionFormatError",
    "SessionLockError",
    "StoreError",
    "TurnMessageError",
]


class StoreError(ClawctxError):
    """An OpenClaw SQLite session store (``openclaw-agent.sqlite``) that cannot be read: not a
    SQLite file, corrupt or locked past the busy timeout, a schema without transcript tables, or a
    row whose ``event_json`` is not a JSON object. ``path`` names the file; ``session_id`` and
    ``seq`` the row when one is at fault (else ``None``). Nothing is ever written to the store."""

    def __init__(
        self,
        message: str,
        *,
        path: str,
        session_id: str | None = None,
        seq: int | None = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.session_id = session_id
        self.seq = seq


class PayloadError(ClawctxError, ValueError):
    """No request body can be built: pi-ai itself throws for this input (the message is its
    reason), the model API is not supported, or the model/options are malformed."""


class HookError(ClawctxError, RuntimeError):
    """A hook handler failed while the runner had ``catch_errors=False`` (hooks.ts,
    ``createHookRunner``'s ``catchErrors``).

    The message is ``[hooks] <hookName> handler from <pluginId> failed: <error>``; the
    original exception is chained as ``__cause__``.
    """


class ContextEngineNotRegisteredError(ClawctxError, LookupError):
    """The configured engine id is not registered (registry.ts, ``resolveContextEngine``). The
    message is ``Context engine "<id>" is not registered. Available engines: <ids joined ", " or
    "(none)">``."""


class ReportDependencyError(ClawctxError, ImportError):
    """The charting library of ``clawctx.report`` is not installed."""


class TurnMessageError(ClawctxError, ValueError):
    """A message given to ``record_turn`` is not a pi message: nothing was written. The
    message says which one and why; a provider's reply is named as such, with the function
    that turns it into pi's assistant message (``clawctx.parse_response``)."""


class ResponseParseError(ClawctxError, ValueError):
    """The reply cannot be read as the model's API at all: it is in another API's shape, a
    ``data:`` line or the body is not JSON, it is neither SSE nor events nor a body, or the
    API is not supported. (A reply pi-ai reads but fails on, such as an error event or a
    refusal, is not an exception: it gives a message with ``stopReason: "error"``.)"""


class ToolDefinitionError(ClawctxError, ValueError):
    """A tool definition in none of the shapes :func:`normalize_tools` reads."""


class RequestBodyError(ClawctxError, ValueError):
    """A request body given to :func:`clawctx.cache_diff` is not a JSON object (or not UTF-8):
    the message names the body (``previous`` or ``next``), the byte offset and the reason."""
