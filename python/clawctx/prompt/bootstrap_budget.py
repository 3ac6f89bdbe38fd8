"""Bootstrap budget statistics and the truncation warning of the system prompt (OpenClaw
2026.3.13 `src/agents/bootstrap-budget.ts`; the mode comes from
`src/agents/pi-embedded-helpers/bootstrap.ts`, ``resolveBootstrapPromptTruncationWarningMode``).

After :func:`~clawctx.prompt.workspace.build_bootstrap_context_files` has cut the workspace
bootstrap files to their budgets, upstream's embedded runner (`src/agents/pi-embedded-runner/
run/attempt.ts`) compares what each file held with what was injected and, when files were
truncated, lists them in the system prompt under ``⚠ Bootstrap truncation warning:``
(:attr:`~clawctx.prompt.system_prompt.SystemPromptParams.bootstrap_truncation_warning_lines`):

1. :func:`build_bootstrap_injection_stats` — per file: raw and injected length, truncated or not
   (``buildBootstrapInjectionStats``);
2. :func:`analyze_bootstrap_budget` — causes (``max/file``, ``max/total``) and near-limit flags
   (``analyzeBootstrapBudget``);
3. :func:`build_bootstrap_prompt_warning` — the warning lines under the mode ``off`` / ``once``
   / ``always`` (``buildBootstrapPromptWarning``). A *signature* (the JSON of the limits and the
   truncated files) identifies one truncation situation; in ``once`` mode the lines are shown
   only while the signature is not among the signatures already seen for the session (the last
   32 are kept). Upstream keeps those in the session store entry
   (``systemPromptReport.bootstrapTruncation``); :func:`resolve_bootstrap_warning_signatures_seen`
   reads them back from such a report and :func:`build_bootstrap_truncation_report_meta` builds
   it. :class:`~clawctx.engine.ContextPipeline` keeps them per session itself (see there).

Lengths are JS string lengths (UTF-16 code units), as in :mod:`clawctx.prompt.workspace`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Final, Literal

from clawctx._js import JS_WHITESPACE as _JS_WHITESPACE
from clawctx._js import js_trim as _js_trim
from clawctx.prompt.system_prompt import ContextFile
from clawctx.prompt.workspace import WorkspaceBootstrapFile, utf16_length

__all__ = [
    "BOOTSTRAP_PROMPT_WARNING_MODES",
    "DEFAULT_BOOTSTRAP_NEAR_LIMIT_RATIO",
    "DEFAULT_BOOTSTRAP_PROMPT_TRUNCATION_WARNING_MODE",
    "DEFAULT_BOOTSTRAP_PROMPT_WARNING_MAX_FILES",
    "DEFAULT_BOOTSTRAP_PROMPT_WARNING_SIGNATURE_HISTORY_MAX",
    "BootstrapAnalyzedFile",
    "BootstrapBudgetAnalysis",
    "BootstrapInjectionStat",
    "BootstrapPromptWarning",
    "BootstrapPromptWarningMode",
    "BootstrapTruncationCause",
    "analyze_bootstrap_budget",
    "build_bootstrap_injection_stats",
    "build_bootstrap_prompt_warning",
    "build_bootstrap_truncation_report_meta",
    "build_bootstrap_truncation_signature",
    "format_bootstrap_truncation_warning_lines",
    "resolve_bootstrap_prompt_truncation_warning_mode",
    "resolve_bootstrap_warning_signatures_seen",
]

BootstrapPromptWarningMode = Literal["off", "once", "always"]
BootstrapTruncationCause = Literal["per-file-limit", "total-limit"]

#: bootstrap-budget.ts: a file (or the total) is "near the limit" from this share of its budget.
DEFAULT_BOOTSTRAP_NEAR_LIMIT_RATIO: Final = 0.85
#: bootstrap-budget.ts: at most this many truncated files get their own warning line.
DEFAULT_BOOTSTRAP_PROMPT_WARNING_MAX_FILES: Final = 3
#: bootstrap-budget.ts: how many signatures a session remembers for ``once`` mode.
DEFAULT_BOOTSTRAP_PROMPT_WARNING_SIGNATURE_HISTORY_MAX: Final = 32
#: pi-embedded-helpers/bootstrap.ts: the mode when
#: ``agents.defaults.bootstrapPromptTruncationWarning`` is unset or not one of the three modes.
DEFAULT_BOOTSTRAP_PROMPT_TRUNCATION_WARNING_MODE: Final[BootstrapPromptWarningMode] = "once"
BOOTSTRAP_PROMPT_WARNING_MODES: Final[tuple[BootstrapPromptWarningMode, ...]] = (
    "off",
    "once",
    "always",
)

_LIMITS_HINT: Final = (
    "If unintentional, raise agents.defaults.bootstrapMaxChars and/or "
    "agents.defaults.bootstrapTotalMaxChars."
)
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class BootstrapInjectionStat:
    """How much of one bootstrap file reached the prompt (``BootstrapInjectionStat``).

    ``raw_chars`` is the right-trimmed length of the file (0 when missing), ``injected_chars``
    the length of its Project Context entry (0 when it got none); ``truncated`` means a present
    file lost characters."""

    name: str
    path: str
    missing: bool
    raw_chars: int
    injected_chars: int
    truncated: bool


@dataclass(frozen=True, slots=True)
class BootstrapAnalyzedFile(BootstrapInjectionStat):
    """A :class:`BootstrapInjectionStat` with the analysis (``BootstrapAnalyzedFile``):
    ``near_limit`` (raw length at least the near-limit share of the per-file budget) and, for a
    truncated file, the ``causes`` (``per-file-limit`` when it exceeds the per-file budget,
    ``total-limit`` when the injected total reached the total budget)."""

    near_limit: bool
    causes: tuple[BootstrapTruncationCause, ...]


@dataclass(frozen=True, slots=True)
class BootstrapBudgetAnalysis:
    """``analyzeBootstrapBudget``'s result; the totals count present files only, and the limits
    are the normalized ones (positive integers)."""

    files: tuple[BootstrapAnalyzedFile, ...]
    truncated_files: tuple[BootstrapAnalyzedFile, ...]
    near_limit_files: tuple[BootstrapAnalyzedFile, ...]
    total_near_limit: bool
    has_truncation: bool
    raw_chars: int
    injected_chars: int
    truncated_chars: int
    bootstrap_max_chars: int
    bootstrap_total_max_chars: int
    near_limit_ratio: float


@dataclass(frozen=True, slots=True)
class BootstrapPromptWarning:
    """``buildBootstrapPromptWarning``'s result: the truncation ``signature`` (``None`` without
    truncation), whether the warning is shown, its ``lines`` (empty when not shown) and the
    signatures the session has now seen (to keep for the next run)."""

    signature: str | None
    warning_shown: bool
    lines: tuple[str, ...]
    warning_signatures_seen: tuple[str, ...]


# ---------------------------------------------------------------------------------------------
# Mode and remembered signatures
# ---------------------------------------------------------------------------------------------


def resolve_bootstrap_prompt_truncation_warning_mode(
    config: Mapping[str, object] | None = None,
) -> BootstrapPromptWarningMode:
    """``resolveBootstrapPromptTruncationWarningMode``: ``agents.defaults.
    bootstrapPromptTruncationWarning`` of an OpenClaw config when it is exactly ``"off"``,
    ``"once"`` or ``"always"`` (compared as is, like upstream), else ``"once"``."""
    raw: object = config
    for key in ("agents", "defaults", "bootstrapPromptTruncationWarning"):
        raw = raw.get(key) if isinstance(raw, Mapping) else None
    for mode in BOOTSTRAP_PROMPT_WARNING_MODES:
        if raw == mode:
            return mode
    return DEFAULT_BOOTSTRAP_PROMPT_TRUNCATION_WARNING_MODE


def _normalize_seen(signatures: Iterable[object] | None) -> list[str]:
    """``normalizeSeenSignatures``: trimmed strings, blanks and non-strings dropped, first
    occurrence kept."""
    result: list[str] = []
    if signatures is None or isinstance(signatures, (str, bytes)):
        return result
    for signature in signatures:
        value = _js_trim(signature) if isinstance(signature, str) else ""
        if value and value not in result:
            result.append(value)
    return result


def _append_seen(signatures: list[str], signature: str) -> list[str]:
    """``appendSeenSignature``: adds a new non-blank signature, keeping the last 32."""
    if not _js_trim(signature) or signature in signatures:
        return signatures
    return [*signatures, signature][-DEFAULT_BOOTSTRAP_PROMPT_WARNING_SIGNATURE_HISTORY_MAX:]


def resolve_bootstrap_warning_signatures_seen(report: Mapping[str, object] | None) -> list[str]:
    """``resolveBootstrapWarningSignaturesSeen``: the signatures a session has seen, read from its
    stored system prompt report (``{"bootstrapTruncation": {...}}``, what
    :func:`build_bootstrap_truncation_report_meta` produces under that key).

    ``warningSignaturesSeen`` when it holds any; otherwise, unless the report's mode was
    ``off``, the single ``promptWarningSignature``; else none."""
    truncation = report.get("bootstrapTruncation") if isinstance(report, Mapping) else None
    if not isinstance(truncation, Mapping):
        return []
    seen_list = truncation.get("warningSignaturesSeen")
    seen = _normalize_seen(seen_list if isinstance(seen_list, list | tuple) else None)
    if seen:
        return seen
    if truncation.get("warningMode") == "off":
        return []
    single = truncation.get("promptWarningSignature")
    value = _js_trim(single) if isinstance(single, str) else ""
    return [value] if value else []


# ---------------------------------------------------------------------------------------------
# Statistics and analysis
# ---------------------------------------------------------------------------------------------


def _basename(path: str) -> str:
    return path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


def build_bootstrap_injection_stats(
    bootstrap_files: Sequence[WorkspaceBootstrapFile],
    injected_files: Sequence[ContextFile],
) -> list[BootstrapInjectionStat]:
    """``buildBootstrapInjectionStats``: one stat per bootstrap file, in order.

    A file's injected entry is found by its trimmed path, else by its name as a path, else by
    an entry whose path has the file's name as base name (the first entry wins each lookup).
    ``raw_chars`` is the UTF-16 length of the right-trimmed content (for a sampled large file,
    :attr:`~clawctx.prompt.workspace.WorkspaceBootstrapFile.content_length`), 0 when missing.
    The stat's ``path`` is the trimmed path, or the name when there is none.
    """
    by_path: dict[str, str] = {}
    by_base_name: dict[str, str] = {}
    for entry in injected_files:
        path = _js_trim(entry.path) if isinstance(entry.path, str) else ""
        if not path:
            continue
        by_path.setdefault(path, entry.content)
        by_base_name.setdefault(_basename(path), entry.content)
    stats: list[BootstrapInjectionStat] = []
    for file in bootstrap_files:
        path = _js_trim(file.path) if isinstance(file.path, str) else ""
        if file.missing:
            raw = 0
        elif file.content_length is not None:
            raw = file.content_length
        else:
            raw = utf16_length((file.content or "").rstrip(_JS_WHITESPACE))
        injected = by_path.get(path) if path else None
        if injected is None:
            injected = by_path.get(file.name)
        if injected is None:
            injected = by_base_name.get(file.name)
        injected_chars = utf16_length(injected) if injected else 0
        stats.append(
            BootstrapInjectionStat(
                name=file.name,
                path=path or file.name,
                missing=file.missing,
                raw_chars=raw,
                injected_chars=injected_chars,
                truncated=not file.missing and injected_chars < raw,
            )
        )
    return stats


def _positive_limit(value: float) -> int:
    """``normalizePositiveLimit``: a non-finite or non-positive limit becomes 1; floored."""
    if not math.isfinite(value) or value <= 0:
        return 1
    return math.floor(value)


def _stat_fields(stat: BootstrapInjectionStat) -> dict[str, Any]:
    """The :class:`BootstrapInjectionStat` fields of ``stat``, for the analyzed file built on it
    (only the stat's own fields, also when ``stat`` is an analyzed file already)."""
    return {field.name: getattr(stat, field.name) for field in fields(BootstrapInjectionStat)}


def analyze_bootstrap_budget(
    files: Sequence[BootstrapInjectionStat],
    *,
    bootstrap_max_chars: float,
    bootstrap_total_max_chars: float,
    near_limit_ratio: float | None = None,
) -> BootstrapBudgetAnalysis:
    """``analyzeBootstrapBudget``: per-file causes and near-limit flags, and the totals.

    Limits are normalized (non-finite or non-positive → 1, floored). ``near_limit_ratio``
    outside ``(0, 1)`` (or ``None``) means 0.85. The totals count present files; the total is
    near its limit when the injected total reaches ``ceil(total * ratio)`` and over it when it
    reaches the total budget. A present file is near its limit when its raw length reaches
    ``ceil(max * ratio)``; a truncated file's causes are ``per-file-limit`` (raw length over
    the per-file budget) and/or ``total-limit`` (total over its budget)."""
    max_chars = _positive_limit(bootstrap_max_chars)
    total_max = _positive_limit(bootstrap_total_max_chars)
    ratio = DEFAULT_BOOTSTRAP_NEAR_LIMIT_RATIO
    if (
        isinstance(near_limit_ratio, int | float)
        and not isinstance(near_limit_ratio, bool)
        and math.isfinite(near_limit_ratio)
        and 0 < near_limit_ratio < 1
    ):
        ratio = float(near_limit_ratio)
    present = [file for file in files if not file.missing]
    raw_total = sum(file.raw_chars for file in present)
    injected_total = sum(file.injected_chars for file in present)
    total_near = injected_total >= math.ceil(total_max * ratio)
    total_over = injected_total >= total_max

    analyzed: list[BootstrapAnalyzedFile] = []
    for file in files:
        near = False
        causes: list[BootstrapTruncationCause] = []
        if not file.missing:
            near = file.raw_chars >= math.ceil(max_chars * ratio)
            if file.truncated:
                if file.raw_chars > max_chars:
                    causes.append("per-file-limit")
                if total_over:
                    causes.append("total-limit")
        analyzed.append(
            BootstrapAnalyzedFile(**_stat_fields(file), near_limit=near, causes=tuple(causes))
        )
    truncated = tuple(file for file in analyzed if file.truncated)
    return BootstrapBudgetAnalysis(
        files=tuple(analyzed),
        truncated_files=truncated,
        near_limit_files=tuple(file for file in analyzed if file.near_limit),
        total_near_limit=total_near,
        has_truncation=bool(truncated),
        raw_chars=raw_total,
        injected_chars=injected_total,
        truncated_chars=max(0, raw_total - injected_total),
        bootstrap_max_chars=max_chars,
        bootstrap_total_max_chars=total_max,
        near_limit_ratio=ratio,
    )


# ---------------------------------------------------------------------------------------------
# Signature and warning
# ---------------------------------------------------------------------------------------------


def _collation_key(text: str) -> tuple[tuple[tuple[int, str], ...], str]:
    """An approximation of JavaScript's ``localeCompare`` (ICU root collation) for paths:
    punctuation before digits before letters, letters compared case-insensitively first, then
    lower case before upper case."""
    primary = tuple(
        (2 if char.isalpha() else 1 if char.isdigit() else 0, char.casefold()) for char in text
    )
    return primary, text.swapcase()


def _json_stringify(value: object) -> str:
    """Compact ``JSON.stringify`` of plain data (a lone surrogate escaped as ``\\udXXX``)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def build_bootstrap_truncation_signature(analysis: BootstrapBudgetAnalysis) -> str | None:
    """``buildBootstrapTruncationSignature``: ``None`` without truncation, else the compact JSON
    ``{"bootstrapMaxChars", "bootstrapTotalMaxChars", "files": [{"path", "rawChars",
    "injectedChars", "causes"}]}`` of the truncated files (causes sorted), sorted by path, raw
    length, injected length and causes. Upstream sorts paths with ``localeCompare``; clawctx
    approximates its collation (:func:`_collation_key`), so the order of paths that differ only
    in punctuation or case may differ from upstream's; equal situations always give equal
    signatures."""
    if not analysis.has_truncation:
        return None
    entries = sorted(
        (
            (
                file.path or file.name,
                file.raw_chars,
                file.injected_chars,
                tuple(sorted(file.causes)),
            )
            for file in analysis.truncated_files
        ),
        key=lambda entry: (_collation_key(entry[0]), entry[1], entry[2], "+".join(entry[3])),
    )
    return _json_stringify(
        {
            "bootstrapMaxChars": analysis.bootstrap_max_chars,
            "bootstrapTotalMaxChars": analysis.bootstrap_total_max_chars,
            "files": [
                {"path": path, "rawChars": raw, "injectedChars": injected, "causes": list(causes)}
                for path, raw, injected, causes in entries
            ],
        }
    )


def _max_files(value: object) -> int:
    if (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    ):
        return math.floor(value)
    return DEFAULT_BOOTSTRAP_PROMPT_WARNING_MAX_FILES


def format_bootstrap_truncation_warning_lines(
    analysis: BootstrapBudgetAnalysis, *, max_files: float | None = None
) -> list[str]:
    """``formatBootstrapTruncationWarningLines``: no lines without truncation; else one line per
    truncated file, in file order, for at most ``max_files`` files (default 3; a non-positive or
    non-finite value means 3)::

        AGENTS.md: 25000 raw -> 20000 injected (~20% removed; max/file).

    (the share rounded half up; causes ``max/file`` / ``max/total``, the part after ``;`` left
    out without causes; a name shared by several truncated files gets its path in brackets),
    then ``+<n> more truncated file(s).`` when files were left out, and a last line naming
    ``agents.defaults.bootstrapMaxChars`` and ``agents.defaults.bootstrapTotalMaxChars``."""
    if not analysis.has_truncation:
        return []
    limit = _max_files(max_files)
    name_counts: dict[str, int] = {}
    for file in analysis.truncated_files:
        name_counts[file.name] = name_counts.get(file.name, 0) + 1
    shown = analysis.truncated_files[:limit]
    lines: list[str] = []
    for file in shown:
        share = (file.raw_chars - file.injected_chars) / file.raw_chars * 100
        percent = math.floor(share + 0.5) if file.raw_chars > 0 else 0  # Math.round
        causes = ", ".join(
            "max/file" if cause == "per-file-limit" else "max/total" for cause in file.causes
        )
        label = file.name
        if name_counts[file.name] > 1 and _js_trim(file.path):
            label = f"{file.name} ({file.path})"
        suffix = f"; {causes}" if causes else ""
        lines.append(
            f"{label}: {file.raw_chars} raw -> {file.injected_chars} injected "
            f"(~{max(0, percent)}% removed{suffix})."
        )
    if len(analysis.truncated_files) > len(shown):
        lines.append(f"+{len(analysis.truncated_files) - len(shown)} more truncated file(s).")
    lines.append(_LIMITS_HINT)
    return lines


def build_bootstrap_prompt_warning(
    analysis: BootstrapBudgetAnalysis,
    mode: BootstrapPromptWarningMode,
    *,
    previous_signature: str | None = None,
    seen_signatures: Iterable[str] | None = None,
    max_files: float | None = None,
) -> BootstrapPromptWarning:
    """``buildBootstrapPromptWarning``: whether to show the truncation warning this run.

    ``seen_signatures`` are the session's remembered signatures (normalized: trimmed, blanks
    and repeats dropped), ``previous_signature`` the last run's (added when not among them).
    With a truncation signature, ``always`` shows the warning, ``once`` only when the signature
    was not seen, ``off`` never. Except in ``off`` mode the signature is added to the returned
    ``warning_signatures_seen`` (the last 32 kept); in ``off`` mode they are returned
    unchanged."""
    if mode not in BOOTSTRAP_PROMPT_WARNING_MODES:
        raise ValueError(f"mode must be one of off, once, always; got {mode!r}")
    signature = build_bootstrap_truncation_signature(analysis)
    seen = _normalize_seen(seen_signatures)
    if previous_signature and previous_signature not in seen:
        seen = _append_seen(seen, previous_signature)
    already_seen = signature is not None and signature in seen
    shown = mode != "off" and signature is not None and (mode == "always" or not already_seen)
    if signature is not None and mode != "off":
        seen = _append_seen(seen, signature)
    lines = format_bootstrap_truncation_warning_lines(analysis, max_files=max_files)
    return BootstrapPromptWarning(
        signature=signature,
        warning_shown=shown,
        lines=tuple(lines) if shown else (),
        warning_signatures_seen=tuple(seen),
    )


def build_bootstrap_truncation_report_meta(
    analysis: BootstrapBudgetAnalysis,
    mode: BootstrapPromptWarningMode,
    warning: BootstrapPromptWarning,
) -> dict[str, object]:
    """``buildBootstrapTruncationReportMeta``: the ``bootstrapTruncation`` part of upstream's
    system prompt report, with upstream's keys, for a runtime that stores it (as the session
    store entry does) and later reads it back with
    :func:`resolve_bootstrap_warning_signatures_seen`. ``promptWarningSignature`` is left out
    without a signature and ``warningSignaturesSeen`` when empty."""
    meta: dict[str, object] = {"warningMode": mode, "warningShown": warning.warning_shown}
    if warning.signature is not None:
        meta["promptWarningSignature"] = warning.signature
    if warning.warning_signatures_seen:
        meta["warningSignaturesSeen"] = list(warning.warning_signatures_seen)
    meta["truncatedFiles"] = len(analysis.truncated_files)
    meta["nearLimitFiles"] = len(analysis.near_limit_files)
    meta["totalNearLimit"] = analysis.total_near_limit
    return meta
