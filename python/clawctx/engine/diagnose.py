"""``clawctx.doctor``: what needs attention in a session file before it is sent to a model.

Read-only. For a pi / OpenClaw session, or a Claude Code or Codex transcript read through
``clawctx.history.foreign``, the doctor reports

- damage in the file: torn lines, NUL bytes, invalid UTF-8 (the decision of
  ``repair_session_bytes``, the code ``clawctx repair`` runs, for pi sessions; the reader's
  damaged-line count for Claude Code and Codex files);
- problems on the leaf's path: tool calls without a result, results without a call, a tool-call
  id used twice, a compaction whose ``firstKeptEntryId`` keeps a result but not its call, empty
  turns, images over the default sanitization limits, and a context estimated over the model's
  window;
- per provider, whether the default request would be valid: the history goes through the public
  default path (``sanitize_session_history`` with its defaults, then ``build_request_payload``)
  and ``validate_for_provider`` checks the result. The doctor calls only these public
  functions, so it reports whatever their defaults do.

Nothing here writes; :func:`apply_file_repairs` is the ``--fix`` step, which calls
``repair_session_file`` exactly as ``clawctx repair`` does (a backup, then an atomic replace).

Layer: ``clawctx.engine`` (reads sessions through ``clawctx.history``, builds bodies with
``clawctx.wire``).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from clawctx import _core

# The public entry points by their public names: the doctor reports what they decide.
from clawctx.history import sanitize_session_history, validate_for_provider
from clawctx.history._tool_ids import tool_call_ids, tool_ids, tool_result_id
from clawctx.history.foreign import detect_transcript_format, read_transcript
from clawctx.history.images import DEFAULT_IMAGE_MAX_BYTES, DEFAULT_IMAGE_MAX_DIMENSION_PX
from clawctx.history.inspect import DEFAULT_CONTEXT_TOKENS
from clawctx.history.session import Session
from clawctx.wire.payload import build_request_payload

__all__ = [
    "DOCTOR_PROVIDERS",
    "DoctorFinding",
    "DoctorReport",
    "apply_file_repairs",
    "doctor",
]

#: The providers the doctor checks by default: name -> (pi provider, pi-ai API). "openai" is
#: OpenAI Chat Completions; "openai-responses" the Responses API (pi-ai 0.58.3 `KnownApi`,
#: `packages/ai/src/types.ts`).
DOCTOR_PROVIDERS: dict[str, tuple[str, str]] = {
    "anthropic": ("anthropic", "anthropic-messages"),
    "openai": ("openai", "openai-completions"),
    "openai-responses": ("openai", "openai-responses"),
    "google": ("google", "google-generative-ai"),
    "bedrock": ("amazon-bedrock", "bedrock-converse-stream"),
    "mistral": ("mistral", "mistral-conversations"),
}

#: APIs whose body pi-ai builds inside a vendor SDK (Bedrock's AWS SDK call), so clawctx has no
#: body writer for them: their messages are checked by the validator's rules only.
_NO_BODY_WRITER = frozenset({"bedrock-converse-stream"})

#: A model id per provider for the request body (the body's rules do not depend on it).
_MODEL_IDS = {
    "anthropic": "claude-sonnet-4-5",
    "openai": "gpt-5",
    "openai-responses": "gpt-5",
    "google": "gemini-2.5-pro",
    "bedrock": "anthropic.claude-sonnet-4-5",
    "mistral": "mistral-large-latest",
}

#: Where each finding kind is handled: "file" (``--fix`` / ``clawctx repair`` rewrites the
#: file), "request" (the request pipeline handles it when the request is built, the file
#: keeps it), "convert" (a Claude Code or Codex file: ``clawctx convert`` skips the damage).
_REMEDIES = {
    "damaged-line": "file",
    "unanswered-tool-call": "request",
    "orphaned-tool-result": "request",
    "repeated-tool-call-id": "request",
    "compaction-cuts-pair": "request",
    "empty-turn": "request",
    "oversize-image": "request",
    "over-context-window": "request",
    "provider-rejects": "request",
    "not-a-session": "none",
}


@dataclass(frozen=True)
class DoctorFinding:
    """One thing that needs attention.

    ``kind`` is one of ``damaged-line``, ``unanswered-tool-call``, ``orphaned-tool-result``,
    ``repeated-tool-call-id``, ``compaction-cuts-pair``, ``empty-turn``, ``oversize-image``,
    ``over-context-window``, ``provider-rejects``, ``not-a-session``. ``line`` is the file's
    1-based line when one is known; ``provider`` is set for ``provider-rejects``. ``handled``
    says where it is dealt with: ``file`` (``--fix`` rewrites the file), ``request`` (when a
    request is built; the file keeps it), ``convert`` (``clawctx convert`` skips it) or ``none``.
    """

    kind: str
    detail: str
    line: int | None = None
    provider: str | None = None
    handled: str = "request"


@dataclass
class DoctorReport:
    """What :func:`doctor` found in one file. ``ok`` is true when nothing needs attention."""

    path: str
    format: str
    messages: int = 0
    estimated_tokens: int = 0
    context_window: int = DEFAULT_CONTEXT_TOKENS
    findings: list[DoctorFinding] = field(default_factory=list)
    providers: dict[str, list[str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Nothing needs attention."""
        return not self.findings

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data (what ``clawctx doctor --json`` prints)."""
        data = asdict(self)
        data["ok"] = self.ok
        return data


def _finding(kind: str, detail: str, **extra: Any) -> DoctorFinding:
    return DoctorFinding(kind=kind, detail=detail, handled=_REMEDIES[kind], **extra)


def _file_damage(path: Path, data: bytes) -> list[DoctorFinding]:
    """Damaged lines, as ``clawctx repair`` would see them (its own decision, in memory)."""
    report, _ = _core.repair_session_bytes(data)
    return [
        _finding("damaged-line", f"line {c.line}: {c.reason} (repair: {c.kind})", line=c.line)
        for c in report.changes
    ]


def _compaction_cuts(path_entries: list[dict[str, Any]]) -> list[DoctorFinding]:
    """Compactions on the path whose kept part starts after a call but keeps its result."""
    findings = []
    index = {e.get("id"): i for i, e in enumerate(path_entries)}
    for entry in path_entries:
        if entry.get("type") != "compaction":
            continue
        first_kept = index.get(entry.get("firstKeptEntryId"))
        if first_kept is None:
            continue
        dropped_calls: set[str] = set()
        for before in path_entries[:first_kept]:
            dropped_calls.update(tool_call_ids(before.get("message") or {}))
        for kept in path_entries[first_kept:]:
            message = kept.get("message") or {}
            result_id = tool_result_id(message) if message.get("role") == "toolResult" else None
            if result_id in dropped_calls:
                findings.append(
                    _finding(
                        "compaction-cuts-pair",
                        f"compaction {entry.get('id')} keeps the result of tool call "
                        f"{result_id} but summarizes its call away (firstKeptEntryId "
                        f"{entry.get('firstKeptEntryId')})",
                    )
                )
    return findings


def _is_empty(message: dict[str, Any]) -> bool:
    """A user or assistant turn with nothing to send: no content, or only blank text."""
    if message.get("role") not in ("user", "assistant"):
        return False
    if message.get("role") == "assistant" and message.get("stopReason") in ("error", "aborted"):
        return False  # not sent; the runtimes skip failed turns
    content = message.get("content")
    if isinstance(content, str):
        return not content.strip()
    if not isinstance(content, list):
        return True
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") != "text" or str(block.get("text", "")).strip():
            return False
    return True


def _path_problems(messages: _core.Transcript, context_window: int) -> list[DoctorFinding]:
    findings: list[DoctorFinding] = []
    listed = messages.to_list()
    calls, results = tool_ids(listed)
    for position, message in enumerate(listed):
        if _is_empty(message):
            findings.append(
                _finding("empty-turn", f"message {position}: an empty {message.get('role')} turn")
            )
    call_set, result_set = set(calls), set(results)
    findings += [
        _finding("unanswered-tool-call", f"tool call {c} has no result")
        for c in dict.fromkeys(calls)
        if c not in result_set
    ]
    findings += [
        _finding("orphaned-tool-result", f"tool result {r} answers no call on the path")
        for r in dict.fromkeys(results)
        if r not in call_set
    ]
    for call_id, count in Counter(calls).items():
        if count > 1:
            findings.append(
                _finding("repeated-tool-call-id", f"tool call id {call_id} is used {count} times")
            )
    for ref in _core.find_image_blocks(messages, skip_within_limits=True):
        # Only images whose size is known: a block the probe cannot read is image
        # sanitization's business (it replaces it), not a size problem.
        probe = _core.probe_base64_image(ref.data)
        if probe is None:
            continue
        width, height, size = probe
        if max(width, height) > DEFAULT_IMAGE_MAX_DIMENSION_PX or size > DEFAULT_IMAGE_MAX_BYTES:
            findings.append(
                _finding(
                    "oversize-image",
                    f"message {ref.message_index}: a {width}x{height} {ref.mime_type} image of "
                    f"{size:,} bytes, over {DEFAULT_IMAGE_MAX_DIMENSION_PX} px or "
                    f"{DEFAULT_IMAGE_MAX_BYTES:,} bytes (resized when the request is built)",
                )
            )
    return findings


def _provider_check(
    messages: _core.Transcript, name: str, model: str | None
) -> tuple[list[str], DoctorFinding | None]:
    """The violations of the default request for one provider (empty when it is valid)."""
    provider, api = DOCTOR_PROVIDERS[name]
    model_id = model or _MODEL_IDS[name]
    problems: list[str] = []
    try:
        sanitized = sanitize_session_history(
            messages, provider=provider, model_api=api, model_id=model_id, now_ms=0
        )
        problems = [
            f"message {v.index}: {v.rule}: {v.detail}"
            for v in validate_for_provider(sanitized, provider=provider, model_api=api)
        ]
        spec = {
            "id": model_id,
            "name": model_id,
            "api": api,
            "provider": provider,
            "baseUrl": "",
            "reasoning": False,
            "input": ["text", "image"],
            "maxTokens": 8192,
        }
        if api not in _NO_BODY_WRITER:
            build_request_payload(spec, {"messages": sanitized}, now_ms=0)
    except (_core.ClawctxError, ValueError) as err:
        problems.append(f"the request cannot be built: {err}")
    if not problems:
        return [], None
    detail = f"the default {api} request would be rejected: {problems[0]}"
    if len(problems) > 1:
        detail += f" (and {len(problems) - 1} more)"
    return problems, _finding("provider-rejects", detail, provider=name)


def _providers(providers: Iterable[str] | None) -> list[str]:
    if providers is None:
        return list(DOCTOR_PROVIDERS)
    chosen = list(dict.fromkeys(providers))
    unknown = [p for p in chosen if p not in DOCTOR_PROVIDERS]
    if unknown:
        raise ValueError(f"unknown provider {unknown[0]!r}; known: {', '.join(DOCTOR_PROVIDERS)}")
    return chosen


def doctor(
    path: str | Path,
    *,
    providers: Sequence[str] | None = None,
    model: str | None = None,
    context_window: int | None = None,
) -> DoctorReport:
    """Check one session file (pi, Claude Code or Codex) without writing it.

    ``providers`` are names from :data:`DOCTOR_PROVIDERS` (default: all); ``model`` is the
    model id the request bodies name; ``context_window`` the model's window in tokens
    (default: OpenClaw's 200,000). Raises ``OSError`` when the file cannot be read and
    ``ValueError`` for an unknown provider; a file that is not a session gives a report with
    a ``not-a-session`` finding.
    """
    source = Path(path)
    names = _providers(providers)
    window = context_window if context_window is not None else DEFAULT_CONTEXT_TOKENS
    data = source.read_bytes()
    format_name = "pi"
    if data:
        with contextlib.suppress(ValueError):
            format_name = detect_transcript_format(source)
    report = DoctorReport(path=str(source), format=format_name, context_window=window)
    if not data:
        return report  # an empty file is an empty session: nothing to send, nothing wrong
    if format_name == "pi":
        report.findings += _file_damage(source, data)
        try:
            session = Session.open(source, read_only=True)
            messages = session.context().messages
            path_entries = session.branch_path()
        except _core.ClawctxError as err:
            report.findings.append(_finding("not-a-session", str(err)))
            return report
        report.findings += _compaction_cuts(path_entries)
    else:
        imported = read_transcript(source)
        messages = imported.messages
        if imported.damaged_lines:
            torn = ", the last one torn" if imported.torn_last_line else ""
            report.findings.append(
                DoctorFinding(
                    kind="damaged-line",
                    detail=f"{imported.damaged_lines} line(s) not JSON objects{torn}; "
                    "clawctx convert skips them",
                    handled="convert",
                )
            )
    report.messages = len(messages)
    report.estimated_tokens = sum(int(t) for t in messages.token_counts().tolist())
    report.findings += _path_problems(messages, window)
    if report.estimated_tokens > window:
        report.findings.append(
            _finding(
                "over-context-window",
                f"the context is estimated at {report.estimated_tokens:,} tokens, over the "
                f"{window:,}-token window (compaction or pruning needed)",
            )
        )
    for name in names:
        problems, finding = _provider_check(messages, name, model)
        report.providers[name] = problems
        if finding is not None:
            report.findings.append(finding)
    return report


def apply_file_repairs(path: str | Path) -> _core.RepairReport:
    """The ``--fix`` step: ``repair_session_file`` as ``clawctx repair`` runs it (a backup is
    kept beside the file, the repaired file replaces it atomically)."""
    return _core.repair_session_file(Path(path), backup="keep")
