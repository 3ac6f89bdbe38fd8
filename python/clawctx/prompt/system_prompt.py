"""The agent system prompt, built the way OpenClaw builds it (OpenClaw 2026.3.13
`src/agents/system-prompt.ts`, ``buildAgentSystemPrompt``).

:func:`build_system_prompt` turns a :class:`SystemPromptParams` into the exact text upstream's
``buildAgentSystemPrompt`` emits for the baseline generation (the 2026.3.13 release): each section
yields a flat list of entries, falsy entries are dropped and the rest joined with ``"\\n"``, so
there are no blank lines between sections.

Sections are data. :data:`OPENCLAW_LAYOUT` is the default preset, the 26 sections of
``buildAgentSystemPrompt`` in order; a :class:`SystemPromptLayout` derived from it with
``with_section`` / ``without`` / ``replacing`` adds, drops or swaps sections without touching the
preset.

Helpers for the pieces other code needs on their own: tool lines (``toolOrder``,
``coreToolSummaries``), the skills block (`src/agents/skills/workspace.ts`), owner ids
(``buildOwnerIdentityLine``), the runtime line (``buildRuntimeLine``), the sub-agent prompt
(`src/agents/subagent-announce.ts`, ``buildSubagentSystemPrompt``) and the modifiers applied after
building (`src/agents/pi-embedded-runner/run/attempt.ts`).

Strings the spec only summarises (the Sandbox lines, the four ACP routing lines, the empty
tool-list fallback, the reaction bullets, the sub-agent rules) reproduce the upstream text of
the baseline generation; the deliverable channel list of the message-tool line depends on the
channels a runtime has registered, so it is a parameter here.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, Literal

from clawctx._js import JS_WHITESPACE as _JS_WHITESPACE
from clawctx._js import js_trim as _js_trim
from clawctx.history.heartbeat import HEARTBEAT_TOKEN

__all__ = [
    "DEFAULT_MESSAGE_CHANNEL_OPTIONS",
    "IDENTITY_LINE",
    "OPENCLAW_LAYOUT",
    "TOOL_ORDER",
    "ContextFile",
    "ElevatedLevel",
    "OwnerDisplay",
    "PromptMode",
    "ReactionGuidance",
    "RuntimeInfo",
    "SandboxInfo",
    "Skill",
    "SystemPromptLayout",
    "SystemPromptParams",
    "SystemPromptSection",
    "apply_system_prompt_modifiers",
    "build_extra_system_prompt",
    "build_runtime_line",
    "build_subagent_system_prompt",
    "build_system_prompt",
    "format_owner_ids",
    "format_skills_for_prompt",
    "format_tool_lines",
    "is_subagent_session_key",
    "resolve_prompt_mode",
    "sanitize_for_prompt_literal",
]

PromptMode = Literal["full", "minimal", "none"]
OwnerDisplay = Literal["raw", "hash"]
ElevatedLevel = Literal["on", "off", "ask", "full"]

#: The first line of every prompt, and the whole prompt in mode ``"none"``.
IDENTITY_LINE: Final = "You are a personal assistant running inside OpenClaw."

#: ``toolOrder``: known tools are listed in this order; unknown tools follow, sorted.
TOOL_ORDER: Final[tuple[str, ...]] = (
    "read",
    "write",
    "edit",
    "apply_patch",
    "grep",
    "find",
    "ls",
    "exec",
    "process",
    "web_search",
    "web_fetch",
    "browser",
    "canvas",
    "nodes",
    "cron",
    "message",
    "gateway",
    "agents_list",
    "sessions_list",
    "sessions_history",
    "sessions_send",
    "subagents",
    "session_status",
    "image",
)

#: buildMessagingSection: the channel ids offered in the message-tool line. Upstream lists the
#: channels the running gateway can deliver to (core channels plus plugins); this default is the
#: baseline's core channel list. Text not pinned by the spec: pass the ids your runtime can deliver
#: to.
DEFAULT_MESSAGE_CHANNEL_OPTIONS: Final[tuple[str, ...]] = (
    "telegram",
    "whatsapp",
    "discord",
    "irc",
    "googlechat",
    "slack",
    "signal",
    "imessage",
    "line",
)

_JS_WHITESPACE_RUN: Final = re.compile(f"[{_JS_WHITESPACE}]+")
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _trimmed_or_none(text: str | None) -> str | None:
    """Trims (as ``buildAgentSystemPrompt`` does its text inputs); empty after trimming counts as
    absent."""
    if text is None:
        return None
    return _js_trim(text) or None


def _utf8(text: str) -> bytes:
    # Node encodes lone surrogates as U+FFFD; Python would raise.
    return _LONE_SURROGATE.sub("\ufffd", text).encode("utf-8")


# ---------------------------------------------------------------------------------------------
# Inputs (buildAgentSystemPrompt params)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ContextFile:
    """One Project Context file (`src/agents/workspace.ts`, ``loadWorkspaceBootstrapFiles``):
    ``path`` is shown as the ``## <path>`` header."""

    path: str
    content: str


@dataclass(frozen=True, slots=True)
class RuntimeInfo:
    """Where the agent runs, rendered as the Runtime line (``buildRuntimeLine``)."""

    agent_id: str | None = None
    host: str | None = None
    os: str | None = None
    arch: str | None = None
    node: str | None = None
    model: str | None = None
    default_model: str | None = None
    shell: str | None = None
    channel: str | None = None
    capabilities: tuple[str, ...] | None = None
    repo_root: str | None = None

    def __post_init__(self) -> None:
        if self.capabilities is not None and not isinstance(self.capabilities, tuple):
            object.__setattr__(self, "capabilities", tuple(self.capabilities))


@dataclass(frozen=True, slots=True)
class SandboxInfo:
    """The sandbox a session runs in (the ``## Workspace`` and ``## Sandbox`` sections;
    upstream test `src/agents/system-prompt.test.ts`).

    ``workspace_dir`` is the host directory mounted into the container (the file-tool bridge),
    ``container_workspace_dir`` the working directory inside it. ``elevated_allowed`` /
    ``elevated_default_level`` are upstream's ``elevated: {allowed, defaultLevel}``; the
    "Current elevated level" line is omitted when no level is given.
    """

    enabled: bool = False
    workspace_dir: str | None = None
    container_workspace_dir: str | None = None
    workspace_access: Literal["none", "ro", "rw"] | None = None
    agent_workspace_mount: str | None = None
    browser_bridge_url: str | None = None
    browser_no_vnc_url: str | None = None
    host_browser_allowed: bool | None = None
    elevated_allowed: bool = False
    elevated_default_level: ElevatedLevel | None = None


@dataclass(frozen=True, slots=True)
class ReactionGuidance:
    """Reaction policy of the current channel (the ``## Reactions`` section)."""

    level: Literal["minimal", "extensive"]
    channel: str


_StrTuple = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SystemPromptParams:
    """Every input of ``buildAgentSystemPrompt`` (system-prompt.ts), snake_case, same defaults.

    Text inputs upstream trims are trimmed while rendering, so the stored
    values are what the caller passed. ``user_time`` / ``user_time_format`` are accepted and
    never rendered (``buildTimeSection``, prompt-cache stability). Sequence fields accept any
    sequence and are stored as tuples; ``tool_summaries`` is stored read-only.
    ``bootstrap_truncation_warning_lines`` (upstream ``bootstrapTruncationWarningLines``) are
    the lines of the bootstrap truncation warning: non-blank ones are listed under
    ``⚠ Bootstrap truncation warning:`` in Project Context, which they open even without
    context files.
    ``message_channel_options`` (the ids in the message-tool line) and ``keep_skills_in_minimal``
    are facade additions; their defaults are the baseline. 2026.3.13 keeps the Skills section in
    minimal mode (``keep_skills_in_minimal=True``); ``False`` drops it there, as earlier builds
    did.
    """

    workspace_dir: str
    default_think_level: str | None = None
    reasoning_level: str = "off"
    extra_system_prompt: str | None = None
    owner_numbers: _StrTuple = ()
    owner_display: OwnerDisplay = "raw"
    owner_display_secret: str | None = None
    reasoning_tag_hint: bool = False
    tool_names: _StrTuple = ()
    tool_summaries: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    model_alias_lines: _StrTuple = ()
    user_timezone: str | None = None
    user_time: str | None = None
    user_time_format: Literal["12", "24"] | None = None
    context_files: tuple[ContextFile, ...] = ()
    bootstrap_truncation_warning_lines: _StrTuple = ()
    skills_prompt: str | None = None
    heartbeat_prompt: str | None = None
    docs_path: str | None = None
    workspace_notes: _StrTuple = ()
    tts_hint: str | None = None
    prompt_mode: PromptMode = "full"
    acp_enabled: bool = True
    runtime_info: RuntimeInfo | None = None
    message_tool_hints: _StrTuple = ()
    sandbox_info: SandboxInfo | None = None
    reaction_guidance: ReactionGuidance | None = None
    memory_citations_mode: str | None = None
    message_channel_options: _StrTuple = DEFAULT_MESSAGE_CHANNEL_OPTIONS
    keep_skills_in_minimal: bool = True

    def __post_init__(self) -> None:
        # Callers pass lists; the params object stays immutable either way.
        for name in (
            "owner_numbers",
            "tool_names",
            "model_alias_lines",
            "context_files",
            "bootstrap_truncation_warning_lines",
            "workspace_notes",
            "message_tool_hints",
            "message_channel_options",
        ):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))
        if not isinstance(self.tool_summaries, MappingProxyType):
            object.__setattr__(self, "tool_summaries", MappingProxyType(dict(self.tool_summaries)))


# ---------------------------------------------------------------------------------------------
# Prompt mode (system-prompt.ts, PromptMode)
# ---------------------------------------------------------------------------------------------


def _agent_session_rest(session_key: str) -> str | None:
    parts = [part for part in session_key.split(":") if part]
    if len(parts) < 3 or parts[0] != "agent" or not _js_trim(parts[1]):
        return None
    return ":".join(parts[2:])


def is_subagent_session_key(session_key: str | None) -> bool:
    """True for ``subagent:<…>`` and ``agent:<id>:subagent:<…>`` keys, case-insensitively
    (upstream ``isSubagentSessionKey``, `src/sessions/session-key-utils.ts`)."""
    raw = _js_trim(session_key or "")
    if not raw:
        return False
    if raw.lower().startswith("subagent:"):
        return True
    rest = _agent_session_rest(raw)
    return rest is not None and rest.lower().startswith("subagent:")


def resolve_prompt_mode(session_key: str | None, *, cron_minimal: bool = False) -> PromptMode:
    """``resolvePromptModeForSession`` (run/attempt.ts): no key → ``"full"``; a sub-agent key →
    ``"minimal"``; else ``"full"``.

    ``cron_minimal=True`` adds the [later] rule: ``agent:<id>:cron:<…>`` keys → ``"minimal"``.
    """
    if not session_key:
        return "full"
    if is_subagent_session_key(session_key):
        return "minimal"
    if cron_minimal:
        rest = _agent_session_rest(_js_trim(session_key))
        if rest is not None and rest.lower().startswith("cron:"):
            return "minimal"
    return "full"


def _is_minimal(params: SystemPromptParams) -> bool:
    # PromptMode: "none" counts as minimal too.
    return params.prompt_mode in ("minimal", "none")


# ---------------------------------------------------------------------------------------------
# Literal sanitising (src/agents/sanitize-for-prompt.ts)
# ---------------------------------------------------------------------------------------------


def sanitize_for_prompt_literal(value: str) -> str:
    """Removes Unicode control (Cc) and format (Cf) characters and U+2028/U+2029, so a path
    stays one line inside the prompt (upstream ``sanitizeForPromptLiteral``).

    Tabs are removed too (baseline; later upstream keeps them).
    """
    if value.isascii() and value.isprintable():
        return value
    return "".join(
        char
        for char in value
        if char not in "\u2028\u2029" and unicodedata.category(char) not in ("Cc", "Cf")
    )


# ---------------------------------------------------------------------------------------------
# Tool list (buildAgentSystemPrompt: toolOrder, coreToolSummaries)
# ---------------------------------------------------------------------------------------------

_CORE_TOOL_SUMMARIES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "read": "Read file contents",
        "write": "Create or overwrite files",
        "edit": "Make precise edits to files",
        "apply_patch": "Apply multi-file patches",
        "grep": "Search file contents for patterns",
        "find": "Find files by glob pattern",
        "ls": "List directory contents",
        "exec": "Run shell commands (pty available for TTY-required CLIs)",
        "process": "Manage background exec sessions",
        "web_search": "Search the web (Brave API)",
        "web_fetch": "Fetch and extract readable content from a URL",
        "browser": "Control web browser",
        "canvas": "Present/eval/snapshot the Canvas",
        "nodes": "List/describe/notify/camera/screen on paired nodes",
        "cron": (
            "Manage cron jobs and wake events (use for reminders; when scheduling a reminder, "
            "write the systemEvent text as something that will read like a reminder when it "
            "fires, and mention that it is a reminder depending on the time gap between setting "
            "and firing; include recent context in reminder text if appropriate)"
        ),
        "message": "Send messages and channel actions",
        "gateway": "Restart, apply config, or run updates on the running OpenClaw process",
        "agents_list": "List OpenClaw agent ids allowed for sessions_spawn",
        "sessions_list": "List other sessions (incl. sub-agents) with filters/last",
        "sessions_history": "Fetch history for another session/sub-agent",
        "sessions_send": "Send a message to another session/sub-agent",
        "sessions_spawn": "Spawn an isolated sub-agent session",
        "subagents": "List, steer, or kill sub-agent runs for this requester session",
        "session_status": (
            "Show a /status-equivalent status card (usage + time + Reasoning/Verbose/Elevated); "
            "use for model-use questions (📊 session_status); optional per-session model "
            "override"
        ),
        "image": "Analyze an image with the configured image model",
    }
)
# coreToolSummaries: the variants used when ACP harness spawns are possible (ACP on, not sandboxed).
_ACP_TOOL_SUMMARIES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "agents_list": (
            'List OpenClaw agent ids allowed for sessions_spawn when runtime="subagent" '
            "(not ACP harness ids)"
        ),
        "sessions_spawn": (
            'Spawn an isolated sub-agent or ACP coding session (runtime="acp" requires '
            "`agentId` unless `acp.defaultAgent` is configured; ACP harness ids follow "
            "acp.allowedAgents, not agents_list)"
        ),
    }
)
# buildAgentSystemPrompt: emitted instead of the list when no tool is given (exec/process keep these
# names because no caller spelling exists then).
_EMPTY_TOOL_LIST_FALLBACK: Final[tuple[str, ...]] = (
    "Pi lists the standard tools above. This runtime enables:",
    "- grep: search file contents for patterns",
    "- find: find files by glob pattern",
    "- ls: list directory contents",
    "- apply_patch: apply multi-file patches",
    "- exec: run shell commands (supports background via yieldMs/background)",
    "- process: manage background exec sessions",
    "- browser: control OpenClaw's dedicated browser",
    "- canvas: present/eval/snapshot the Canvas",
    "- nodes: list/describe/notify/camera/screen on paired nodes",
    "- cron: manage cron jobs and wake events (use for reminders; when scheduling a reminder, "
    "write the systemEvent text as something that will read like a reminder when it fires, and "
    "mention that it is a reminder depending on the time gap between setting and firing; "
    "include recent context in reminder text if appropriate)",
    "- sessions_list: list sessions",
    "- sessions_history: fetch session history",
    "- sessions_send: send to another session",
    "- subagents: list/steer/kill sub-agent runs",
    '- session_status: show usage/time/model state and answer "what model are we using?"',
)


@dataclass(frozen=True, slots=True)
class _ToolSet:
    """Tool names deduplicated case-insensitively, first caller spelling kept (as upstream)."""

    display_by_normalized: Mapping[str, str]

    @classmethod
    def of(cls, tool_names: Sequence[str]) -> _ToolSet:
        display: dict[str, str] = {}
        for raw in tool_names:
            name = _js_trim(raw)
            if name:
                display.setdefault(name.lower(), name)
        return cls(display)

    def has(self, normalized: str) -> bool:
        return normalized in self.display_by_normalized

    def name(self, normalized: str) -> str:
        """The caller's spelling of a tool, or the lower-case name when not given."""
        return self.display_by_normalized.get(normalized, normalized)


def _utf16_sort_key(text: str) -> bytes:
    # JS Array.prototype.sort compares UTF-16 code units; big-endian UTF-16 bytes order alike.
    return text.encode("utf-16-be", "surrogatepass")


def format_tool_lines(
    tool_names: Sequence[str],
    tool_summaries: Mapping[str, str] | None = None,
    *,
    acp_spawn_enabled: bool = True,
) -> list[str]:
    """The tool list of the Tooling section (``buildAgentSystemPrompt``).

    Names are trimmed, empties dropped and deduplicated case-insensitively keeping the first
    spelling. Known tools come in :data:`TOOL_ORDER`; the rest follow sorted by lower-case name
    in UTF-16 code-unit order (JS default sort). Each line is ``- <name>: <summary>`` or
    ``- <name>``; summaries come from the built-in table first, then ``tool_summaries`` (keys
    trimmed and lower-cased, values trimmed, blanks ignored). ``acp_spawn_enabled`` (ACP on and
    not sandboxed) selects the ACP variants of the ``agents_list`` / ``sessions_spawn``
    summaries. No tools → upstream's fixed fallback block.
    """
    tools = _ToolSet.of(tool_names)
    if not tools.display_by_normalized:
        return list(_EMPTY_TOOL_LIST_FALLBACK)
    external: dict[str, str] = {}
    for key, value in (tool_summaries or {}).items():
        normalized_key = _js_trim(key).lower()
        summary = _js_trim(value) if value else ""
        if normalized_key and summary:
            external[normalized_key] = summary
    core = dict(_CORE_TOOL_SUMMARIES)
    if acp_spawn_enabled:
        core.update(_ACP_TOOL_SUMMARIES)

    def line(normalized: str) -> str:
        summary = core.get(normalized) or external.get(normalized)
        name = tools.name(normalized)
        return f"- {name}: {summary}" if summary else f"- {name}"

    known = [tool for tool in TOOL_ORDER if tools.has(tool)]
    unknown = sorted(
        (tool for tool in tools.display_by_normalized if tool not in TOOL_ORDER),
        key=_utf16_sort_key,
    )
    return [line(tool) for tool in (*known, *unknown)]


# ---------------------------------------------------------------------------------------------
# Skills (skills/workspace.ts; pi-mono 0.58.3 core/skills.ts)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Skill:
    """A skill offered to the model: its name, one-line description and SKILL.md location
    (``buildWorkspaceSkillsPrompt``). Skills with ``disable_model_invocation`` are not listed."""

    name: str
    description: str
    location: str
    disable_model_invocation: bool = False


def _escape_xml(text: str) -> str:
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def format_skills_for_prompt(skills: Sequence[Skill]) -> str:
    """The ``<available_skills>`` block (pi-mono 0.58.3
    `packages/coding-agent/src/core/skills.ts`, ``formatSkillsForPrompt``): ``""`` when no skill is
    visible.

    The text starts with two newlines (pi's format); the system prompt trims them.
    """
    visible = [skill for skill in skills if not skill.disable_model_invocation]
    if not visible:
        return ""
    parts = [
        "\n\nThe following skills provide specialized instructions for specific tasks.\n"
        "Use the read tool to load a skill's file when the task matches its description.\n\n"
        "<available_skills>"
    ]
    for skill in visible:
        parts.append(
            "\n  <skill>"
            f"\n    <name>{_escape_xml(skill.name)}</name>"
            f"\n    <description>{_escape_xml(skill.description)}</description>"
            f"\n    <location>{_escape_xml(skill.location)}</location>"
            "\n  </skill>"
        )
    parts.append("\n</available_skills>")
    return "".join(parts)


# ---------------------------------------------------------------------------------------------
# Owner ids (buildOwnerIdentityLine, formatOwnerDisplayId)
# ---------------------------------------------------------------------------------------------


def format_owner_ids(
    owner_numbers: Sequence[str],
    *,
    display: str = "raw",
    secret: str | None = None,
) -> list[str]:
    """Owner ids as the Authorized Senders line shows them (``buildOwnerIdentityLine``,
    ``formatOwnerDisplayId``: trimmed, blanks dropped, raw or a 12-hex SHA-256 / HMAC).

    Ids are trimmed and blanks dropped. ``display="hash"`` replaces each id by the first 12
    lower-case hex digits of SHA-256 of the trimmed id (UTF-8), or of HMAC-SHA256 keyed with the
    trimmed ``secret`` when that is not blank; any other ``display`` shows ids verbatim.
    """
    ids = [trimmed for trimmed in (_js_trim(raw) for raw in owner_numbers) if trimmed]
    if display != "hash":
        return ids
    key = _js_trim(secret or "")
    if key:
        return [hmac.new(_utf8(key), _utf8(i), hashlib.sha256).hexdigest()[:12] for i in ids]
    return [hashlib.sha256(_utf8(i)).hexdigest()[:12] for i in ids]


# ---------------------------------------------------------------------------------------------
# Runtime line (buildRuntimeLine)
# ---------------------------------------------------------------------------------------------


def _normalized_channel(info: RuntimeInfo) -> str:
    # buildAgentSystemPrompt: runtimeInfo.channel trimmed and lower-cased.
    return _js_trim(info.channel or "").lower()


def _normalized_capabilities(info: RuntimeInfo) -> list[str]:
    # buildAgentSystemPrompt: runtimeInfo.capabilities trimmed, blanks dropped.
    return [cap for cap in (_js_trim(str(c)) for c in info.capabilities or ()) if cap]


def build_runtime_line(
    runtime: RuntimeInfo | None,
    channel: str | None = None,
    capabilities: Sequence[str] | None = None,
    default_think_level: str | None = None,
) -> str:
    """``Runtime: `` + the present fields joined by `` | `` (``buildRuntimeLine``).

    Order: agent, host, repo, os (``os=<os> (<arch>)``, or ``arch=<arch>`` without os), node,
    model, default_model, shell, channel (as given), capabilities (only with a channel: the
    entries joined with ``,`` as given, blanks included, or ``none`` for no entries), thinking
    (``off`` when None). A field is present when it is a non-empty string (whitespace counts).

    When ``channel`` / ``capabilities`` are None they are taken from ``runtime`` the way
    ``buildAgentSystemPrompt`` derives them (channel trimmed and lower-cased, capabilities
    trimmed with blanks dropped), so the line matches the system prompt's; upstream's
    ``buildRuntimeLine`` itself reads neither from its ``runtimeInfo``.
    """
    if channel is None and runtime is not None:
        channel = _normalized_channel(runtime)
    if capabilities is None and runtime is not None:
        capabilities = _normalized_capabilities(runtime)
    caps = ",".join("" if cap is None else str(cap) for cap in capabilities or ())
    info = runtime or RuntimeInfo()
    fields = [
        f"agent={info.agent_id}" if info.agent_id else "",
        f"host={info.host}" if info.host else "",
        f"repo={info.repo_root}" if info.repo_root else "",
        (
            f"os={info.os}{f' ({info.arch})' if info.arch else ''}"
            if info.os
            else (f"arch={info.arch}" if info.arch else "")
        ),
        f"node={info.node}" if info.node else "",
        f"model={info.model}" if info.model else "",
        f"default_model={info.default_model}" if info.default_model else "",
        f"shell={info.shell}" if info.shell else "",
        f"channel={channel}" if channel else "",
        (f"capabilities={caps if capabilities else 'none'}" if channel else ""),
        f"thinking={'off' if default_think_level is None else default_think_level}",
    ]
    return "Runtime: " + " | ".join(item for item in fields if item)


# ---------------------------------------------------------------------------------------------
# Sections (buildAgentSystemPrompt)
# ---------------------------------------------------------------------------------------------

SectionRender = Callable[[SystemPromptParams], Sequence[str]]


@dataclass(frozen=True, slots=True)
class SystemPromptSection:
    """One named section of the prompt (``buildAgentSystemPrompt``): ``render`` returns the
    section's flat entries (``""`` entries are spacers that the final join drops), or nothing when
    it is omitted."""

    name: str
    render: SectionRender


def _tools(params: SystemPromptParams) -> _ToolSet:
    return _ToolSet.of(params.tool_names)


def _sandboxed(params: SystemPromptParams) -> bool:
    return params.sandbox_info is not None and params.sandbox_info.enabled


def _runtime_channel(params: SystemPromptParams) -> str:
    info = params.runtime_info
    return _normalized_channel(info) if info else ""


def _runtime_capabilities(params: SystemPromptParams) -> list[str]:
    info = params.runtime_info
    return _normalized_capabilities(info) if info else []


def _render_identity(params: SystemPromptParams) -> list[str]:
    return [IDENTITY_LINE, ""]


def _render_tooling(params: SystemPromptParams) -> list[str]:
    tools = _tools(params)
    acp_spawn_enabled = params.acp_enabled and not _sandboxed(params)
    exec_name, process_name = tools.name("exec"), tools.name("process")
    lines = [
        "## Tooling",
        "Tool availability (filtered by policy):",
        "Tool names are case-sensitive. Call tools exactly as listed.",
        "\n".join(
            format_tool_lines(
                params.tool_names, params.tool_summaries, acp_spawn_enabled=acp_spawn_enabled
            )
        ),
        "TOOLS.md does not control tool availability; it is user guidance for how to use "
        "external tools.",
        f"For long waits, avoid rapid poll loops: use {exec_name} with enough yieldMs or "
        f"{process_name}(action=poll, timeout=<ms>).",
        "If a task is more complex or takes longer, spawn a sub-agent. Completion is "
        "push-based: it will auto-announce when done.",
    ]
    if tools.has("sessions_spawn") and acp_spawn_enabled:
        lines += [
            'For requests like "do this in codex/claude code/gemini", treat it as ACP harness '
            'intent and call `sessions_spawn` with `runtime: "acp"`.',
            "On Discord, default ACP harness requests to thread-bound persistent sessions "
            '(`thread: true`, `mode: "session"`) unless the user asks otherwise.',
            "Set `agentId` explicitly unless `acp.defaultAgent` is configured, and do not route "
            "ACP harness requests through `subagents`/`agents_list` or local PTY exec flows.",
            "For ACP harness thread spawns, do not call `message` with `action=thread-create`; "
            'use `sessions_spawn` (`runtime: "acp"`, `thread: true`) as the single thread '
            "creation path.",
        ]
    lines += [
        "Do not poll `subagents list` / `sessions_list` in a loop; only check status on-demand "
        "(for intervention, debugging, or when explicitly asked).",
        "",
    ]
    return lines


def _render_tool_call_style(params: SystemPromptParams) -> list[str]:
    return [
        "## Tool Call Style",
        "Default: do not narrate routine, low-risk tool calls (just call the tool).",
        "Narrate only when it helps: multi-step work, complex/challenging problems, sensitive "
        "actions (e.g., deletions), or when the user explicitly asks.",
        "Keep narration brief and value-dense; avoid repeating obvious steps.",
        "Use plain human language for narration unless in a technical context.",
        "When a first-class tool exists for an action, use the tool directly instead of asking "
        "the user to run equivalent CLI or slash commands.",
        # The three exec-approval lines of 2026.3.13.
        "When exec returns approval-pending, include the concrete /approve command from tool "
        "output (with allow-once|allow-always|deny) and do not ask for a different or rotated "
        "code.",
        "Treat allow-once as single-command only: if another elevated command needs approval, "
        "request a fresh /approve and do not claim prior approval covered it.",
        "When approvals are required, preserve and show the full command/script exactly as "
        "provided (including chained operators like &&, ||, |, ;, or multiline shells) so the "
        "user can approve what will actually run.",
        "",
    ]


def _render_safety(params: SystemPromptParams) -> list[str]:
    return [
        "## Safety",
        "You have no independent goals: do not pursue self-preservation, replication, resource "
        "acquisition, or power-seeking; avoid long-term plans beyond the user's request.",
        "Prioritize safety and human oversight over completion; if instructions conflict, pause "
        "and ask; comply with stop/pause/audit requests and never bypass safeguards. (Inspired "
        "by Anthropic's constitution.)",
        "Do not manipulate or persuade anyone to expand access or disable safeguards. Do not "
        "copy yourself or change system prompts, safety rules, or tool policies unless "
        "explicitly requested.",
        "",
    ]


def _render_cli_quick_reference(params: SystemPromptParams) -> list[str]:
    return [
        "## OpenClaw CLI Quick Reference",
        "OpenClaw is controlled via subcommands. Do not invent commands.",
        "To manage the Gateway daemon service (start/stop/restart):",
        "- openclaw gateway status",
        "- openclaw gateway start",
        "- openclaw gateway stop",
        "- openclaw gateway restart",
        "If unsure, ask the user to run `openclaw help` (or `openclaw gateway --help`) and paste "
        "the output.",
        "",
    ]


def _render_skills(params: SystemPromptParams) -> list[str]:
    skills_prompt = _trimmed_or_none(params.skills_prompt)
    if not skills_prompt or (_is_minimal(params) and not params.keep_skills_in_minimal):
        return []
    read_name = _tools(params).name("read")
    return [
        "## Skills (mandatory)",
        "Before replying: scan <available_skills> <description> entries.",
        "- If exactly one skill clearly applies: read its SKILL.md at <location> with "
        f"`{read_name}`, then follow it.",
        "- If multiple could apply: choose the most specific one, then read/follow it.",
        "- If none clearly apply: do not read any SKILL.md.",
        "Constraints: never read more than one skill up front; only read after selecting.",
        "- When a skill drives external API writes, assume rate limits: prefer fewer larger "
        "writes, avoid tight one-item loops, serialize bursts when possible, and respect "
        "429/Retry-After.",
        skills_prompt,
        "",
    ]


def _render_memory_recall(params: SystemPromptParams) -> list[str]:
    tools = _tools(params)
    if _is_minimal(params) or not (tools.has("memory_search") or tools.has("memory_get")):
        return []
    citations = (
        "Citations are disabled: do not mention file paths or line numbers in replies unless "
        "the user explicitly asks."
        if params.memory_citations_mode == "off"
        else "Citations: include Source: <path#line> when it helps the user verify memory snippets."
    )
    return [
        "## Memory Recall",
        "Before answering anything about prior work, decisions, dates, people, preferences, or "
        "todos: run memory_search on MEMORY.md + memory/*.md; then use memory_get to pull only "
        "the needed lines. If low confidence after search, say you checked.",
        citations,
        "",
    ]


def _render_self_update(params: SystemPromptParams) -> list[str]:
    if _is_minimal(params) or not _tools(params).has("gateway"):
        return []
    return [
        "## OpenClaw Self-Update",
        "\n".join(
            (
                "Get Updates (self-update) is ONLY allowed when the user explicitly asks for it.",
                "Do not run config.apply or update.run unless the user explicitly requests an "
                "update or config change; if it's not explicit, ask first.",
                "Use config.schema.lookup with a specific dot path to inspect only the relevant "
                "config subtree before making config changes or answering config-field "
                "questions; avoid guessing field names/types.",
                "Actions: config.schema.lookup, config.get, config.apply (validate + write full "
                "config, then restart), config.patch (partial update, merges with existing), "
                "update.run (update deps or git, then restart).",
                "After restart, OpenClaw pings the last active session automatically.",
            )
        ),
        "",
    ]


def _render_model_aliases(params: SystemPromptParams) -> list[str]:
    if _is_minimal(params) or not params.model_alias_lines:
        return []
    return [
        "## Model Aliases",
        "Prefer aliases when specifying model overrides; full provider/model is also accepted.",
        "\n".join(params.model_alias_lines),
        "",
    ]


def _render_time_hint(params: SystemPromptParams) -> list[str]:
    if not _trimmed_or_none(params.user_timezone):
        return []
    return [
        "If you need the current date, time, or day of week, run session_status "
        "(📊 session_status)."
    ]


def _render_workspace(params: SystemPromptParams) -> list[str]:
    host_dir = sanitize_for_prompt_literal(params.workspace_dir)
    sandbox = params.sandbox_info
    container_dir = ""
    if sandbox is not None and sandbox.enabled and sandbox.container_workspace_dir:
        trimmed = _js_trim(sandbox.container_workspace_dir)
        container_dir = sanitize_for_prompt_literal(trimmed) if trimmed else ""
    if container_dir:
        shown_dir = container_dir
        guidance = (
            "For read/write/edit/apply_patch, file paths resolve against host workspace: "
            f"{host_dir}. For bash/exec commands, use sandbox container paths under "
            f"{container_dir} (or relative paths from that workdir), not host paths. Prefer "
            "relative paths so both sandboxed exec and file tools work consistently."
        )
    else:
        shown_dir = host_dir
        guidance = (
            "Treat this directory as the single global workspace for file operations unless "
            "explicitly instructed otherwise."
        )
    notes = [note for note in (_js_trim(n) for n in params.workspace_notes) if note]
    return ["## Workspace", f"Your working directory is: {shown_dir}", guidance, *notes, ""]


def _render_documentation(params: SystemPromptParams) -> list[str]:
    docs_path = _trimmed_or_none(params.docs_path)
    if not docs_path or _is_minimal(params):
        return []
    return [
        "## Documentation",
        f"OpenClaw docs: {docs_path}",
        "Mirror: https://docs.openclaw.ai",
        "Source: https://github.com/openclaw/openclaw",
        "Community: https://discord.com/invite/clawd",
        "Find new skills: https://clawhub.com",
        "For OpenClaw behavior, commands, config, or architecture: consult local docs first.",
        "When diagnosing issues, run `openclaw status` yourself when possible; only ask the user "
        "if you lack access (e.g., sandboxed).",
        "",
    ]


def _render_sandbox(params: SystemPromptParams) -> list[str]:
    sandbox = params.sandbox_info
    if sandbox is None or not sandbox.enabled:
        return []
    lines = [
        "You are running in a sandboxed runtime (tools execute in Docker).",
        "Some tools may be unavailable due to sandbox policy.",
        "Sub-agents stay sandboxed (no elevated/host access). Need outside-sandbox read/write? "
        "Don't spawn; ask first.",
    ]
    if _tools(params).has("sessions_spawn") and params.acp_enabled:
        lines.append(
            "ACP harness spawns are blocked from sandboxed sessions (`sessions_spawn` with "
            '`runtime: "acp"`). Use `runtime: "subagent"` instead.'
        )
    if sandbox.container_workspace_dir:
        workdir = sanitize_for_prompt_literal(sandbox.container_workspace_dir)
        lines.append(f"Sandbox container workdir: {workdir}")
    if sandbox.workspace_dir:
        lines.append(
            "Sandbox host mount source (file tools bridge only; not valid inside sandbox exec): "
            f"{sanitize_for_prompt_literal(sandbox.workspace_dir)}"
        )
    if sandbox.workspace_access:
        mount = (
            f" (mounted at {sanitize_for_prompt_literal(sandbox.agent_workspace_mount)})"
            if sandbox.agent_workspace_mount
            else ""
        )
        lines.append(f"Agent workspace access: {sandbox.workspace_access}{mount}")
    if sandbox.browser_bridge_url:
        lines.append("Sandbox browser: enabled.")
    if sandbox.browser_no_vnc_url:
        lines.append(
            "Sandbox browser observer (noVNC): "
            f"{sanitize_for_prompt_literal(sandbox.browser_no_vnc_url)}"
        )
    if sandbox.host_browser_allowed is True:
        lines.append("Host browser control: allowed.")
    elif sandbox.host_browser_allowed is False:
        lines.append("Host browser control: blocked.")
    if sandbox.elevated_allowed:
        lines += [
            "Elevated exec is available for this session.",
            "User can toggle with /elevated on|off|ask|full.",
            "You may also send /elevated on|off|ask|full when needed.",
        ]
        if sandbox.elevated_default_level:
            lines.append(
                f"Current elevated level: {sandbox.elevated_default_level} (ask runs exec on "
                "host with approvals; full auto-approves)."
            )
    return ["## Sandbox", "\n".join(line for line in lines if line), ""]


def _render_authorized_senders(params: SystemPromptParams) -> list[str]:
    if _is_minimal(params):
        return []
    ids = format_owner_ids(
        params.owner_numbers, display=params.owner_display, secret=params.owner_display_secret
    )
    if not ids:
        return []
    return [
        "## Authorized Senders",
        f"Authorized senders: {', '.join(ids)}. These senders are allowlisted; do not assume "
        "they are the owner.",
        "",
    ]


def _render_current_date_time(params: SystemPromptParams) -> list[str]:
    timezone = _trimmed_or_none(params.user_timezone)
    if not timezone:
        return []
    return ["## Current Date & Time", f"Time zone: {timezone}", ""]


def _render_workspace_files(params: SystemPromptParams) -> list[str]:
    return [
        "## Workspace Files (injected)",
        "These user-editable files are loaded by OpenClaw and included below in Project Context.",
        "",
    ]


def _render_reply_tags(params: SystemPromptParams) -> list[str]:
    if _is_minimal(params):
        return []
    return [
        "## Reply Tags",
        "To request a native reply/quote on supported surfaces, include one tag in your reply:",
        "- Reply tags must be the very first token in the message (no leading text/newlines): "
        "[[reply_to_current]] your reply.",
        "- [[reply_to_current]] replies to the triggering message.",
        "- Prefer [[reply_to_current]]. Use [[reply_to:<id>]] only when an id was explicitly "
        "provided (e.g. by the user or a tool).",
        "Whitespace inside the tag is allowed (e.g. [[ reply_to_current ]] / [[ reply_to: 123 ]]).",
        "Tags are stripped before sending; support depends on the current channel config.",
        "",
    ]


def _render_messaging(params: SystemPromptParams) -> list[str]:
    if _is_minimal(params):
        return []
    message_tool = ""
    if _tools(params).has("message"):
        channel = _runtime_channel(params)
        caps_lower = {cap.lower() for cap in _runtime_capabilities(params)}
        if "inlinebuttons" in caps_lower:
            buttons = (
                "- Inline buttons supported. Use `action=send` with "
                "`buttons=[[{text,callback_data,style?}]]`; `style` can be `primary`, "
                "`success`, or `danger`."
            )
        elif channel:
            buttons = (
                f"- Inline buttons not enabled for {channel}. If you need them, ask to set "
                f'{channel}.capabilities.inlineButtons ("dm"|"group"|"all"|"allowlist").'
            )
        else:
            buttons = ""
        options = "|".join(params.message_channel_options)
        entries = [
            "### message tool",
            "- Use `message` for proactive sends + channel actions (polls, reactions, etc.).",
            "- For `action=send`, include `to` and `message`.",
            f"- If multiple channels are configured, pass `channel` ({options}).",
            "- If you use `message` (`action=send`) to deliver your user-visible reply, respond "
            "with ONLY: NO_REPLY (avoid duplicate replies).",
            buttons,
            *params.message_tool_hints,
        ]
        message_tool = "\n".join(entry for entry in entries if entry)
    return [
        "## Messaging",
        "- Reply in current session → automatically routes to the source channel (Signal, "
        "Telegram, etc.)",
        "- Cross-session messaging → use sessions_send(sessionKey, message)",
        "- Sub-agent orchestration → use subagents(action=list|steer|kill)",
        "- Runtime-generated completion events may ask for a user update. Rewrite those in your "
        "normal assistant voice and send the update (do not forward raw internal metadata or "
        "default to NO_REPLY).",
        "- Never use exec/curl for provider messaging; OpenClaw handles all routing internally.",
        message_tool,
        "",
    ]


def _render_voice(params: SystemPromptParams) -> list[str]:
    hint = _trimmed_or_none(params.tts_hint)
    if _is_minimal(params) or not hint:
        return []
    return ["## Voice (TTS)", hint, ""]


def _render_extra_context(params: SystemPromptParams) -> list[str]:
    extra = _trimmed_or_none(params.extra_system_prompt)
    if not extra:
        return []
    # buildAgentSystemPrompt: only "minimal" gets the sub-agent header; a full-mode DM gets the
    # group header.
    header = "## Subagent Context" if params.prompt_mode == "minimal" else "## Group Chat Context"
    return [header, extra, ""]


def _render_reactions(params: SystemPromptParams) -> list[str]:
    guidance = params.reaction_guidance
    if guidance is None:
        return []
    if guidance.level == "minimal":
        lines: tuple[str, ...] = (
            f"Reactions are enabled for {guidance.channel} in MINIMAL mode.",
            "React ONLY when truly relevant:",
            "- Acknowledge important user requests or confirmations",
            "- Express genuine sentiment (humor, appreciation) sparingly",
            "- Avoid reacting to routine messages or your own replies",
            "Guideline: at most 1 reaction per 5-10 exchanges.",
        )
    else:
        lines = (
            f"Reactions are enabled for {guidance.channel} in EXTENSIVE mode.",
            "Feel free to react liberally:",
            "- Acknowledge messages with appropriate emojis",
            "- Express sentiment and personality through reactions",
            "- React to interesting content, humor, or notable events",
            "- Use reactions to confirm understanding or agreement",
            "Guideline: react whenever it feels natural.",
        )
    return ["## Reactions", "\n".join(lines), ""]


_REASONING_FORMAT_HINT: Final = " ".join(
    (
        "ALL internal reasoning MUST be inside <think>...</think>.",
        "Do not output any analysis outside <think>.",
        "Format every reply as <think>...</think> then <final>...</final>, with no other text.",
        "Only the final user-visible reply may appear inside <final>.",
        "Only text inside <final> is shown to the user; everything else is discarded and never "
        "seen by the user.",
        "Example:",
        "<think>Short internal reasoning.</think>",
        "<final>Hey there! What would you like to do next?</final>",
    )
)


def _render_reasoning_format(params: SystemPromptParams) -> list[str]:
    if not params.reasoning_tag_hint:
        return []
    return ["## Reasoning Format", _REASONING_FORMAT_HINT, ""]


def _context_file_basename(path: str) -> str:
    normalized = _js_trim(path).replace("\\", "/")
    return normalized.split("/")[-1].lower()


def _render_project_context(params: SystemPromptParams) -> list[str]:
    files = [file for file in params.context_files if file.path and _js_trim(file.path)]
    warnings = [line for line in params.bootstrap_truncation_warning_lines if _js_trim(line)]
    if not files and not warnings:
        return []
    lines = ["# Project Context", ""]
    if files:
        lines.append("The following project context files have been loaded:")
        if any(_context_file_basename(file.path) == "soul.md" for file in files):
            lines.append(
                "If SOUL.md is present, embody its persona and tone. Avoid stiff, generic "
                "replies; follow its guidance unless higher-priority instructions override it."
            )
        lines.append("")
    if warnings:
        # The lines of upstream's formatBootstrapTruncationWarningLines (bootstrap-budget.ts),
        # blank ones dropped, each as a bullet under one header.
        lines.append("⚠ Bootstrap truncation warning:")
        lines += [f"- {line}" for line in warnings]
        lines.append("")
    for file in files:
        lines += [f"## {file.path}", "", file.content, ""]
    return lines


def _render_silent_replies(params: SystemPromptParams) -> list[str]:
    if _is_minimal(params):
        return []
    return [
        "## Silent Replies",
        "When you have nothing to say, respond with ONLY: NO_REPLY",
        "",
        "⚠️ Rules:",
        "- It must be your ENTIRE message — nothing else",
        '- Never append it to an actual response (never include "NO_REPLY" in real replies)',
        "- Never wrap it in markdown or code blocks",
        "",
        '❌ Wrong: "Here\'s help... NO_REPLY"',
        '❌ Wrong: "NO_REPLY"',
        "✅ Right: NO_REPLY",
        "",
    ]


def _render_heartbeats(params: SystemPromptParams) -> list[str]:
    if _is_minimal(params):
        return []
    prompt = _trimmed_or_none(params.heartbeat_prompt)
    return [
        "## Heartbeats",
        f"Heartbeat prompt: {prompt}" if prompt else "Heartbeat prompt: (configured)",
        "If you receive a heartbeat poll (a user message matching the heartbeat prompt above), "
        "and there is nothing that needs attention, reply exactly:",
        HEARTBEAT_TOKEN,
        f'OpenClaw treats a leading/trailing "{HEARTBEAT_TOKEN}" as a heartbeat ack (and may '
        "discard it).",
        f'If something needs attention, do NOT include "{HEARTBEAT_TOKEN}"; reply with the alert '
        "text instead.",
        "",
    ]


def _render_runtime(params: SystemPromptParams) -> list[str]:
    return [
        "## Runtime",
        build_runtime_line(
            params.runtime_info,
            _runtime_channel(params),
            _runtime_capabilities(params),
            params.default_think_level,
        ),
        f"Reasoning: {params.reasoning_level} (hidden unless on/stream). Toggle /reasoning; "
        "/status shows Reasoning when enabled.",
    ]


# ---------------------------------------------------------------------------------------------
# Layout
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SystemPromptLayout:
    """An ordered, immutable list of uniquely named sections (``buildAgentSystemPrompt``'s order).

    Every method returns a new layout; the original (e.g. :data:`OPENCLAW_LAYOUT`) never
    changes. Unknown names raise ``KeyError``; adding a name that exists raises ``ValueError``
    (use :meth:`replacing`).
    """

    sections: tuple[SystemPromptSection, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.sections, tuple):
            object.__setattr__(self, "sections", tuple(self.sections))
        names = [section.name for section in self.sections]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"duplicate section names: {', '.join(duplicates)}")

    def names(self) -> tuple[str, ...]:
        """The section names, in order."""
        return tuple(section.name for section in self.sections)

    def __contains__(self, name: object) -> bool:
        return name in self.names()

    def __iter__(self) -> Iterator[SystemPromptSection]:
        return iter(self.sections)

    def __len__(self) -> int:
        return len(self.sections)

    def _index(self, name: str) -> int:
        try:
            return self.names().index(name)
        except ValueError:
            raise KeyError(f"no section named {name!r}") from None

    def section(self, name: str) -> SystemPromptSection:
        """The section called ``name``."""
        return self.sections[self._index(name)]

    def with_section(
        self,
        section: SystemPromptSection,
        *,
        before: str | None = None,
        after: str | None = None,
    ) -> SystemPromptLayout:
        """A layout with ``section`` added before or after a named section (at the end when
        neither is given)."""
        if before is not None and after is not None:
            raise ValueError("give at most one of before= and after=")
        if section.name in self:
            raise ValueError(f"section {section.name!r} already exists; use replacing()")
        if before is not None:
            position = self._index(before)
        elif after is not None:
            position = self._index(after) + 1
        else:
            position = len(self.sections)
        sections = list(self.sections)
        sections.insert(position, section)
        return SystemPromptLayout(tuple(sections))

    def without(self, name: str) -> SystemPromptLayout:
        """A layout without the section called ``name``."""
        position = self._index(name)
        return SystemPromptLayout(self.sections[:position] + self.sections[position + 1 :])

    def replacing(self, name: str, section: SystemPromptSection) -> SystemPromptLayout:
        """A layout with the section called ``name`` swapped for ``section`` in place."""
        position = self._index(name)
        if section.name != name and section.name in self:
            raise ValueError(f"section {section.name!r} already exists")
        sections = list(self.sections)
        sections[position] = section
        return SystemPromptLayout(tuple(sections))

    def render(self, params: SystemPromptParams) -> list[str]:
        """The flat entry list of all sections, spacers included."""
        return [entry for section in self.sections for entry in section.render(params)]


#: The baseline section list of ``buildAgentSystemPrompt``, in order.
OPENCLAW_LAYOUT: Final = SystemPromptLayout(
    (
        SystemPromptSection("identity", _render_identity),
        SystemPromptSection("tooling", _render_tooling),
        SystemPromptSection("tool_call_style", _render_tool_call_style),
        SystemPromptSection("safety", _render_safety),
        SystemPromptSection("cli_quick_reference", _render_cli_quick_reference),
        SystemPromptSection("skills", _render_skills),
        SystemPromptSection("memory_recall", _render_memory_recall),
        SystemPromptSection("self_update", _render_self_update),
        SystemPromptSection("model_aliases", _render_model_aliases),
        SystemPromptSection("time_hint", _render_time_hint),
        SystemPromptSection("workspace", _render_workspace),
        SystemPromptSection("documentation", _render_documentation),
        SystemPromptSection("sandbox", _render_sandbox),
        SystemPromptSection("authorized_senders", _render_authorized_senders),
        SystemPromptSection("current_date_time", _render_current_date_time),
        SystemPromptSection("workspace_files", _render_workspace_files),
        SystemPromptSection("reply_tags", _render_reply_tags),
        SystemPromptSection("messaging", _render_messaging),
        SystemPromptSection("voice", _render_voice),
        SystemPromptSection("extra_context", _render_extra_context),
        SystemPromptSection("reactions", _render_reactions),
        SystemPromptSection("reasoning_format", _render_reasoning_format),
        SystemPromptSection("project_context", _render_project_context),
        SystemPromptSection("silent_replies", _render_silent_replies),
        SystemPromptSection("heartbeats", _render_heartbeats),
        SystemPromptSection("runtime", _render_runtime),
    )
)


def build_system_prompt(
    params: SystemPromptParams, *, layout: SystemPromptLayout = OPENCLAW_LAYOUT
) -> str:
    """The system prompt (``buildAgentSystemPrompt``).

    Mode ``"none"`` returns exactly :data:`IDENTITY_LINE`, whatever the layout.
    Otherwise every section of ``layout`` renders its entries, falsy entries are dropped and the
    rest joined with ``"\\n"`` (``lines.filter(Boolean).join("\\n")``): no blank lines between
    sections, only inside multi-line entries.
    """
    if params.prompt_mode == "none":
        return IDENTITY_LINE
    return "\n".join(entry for entry in layout.render(params) if entry)


# ---------------------------------------------------------------------------------------------
# Sub-agent prompt (subagent-announce.ts, buildSubagentSystemPrompt)
# ---------------------------------------------------------------------------------------------


def build_subagent_system_prompt(
    *,
    task: str | None,
    child_session_key: str | None,
    requester_session_key: str | None = None,
    requester_channel: str | None = None,
    label: str | None = None,
    child_depth: int = 1,
    max_spawn_depth: int = 1,
    acp_enabled: bool = True,
) -> str:
    """The text a spawned sub-agent gets as ``extra_system_prompt`` (``buildSubagentSystemPrompt``).

    The task has whitespace runs collapsed and is trimmed (``{{TASK_DESCRIPTION}}`` when blank);
    the parent is the ``parent orchestrator`` from depth 2 on, else the ``main agent``; the
    spawning section appears when ``child_depth < max_spawn_depth`` (or as the leaf-worker line
    from depth 2). The spawning section tells an orchestrator that completion is push-based (wait
    for every child's completion event, answer a late one with ``NO_REPLY``) and, unless
    ``acp_enabled`` is False (upstream ``acpEnabled: false``), adds the seven ACP harness lines.
    Lines are joined with ``"\\n"`` and blank lines are kept. The
    ``- Your session:`` line is omitted when ``child_session_key`` is None (upstream always
    has one).
    """
    task_text = (
        _js_trim(_JS_WHITESPACE_RUN.sub(" ", task))
        if task and _js_trim(task)
        else "{{TASK_DESCRIPTION}}"
    )
    can_spawn = child_depth < max_spawn_depth
    parent = "parent orchestrator" if child_depth >= 2 else "main agent"
    lines = [
        "# Subagent Context",
        "",
        f"You are a **subagent** spawned by the {parent} for a specific task.",
        "",
        "## Your Role",
        f"- You were created to handle: {task_text}",
        "- Complete this task. That's your entire purpose.",
        f"- You are NOT the {parent}. Don't try to be.",
        "",
        "## Rules",
        "1. **Stay focused** - Do your assigned task, nothing else",
        "2. **Complete the task** - Your final message will be automatically reported to the "
        f"{parent}",
        "3. **Don't initiate** - No heartbeats, no proactive actions, no side quests",
        "4. **Be ephemeral** - You may be terminated after task completion. That's fine.",
        "5. **Trust push-based completion** - Descendant results are auto-announced back to you; "
        "do not busy-poll for status.",
        "6. **Recover from compacted/truncated tool output** - If you see `[compacted: tool "
        "output removed to free context]` or `[truncated: output exceeded context limit]`, "
        "assume prior output was reduced. Re-read only what you need using smaller chunks "
        "(`read` with offset/limit, or targeted `rg`/`head`/`tail`) instead of full-file `cat`.",
        "",
        "## Output Format",
        "When complete, your final response should include:",
        "- What you accomplished or found",
        f"- Any relevant details the {parent} should know",
        "- Keep it concise but informative",
        "",
        "## What You DON'T Do",
        f"- NO user conversations (that's {parent}'s job)",
        "- NO external messages (email, tweets, etc.) unless explicitly tasked with a specific "
        "recipient/channel",
        "- NO cron jobs or persistent state",
        f"- NO pretending to be the {parent}",
        "- Only use the `message` tool when explicitly instructed to contact a specific external "
        f"recipient; otherwise return plain text and let the {parent} deliver it",
        "",
    ]
    if can_spawn:
        lines += [
            "## Sub-Agent Spawning",
            "You CAN spawn your own sub-agents for parallel or complex work using "
            "`sessions_spawn`.",
            "Use the `subagents` tool to steer, kill, or do an on-demand status check for your "
            "spawned sub-agents.",
            "Your sub-agents will announce their results back to you automatically (not to the "
            "main agent).",
            "Default workflow: spawn work, continue orchestrating, and wait for auto-announced "
            "completions.",
            "Auto-announce is push-based. After spawning children, do NOT call sessions_list, "
            "sessions_history, exec sleep, or any polling tool.",
            "Wait for completion events to arrive as user messages.",
            "Track expected child session keys and only send your final answer after completion "
            "events for ALL expected children arrive.",
            "If a child completion event arrives AFTER you already sent your final answer, reply "
            "ONLY with NO_REPLY.",
            "Do NOT repeatedly poll `subagents list` in a loop unless you are actively debugging "
            "or intervening.",
            "Coordinate their work and synthesize results before reporting back.",
        ]
        if acp_enabled:
            lines += [
                "For ACP harness sessions (codex/claudecode/gemini), use `sessions_spawn` with "
                '`runtime: "acp"` (set `agentId` unless `acp.defaultAgent` is configured).',
                "`agents_list` and `subagents` apply to OpenClaw sub-agents (`runtime: "
                '"subagent"`); ACP harness ids are controlled by `acp.allowedAgents`.',
                "Do not ask users to run slash commands or CLI when `sessions_spawn` can do it "
                "directly.",
                "Do not use `exec` (`openclaw ...`, `acpx ...`) to spawn ACP sessions.",
                'Use `subagents` only for OpenClaw subagents (`runtime: "subagent"`).',
                "Subagent results auto-announce back to you; ACP sessions continue in their bound "
                "thread.",
                "Avoid polling loops; spawn, orchestrate, and synthesize results.",
            ]
        lines.append("")
    elif child_depth >= 2:
        lines += [
            "## Sub-Agent Spawning",
            "You are a leaf worker and CANNOT spawn further sub-agents. Focus on your assigned "
            "task.",
            "",
        ]
    lines.append("## Session Context")
    if label:
        lines.append(f"- Label: {label}")
    if requester_session_key:
        lines.append(f"- Requester session: {requester_session_key}.")
    if requester_channel:
        lines.append(f"- Requester channel: {requester_channel}.")
    if child_session_key is not None:
        lines.append(f"- Your session: {child_session_key}.")
    lines.append("")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Modifiers applied after building (run/attempt.ts)
# ---------------------------------------------------------------------------------------------


def apply_system_prompt_modifiers(
    system_prompt: str,
    *,
    context_engine_addition: str | None = None,
    hook_system_prompt: str | None = None,
    prepend_system_context: str | None = None,
    append_system_context: str | None = None,
) -> str:
    """The built prompt after the attempt's modifiers, in the attempt's order
    (``runEmbeddedAttempt``).

    1. A non-empty context-engine ``systemPromptAddition`` is prepended, joined to the prompt
       with ``"\\n\\n"`` (upstream ``prependSystemPromptAddition``).
    2. A hook ``systemPrompt`` that is not blank replaces the whole prompt (trimmed) — the
       engine addition included, since the hooks run after ``assemble``.
    3. Hook ``prependSystemContext`` / ``appendSystemContext`` wrap the result when at least
       one is not blank: ``[prepend, prompt, append]`` each trimmed, empties dropped, joined
       with ``"\\n\\n"`` (``composeSystemPromptWithHookContext``; merged across handlers by
       ``mergeBeforePromptBuild``, `src/plugins/hooks.ts`).
    """
    prompt = system_prompt
    if context_engine_addition:
        prompt = f"{context_engine_addition}\n\n{prompt}"
    replacement = _trimmed_or_none(hook_system_prompt)
    if replacement:
        prompt = replacement
    prepend = _js_trim(prepend_system_context or "")
    append = _js_trim(append_system_context or "")
    if prepend or append:
        prompt = "\n\n".join(part for part in (prepend, _js_trim(prompt), append) if part)
    return prompt


def build_extra_system_prompt(*parts: str | None) -> str:
    """``extraSystemPrompt`` from its parts — trusted inbound metadata, group chat context,
    group intro, group system prompt — with ``None``/``""`` dropped and the rest joined with
    ``"\\n\\n"`` (`src/auto-reply/reply/get-reply-run.ts`, ``runPreparedReply``)."""
    return "\n\n".join(part for part in parts if part)
