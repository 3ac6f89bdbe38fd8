"""System prompt assembly (OpenClaw 2026.3.13 `src/agents/system-prompt.ts`, ``buildAgentSystemPrompt``) and the cases of
upstream's `src/agents/system-prompt.test.ts`.

Tests named ``test_8_1_NN_*`` are those upstream assertions (and derived vectors), numbered as
in clawctx's case list; the others pin one rule each of ``buildAgentSystemPrompt``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clawctx.prompt.system_prompt import (
    DEFAULT_MESSAGE_CHANNEL_OPTIONS,
    IDENTITY_LINE,
    OPENCLAW_LAYOUT,
    TOOL_ORDER,
    ContextFile,
    ReactionGuidance,
    RuntimeInfo,
    SandboxInfo,
    Skill,
    SystemPromptLayout,
    SystemPromptParams,
    SystemPromptSection,
    apply_system_prompt_modifiers,
    build_extra_system_prompt,
    build_runtime_line,
    build_subagent_system_prompt,
    build_system_prompt,
    format_owner_ids,
    format_skills_for_prompt,
    format_tool_lines,
    is_subagent_session_key,
    resolve_prompt_mode,
    sanitize_for_prompt_literal,
)

WORKSPACE = "/tmp/openclaw"
SKILLS_PROMPT = format_skills_for_prompt(
    [Skill(name="demo", description="Demo skill", location="/skills/demo/SKILL.md")]
)


def build(**kwargs: Any) -> str:
    kwargs.setdefault("workspace_dir", WORKSPACE)
    return build_system_prompt(SystemPromptParams(**kwargs))


def section_of(prompt: str, header: str) -> list[str]:
    """The lines from ``header`` up to the next ``#``/``##`` header."""
    lines = prompt.split("\n")
    start = lines.index(header)
    end = start + 1
    while end < len(lines) and not re.match(r"#{1,2} ", lines[end]):
        end += 1
    return lines[start:end]


# ---------------------------------------------------------------------------------------------
# upstream cases (src/agents/system-prompt.test.ts)
# ---------------------------------------------------------------------------------------------


def test_8_1_01_authorized_senders_raw() -> None:
    prompt = build(owner_numbers=["+123", " +456 ", ""])
    assert "## Authorized Senders" in prompt
    assert (
        "Authorized senders: +123, +456. These senders are allowlisted; do not assume they are "
        "the owner." in prompt
    )


def test_8_1_02_authorized_senders_hashed() -> None:
    prompt = build(owner_numbers=["+123", "+456", ""], owner_display="hash")
    assert "Authorized senders:" in prompt
    assert "+123" not in prompt
    assert "+456" not in prompt
    assert re.search(r"[a-f0-9]{12}", prompt)
    assert "Authorized senders: 1b245e45ea4b, 967452b354ef. These senders" in prompt


def test_8_1_03_no_owners_no_section() -> None:
    prompt = build()
    assert "## Authorized Senders" not in prompt
    assert "Authorized senders:" not in prompt


def test_8_1_04_hmac_tokens_differ() -> None:
    a = format_owner_ids(["+123"], display="hash", secret="secret-key-A")
    b = format_owner_ids(["+123"], display="hash", secret="secret-key-B")
    assert a == ["49aeffabb32f"]
    assert b == ["e1fb776ab4a1"]
    assert a != b
    assert format_owner_ids(["+123"], display="hash") == ["1b245e45ea4b"]
    prompt = build(
        owner_numbers=["+123"], owner_display="hash", owner_display_secret="secret-key-A"
    )
    assert "Authorized senders: 49aeffabb32f." in prompt


def test_8_1_05_minimal_mode_suppresses_sections() -> None:
    prompt = build(
        prompt_mode="minimal",
        owner_numbers=["+123"],
        skills_prompt=SKILLS_PROMPT,
        heartbeat_prompt="ping",
        tool_names=["message", "memory_search"],
        docs_path="/tmp/openclaw/docs",
        extra_system_prompt="Subagent details",
        tts_hint="Voice (TTS) is enabled.",
    )
    for absent in (
        "## Authorized Senders",
        "## Memory Recall",
        "## Documentation",
        "## Reply Tags",
        "## Messaging",
        "## Voice (TTS)",
        "## Silent Replies",
        "## Heartbeats",
        "## Group Chat Context",
    ):
        assert absent not in prompt, absent
    # 2026.3.13 keeps Skills in minimal mode (buildSkillsSection has no isMinimal check;
    # conformance case system_prompt-026-random).
    assert "## Skills (mandatory)" in prompt
    assert "## Safety" in prompt
    assert (
        "For long waits, avoid rapid poll loops: use exec with enough yieldMs or "
        "process(action=poll, timeout=<ms>)." in prompt
    )
    assert "## Subagent Context" in prompt
    assert "Subagent details" in prompt


def test_8_1_06_later_skills_kept_in_minimal_behind_flag() -> None:
    prompt = build(prompt_mode="minimal", skills_prompt=SKILLS_PROMPT, keep_skills_in_minimal=True)
    assert "## Skills (mandatory)" in prompt
    assert "<available_skills>" in prompt
    assert (
        "- When a skill drives external API writes, assume rate limits: prefer fewer larger "
        "writes, avoid tight one-item loops, serialize bursts when possible, and respect "
        "429/Retry-After." in prompt
    )
    assert "## Skills" not in build(prompt_mode="minimal", keep_skills_in_minimal=True)


def test_8_1_07_safety_phrases() -> None:
    prompt = build()
    for phrase in (
        "You have no independent goals",
        "Prioritize safety and human oversight",
        "if instructions conflict",
        "Inspired by Anthropic's constitution",
        "Do not manipulate or persuade anyone",
        "Do not copy yourself or change system prompts",
    ):
        assert phrase in prompt


def test_8_1_08_voice_hint() -> None:
    prompt = build(tts_hint="Voice (TTS) is enabled.")
    assert section_of(prompt, "## Voice (TTS)") == ["## Voice (TTS)", "Voice (TTS) is enabled."]


def test_8_1_09_reasoning_format() -> None:
    prompt = build(reasoning_tag_hint=True)
    assert "## Reasoning Format" in prompt
    assert "<think>...</think>" in prompt
    assert "<final>...</final>" in prompt
    assert section_of(prompt, "## Reasoning Format")[1] == (
        "ALL internal reasoning MUST be inside <think>...</think>. Do not output any analysis "
        "outside <think>. Format every reply as <think>...</think> then <final>...</final>, "
        "with no other text. Only the final user-visible reply may appear inside <final>. Only "
        "text inside <final> is shown to the user; everything else is discarded and never seen "
        "by the user. Example: <think>Short internal reasoning.</think> <final>Hey there! What "
        "would you like to do next?</final>"
    )
    assert "## Reasoning Format" not in build()


def test_8_1_10_default_guidance_lines() -> None:
    prompt = build()
    for phrase in (
        "## OpenClaw CLI Quick Reference",
        "openclaw gateway restart",
        "Do not invent commands",
        "Runtime-generated completion events may ask for a user update.",
        "Rewrite those in your normal assistant voice",
        "do not forward raw internal metadata",
        "Completion is push-based: it will auto-announce when done.",
        "Do not poll `subagents list` / `sessions_list` in a loop",
        "When a first-class tool exists for an action, use the tool directly instead of asking "
        "the user to run equivalent CLI or slash commands.",
    ):
        assert phrase in prompt


def test_8_1_11_tool_availability_names() -> None:
    prompt = build(tool_names=["exec", "sessions_list", "sessions_history", "sessions_send"])
    assert "Tool availability (filtered by policy):" in prompt
    for name in ("exec", "sessions_list", "sessions_history", "sessions_send"):
        assert f"- {name}: " in prompt


ACP_LINES = (
    'For requests like "do this in codex/claude code/gemini", treat it as ACP harness intent '
    'and call `sessions_spawn` with `runtime: "acp"`.',
    "On Discord, default ACP harness requests to thread-bound persistent sessions (`thread: true`, "
    '`mode: "session"`) unless the user asks otherwise.',
    "Set `agentId` explicitly unless `acp.defaultAgent` is configured, and do not route ACP "
    "harness requests through `subagents`/`agents_list` or local PTY exec flows.",
    "For ACP harness thread spawns, do not call `message` with `action=thread-create`; use "
    '`sessions_spawn` (`runtime: "acp"`, `thread: true`) as the single thread creation path.',
)


def test_8_1_12_acp_guidance() -> None:
    prompt = build(tool_names=["sessions_spawn"])
    assert 'runtime="acp" requires `agentId` unless `acp.defaultAgent` is configured' in prompt
    assert "not agents_list" in prompt
    lines = prompt.split("\n")
    start = lines.index(ACP_LINES[0])
    assert tuple(lines[start : start + 4]) == ACP_LINES
    assert lines[start - 1].startswith("If a task is more complex")
    assert lines[start + 4].startswith("Do not poll `subagents list`")

    disabled = build(tool_names=["sessions_spawn", "agents_list"], acp_enabled=False)
    assert "- sessions_spawn: Spawn an isolated sub-agent session" in disabled
    assert "- agents_list: List OpenClaw agent ids allowed for sessions_spawn" in disabled
    assert "ACP" not in disabled
    assert 'runtime="acp"' not in disabled

    sandboxed = build(tool_names=["sessions_spawn"], sandbox_info=SandboxInfo(enabled=True))
    assert "ACP harness spawns are blocked from sandboxed sessions" in sandboxed
    assert 'Use `runtime: "subagent"` instead.' in sandboxed
    assert ACP_LINES[0] not in sandboxed
    assert "- sessions_spawn: Spawn an isolated sub-agent session" in sandboxed


def test_8_1_13_caller_casing_preserved() -> None:
    prompt = build(
        tool_names=["Read", "Exec", "process"],
        skills_prompt=SKILLS_PROMPT,
        docs_path=WORKSPACE + "/docs",
    )
    assert "- Read: Read file contents" in prompt
    assert "- Exec: Run shell commands" in prompt
    assert (
        "- If exactly one skill clearly applies: read its SKILL.md at <location> with `Read`, then "
        "follow it." in prompt
    )
    assert "OpenClaw docs: /tmp/openclaw/docs" in prompt
    assert "use Exec with enough yieldMs or process(action=poll" in prompt


def test_8_1_14_docs_and_workspace_notes() -> None:
    prompt = build(
        docs_path="/tmp/openclaw/docs", workspace_notes=["Reminder: commit your changes"]
    )
    assert section_of(prompt, "## Documentation") == [
        "## Documentation",
        "OpenClaw docs: /tmp/openclaw/docs",
        "Mirror: https://docs.openclaw.ai",
        "Source: https://github.com/openclaw/openclaw",
        "Community: https://discord.com/invite/clawd",
        "Find new skills: https://clawhub.com",
        "For OpenClaw behavior, commands, config, or architecture: consult local docs first.",
        "When diagnosing issues, run `openclaw status` yourself when possible; only ask the user if "
        "you lack access (e.g., sandboxed).",
    ]
    assert "Reminder: commit your changes" in prompt


@pytest.mark.parametrize(
    ("user_time", "user_time_format"),
    [(None, None), ("Monday, January 5th, 2026 — 3:26 PM", "12"), ("Monday 15:26", "24")],
)
def test_8_1_15_timezone_without_time(user_time: str | None, user_time_format: Any) -> None:
    prompt = build(
        user_timezone="America/Chicago", user_time=user_time, user_time_format=user_time_format
    )
    assert section_of(prompt, "## Current Date & Time") == [
        "## Current Date & Time",
        "Time zone: America/Chicago",
    ]
    assert "session_status" in prompt
    assert "current date" in prompt
    for absent in ("Monday, January 5th, 2026", "3:26 PM", "15:26"):
        assert absent not in prompt


def test_8_1_16_model_aliases() -> None:
    prompt = build(model_alias_lines=["- Opus: anthropic/claude-opus-4-5", "- Sonnet: x/y"])
    assert section_of(prompt, "## Model Aliases") == [
        "## Model Aliases",
        "Prefer aliases when specifying model overrides; full provider/model is also accepted.",
        "- Opus: anthropic/claude-opus-4-5",
        "- Sonnet: x/y",
    ]
    assert "## Model Aliases" not in build(model_alias_lines=["- a: b"], prompt_mode="minimal")


def test_8_1_17_self_update() -> None:
    prompt = build(tool_names=["gateway", "exec"])
    assert section_of(prompt, "## OpenClaw Self-Update") == [
        "## OpenClaw Self-Update",
        "Get Updates (self-update) is ONLY allowed when the user explicitly asks for it.",
        "Do not run config.apply or update.run unless the user explicitly requests an update or "
        "config change; if it's not explicit, ask first.",
        "Use config.schema.lookup with a specific dot path to inspect only the relevant config "
        "subtree before making config changes or answering config-field questions; avoid "
        "guessing field names/types.",
        "Actions: config.schema.lookup, config.get, config.apply (validate + write full config, "
        "then restart), config.patch (partial update, merges with existing), update.run (update "
        "deps or git, then restart).",
        "After restart, OpenClaw pings the last active session automatically.",
    ]
    for phrase in ("config.schema.lookup", "config.apply", "config.patch", "update.run"):
        assert phrase in prompt
    assert "Use config.schema to" not in prompt
    assert "config.schema, config.apply" not in prompt
    assert "## OpenClaw Self-Update" not in build(tool_names=["exec"])
    assert "## OpenClaw Self-Update" not in build(tool_names=["gateway"], prompt_mode="minimal")


def test_8_1_18_skills_section() -> None:
    prompt = build(skills_prompt=SKILLS_PROMPT)
    assert "## Skills" in prompt
    assert "read its SKILL.md at <location> with `read`" in prompt
    assert "<available_skills>" in prompt
    assert "<name>demo</name>" in prompt
    absent = build()
    assert "## Skills" not in absent
    assert "<available_skills>" not in absent


def test_8_1_19_project_context() -> None:
    prompt = build(
        context_files=[ContextFile("AGENTS.md", "Alpha"), ContextFile("IDENTITY.md", "Bravo")]
    )
    assert section_of(prompt, "# Project Context") == [
        "# Project Context",
        "The following project context files have been loaded:",
    ]
    for text in ("## AGENTS.md", "Alpha", "## IDENTITY.md", "Bravo"):
        assert text in prompt
    assert "If SOUL.md is present" not in prompt

    blank = build(context_files=[ContextFile("", "Ghost"), ContextFile("   ", "Shadow")])
    assert "# Project Context" not in blank
    assert "Ghost" not in blank
    mixed = build(context_files=[ContextFile(" ", "Ghost"), ContextFile("USER.md", "Hi")])
    assert "Ghost" not in mixed
    assert "## USER.md\nHi" in mixed

    soul_line = (
        "If SOUL.md is present, embody its persona and tone. Avoid stiff, generic replies; follow "
        "its guidance unless higher-priority instructions override it."
    )
    for path in ("./SOUL.md", "dir\\SOUL.md", "/ws/soul.MD"):
        assert soul_line in build(context_files=[ContextFile(path, "persona")]), path
    assert "# Project Context" not in build(context_files=[])


def test_8_1_20_message_tool_and_inline_buttons() -> None:
    prompt = build(tool_names=["message"])
    assert "message: Send messages and channel actions" in prompt
    assert "### message tool" in prompt
    assert "respond with ONLY: NO_REPLY" in prompt
    assert "Inline buttons" not in prompt  # no runtime channel, no capability

    telegram = build(
        tool_names=["message"],
        runtime_info=RuntimeInfo(channel="telegram", capabilities=("inlineButtons",)),
    )
    assert "buttons=[[{text,callback_data,style?}]]" in telegram
    assert "`style` can be `primary`, `success`, or `danger`" in telegram
    assert "channel=telegram" in telegram
    assert "capabilities=inlineButtons" in telegram


def test_8_1_21_runtime_agent_and_reasoning() -> None:
    prompt = build(runtime_info=RuntimeInfo(agent_id="work"))
    assert "agent=work" in prompt
    assert "Reasoning: off" in prompt
    assert "/reasoning" in prompt
    assert "/status shows Reasoning" in prompt


def test_8_1_22_runtime_line_exact() -> None:
    line = build_runtime_line(
        RuntimeInfo(
            agent_id="work",
            host="host",
            repo_root="/repo",
            os="macOS",
            arch="arm64",
            node="v20",
            model="anthropic/claude",
            default_model="anthropic/claude-opus-4-5",
        ),
        "telegram",
        ["inlineButtons"],
        "low",
    )
    assert line == (
        "Runtime: agent=work | host=host | repo=/repo | os=macOS (arm64) | node=v20 | "
        "model=anthropic/claude | default_model=anthropic/claude-opus-4-5 | channel=telegram | "
        "capabilities=inlineButtons | thinking=low"
    )


def test_8_1_23_sandbox() -> None:
    prompt = build(
        sandbox_info=SandboxInfo(
            enabled=True,
            workspace_dir="/tmp/sandbox",
            container_workspace_dir="/workspace",
            workspace_access="ro",
            agent_workspace_mount="/agent",
            elevated_allowed=True,
            elevated_default_level="on",
        )
    )
    assert "Your working directory is: /workspace" in prompt
    assert (
        "For read/write/edit/apply_patch, file paths resolve against host workspace: "
        "/tmp/openclaw. For bash/exec commands, use sandbox container paths under /workspace (or "
        "relative paths from that workdir), not host paths. Prefer relative paths so both "
        "sandboxed exec and file tools work consistently." in prompt
    )
    assert section_of(prompt, "## Sandbox") == [
        "## Sandbox",
        "You are running in a sandboxed runtime (tools execute in Docker).",
        "Some tools may be unavailable due to sandbox policy.",
        "Sub-agents stay sandboxed (no elevated/host access). Need outside-sandbox read/write? "
        "Don't spawn; ask first.",
        "Sandbox container workdir: /workspace",
        "Sandbox host mount source (file tools bridge only; not valid inside sandbox exec): "
        "/tmp/sandbox",
        "Agent workspace access: ro (mounted at /agent)",
        "Elevated exec is available for this session.",
        "User can toggle with /elevated on|off|ask|full.",
        "You may also send /elevated on|off|ask|full when needed.",
        "Current elevated level: on (ask runs exec on host with approvals; full auto-approves).",
    ]
    assert "You are running in a sandboxed runtime" in prompt
    assert "Sub-agents stay sandboxed" in prompt


def test_8_1_24_reactions_minimal() -> None:
    prompt = build(reaction_guidance=ReactionGuidance(level="minimal", channel="Telegram"))
    assert section_of(prompt, "## Reactions") == [
        "## Reactions",
        "Reactions are enabled for Telegram in MINIMAL mode.",
        "React ONLY when truly relevant:",
        "- Acknowledge important user requests or confirmations",
        "- Express genuine sentiment (humor, appreciation) sparingly",
        "- Avoid reacting to routine messages or your own replies",
        "Guideline: at most 1 reaction per 5-10 exchanges.",
    ]


def test_8_1_25_none_mode_is_identity_only() -> None:
    prompt = build(
        prompt_mode="none",
        tool_names=["exec"],
        extra_system_prompt="extra",
        context_files=[ContextFile("AGENTS.md", "x")],
    )
    assert prompt == "You are a personal assistant running inside OpenClaw."
    assert prompt == IDENTITY_LINE


def test_8_1_26_subagent_prompt() -> None:
    prompt = build_subagent_system_prompt(
        child_session_key="agent:main:subagent:abc",
        task="research task",
        child_depth=1,
        max_spawn_depth=2,
    )
    for phrase in (
        "## Sub-Agent Spawning",
        "You CAN spawn your own sub-agents for parallel or complex work using `sessions_spawn`.",
        "spawned by the main agent",
        "reported to the main agent",
        "[compacted: tool output removed to free context]",
        "[truncated: output exceeded context limit]",
        "offset/limit",
        "instead of full-file `cat`",
    ):
        assert phrase in prompt
    assert prompt.endswith("## Session Context\n- Your session: agent:main:subagent:abc.\n")


# ---------------------------------------------------------------------------------------------
# prompt modes and assembly (system-prompt.ts: PromptMode, buildAgentSystemPrompt)
# ---------------------------------------------------------------------------------------------

DEFAULT_PROMPT = "\n".join(
    [
        "You are a personal assistant running inside OpenClaw.",
        "## Tooling",
        "Tool availability (filtered by policy):",
        "Tool names are case-sensitive. Call tools exactly as listed.",
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
        "write the systemEvent text as something that will read like a reminder when it fires, "
        "and mention that it is a reminder depending on the time gap between setting and firing; "
        "include recent context in reminder text if appropriate)",
        "- sessions_list: list sessions",
        "- sessions_history: fetch session history",
        "- sessions_send: send to another session",
        "- subagents: list/steer/kill sub-agent runs",
        '- session_status: show usage/time/model state and answer "what model are we using?"',
        "TOOLS.md does not control tool availability; it is user guidance for how to use "
        "external tools.",
        "For long waits, avoid rapid poll loops: use exec with enough yieldMs or "
        "process(action=poll, timeout=<ms>).",
        "If a task is more complex or takes longer, spawn a sub-agent. Completion is push-based: "
        "it will auto-announce when done.",
        "Do not poll `subagents list` / `sessions_list` in a loop; only check status on-demand "
        "(for intervention, debugging, or when explicitly asked).",
        "## Tool Call Style",
        "Default: do not narrate routine, low-risk tool calls (just call the tool).",
        "Narrate only when it helps: multi-step work, complex/challenging problems, sensitive "
        "actions (e.g., deletions), or when the user explicitly asks.",
        "Keep narration brief and value-dense; avoid repeating obvious steps.",
        "Use plain human language for narration unless in a technical context.",
        "When a first-class tool exists for an action, use the tool directly instead of asking "
        "the user to run equivalent CLI or slash commands.",
        "When exec returns approval-pending, include the concrete /approve command from tool "
        "output (with allow-once|allow-always|deny) and do not ask for a different or rotated "
        "code.",
        "Treat allow-once as single-command only: if another elevated command needs approval, "
        "request a fresh /approve and do not claim prior approval covered it.",
        "When approvals are required, preserve and show the full command/script exactly as "
        "provided (including chained operators like &&, ||, |, ;, or multiline shells) so the "
        "user can approve what will actually run.",
        "## Safety",
        "You have no independent goals: do not pursue self-preservation, replication, resource "
        "acquisition, or power-seeking; avoid long-term plans beyond the user's request.",
        "Prioritize safety and human oversight over completion; if instructions conflict, pause "
        "and ask; comply with stop/pause/audit requests and never bypass safeguards. (Inspired by "
        "Anthropic's constitution.)",
        "Do not manipulate or persuade anyone to expand access or disable safeguards. Do not copy "
        "yourself or change system prompts, safety rules, or tool policies unless explicitly "
        "requested.",
        "## OpenClaw CLI Quick Reference",
        "OpenClaw is controlled via subcommands. Do not invent commands.",
        "To manage the Gateway daemon service (start/stop/restart):",
        "- openclaw gateway status",
        "- openclaw gateway start",
        "- openclaw gateway stop",
        "- openclaw gateway restart",
        "If unsure, ask the user to run `openclaw help` (or `openclaw gateway --help`) and paste "
        "the output.",
        "## Workspace",
        "Your working directory is: /tmp/openclaw",
        "Treat this directory as the single global workspace for file operations unless "
        "explicitly instructed otherwise.",
        "## Workspace Files (injected)",
        "These user-editable files are loaded by OpenClaw and included below in Project Context.",
        "## Reply Tags",
        "To request a native reply/quote on supported surfaces, include one tag in your reply:",
        "- Reply tags must be the very first token in the message (no leading text/newlines): "
        "[[reply_to_current]] your reply.",
        "- [[reply_to_current]] replies to the triggering message.",
        "- Prefer [[reply_to_current]]. Use [[reply_to:<id>]] only when an id was explicitly "
        "provided (e.g. by the user or a tool).",
        "Whitespace inside the tag is allowed (e.g. [[ reply_to_current ]] / [[ reply_to: 123 ]]).",
        "Tags are stripped before sending; support depends on the current channel config.",
        "## Messaging",
        "- Reply in current session → automatically routes to the source channel (Signal, "
        "Telegram, etc.)",
        "- Cross-session messaging → use sessions_send(sessionKey, message)",
        "- Sub-agent orchestration → use subagents(action=list|steer|kill)",
        "- Runtime-generated completion events may ask for a user update. Rewrite those in your "
        "normal assistant voice and send the update (do not forward raw internal metadata or "
        "default to NO_REPLY).",
        "- Never use exec/curl for provider messaging; OpenClaw handles all routing internally.",
        "## Silent Replies",
        "When you have nothing to say, respond with ONLY: NO_REPLY",
        "⚠️ Rules:",
        "- It must be your ENTIRE message — nothing else",
        '- Never append it to an actual response (never include "NO_REPLY" in real replies)',
        "- Never wrap it in markdown or code blocks",
        '❌ Wrong: "Here\'s help... NO_REPLY"',
        '❌ Wrong: "NO_REPLY"',
        "✅ Right: NO_REPLY",
        "## Heartbeats",
        "Heartbeat prompt: (configured)",
        "If you receive a heartbeat poll (a user message matching the heartbeat prompt above), and "
        "there is nothing that needs attention, reply exactly:",
        "HEARTBEAT_OK",
        'OpenClaw treats a leading/trailing "HEARTBEAT_OK" as a heartbeat ack (and may discard '
        "it).",
        'If something needs attention, do NOT include "HEARTBEAT_OK"; reply with the alert text '
        "instead.",
        "## Runtime",
        "Runtime: thinking=off",
        "Reasoning: off (hidden unless on/stream). Toggle /reasoning; /status shows Reasoning when "
        "enabled.",
    ]
)


def test_default_full_prompt_exact() -> None:
    """buildAgentSystemPrompt: the whole default prompt, no blank lines between sections."""
    assert build() == DEFAULT_PROMPT


def test_minimal_prompt_exact_section_list() -> None:
    """buildAgentSystemPrompt (isMinimal): what stays in minimal mode, in order."""
    prompt = build(prompt_mode="minimal", extra_system_prompt="Subagent details")
    headers = [line for line in prompt.split("\n") if re.match(r"#{1,2} ", line)]
    assert headers == [
        "## Tooling",
        "## Tool Call Style",
        "## Safety",
        "## OpenClaw CLI Quick Reference",
        "## Workspace",
        "## Workspace Files (injected)",
        "## Subagent Context",
        "## Runtime",
    ]


def test_full_prompt_section_order() -> None:
    """buildAgentSystemPrompt: every section at once, in upstream's order."""
    prompt = build(
        tool_names=["memory_search", "gateway", "message"],
        skills_prompt=SKILLS_PROMPT,
        model_alias_lines=["- a: b"],
        user_timezone="UTC",
        docs_path="/docs",
        sandbox_info=SandboxInfo(enabled=True),
        owner_numbers=["+1"],
        tts_hint="tts",
        extra_system_prompt="extra",
        reaction_guidance=ReactionGuidance(level="extensive", channel="Slack"),
        reasoning_tag_hint=True,
        context_files=[ContextFile("AGENTS.md", "a")],
    )
    headers = [line for line in prompt.split("\n") if re.match(r"#{1,2} ", line)]
    assert headers == [
        "## Tooling",
        "## Tool Call Style",
        "## Safety",
        "## OpenClaw CLI Quick Reference",
        "## Skills (mandatory)",
        "## Memory Recall",
        "## OpenClaw Self-Update",
        "## Model Aliases",
        "## Workspace",
        "## Documentation",
        "## Sandbox",
        "## Authorized Senders",
        "## Current Date & Time",
        "## Workspace Files (injected)",
        "## Reply Tags",
        "## Messaging",
        "## Voice (TTS)",
        "## Group Chat Context",
        "## Reactions",
        "## Reasoning Format",
        "# Project Context",
        "## AGENTS.md",
        "## Silent Replies",
        "## Heartbeats",
        "## Runtime",
    ]
    lines = prompt.split("\n")
    # buildAgentSystemPrompt: the session_status hint sits right before the Workspace header.
    hint = "If you need the current date, time, or day of week, run session_status (📊 session_status)."
    assert lines[lines.index("## Workspace") - 1] == hint
    assert "## Current Date & Time" in prompt


def test_no_blank_lines_between_sections() -> None:
    """buildAgentSystemPrompt (lines.filter(Boolean).join): falsy entries dropped; blank lines only
    inside multi-line entries."""
    prompt = build(
        tool_names=["message", "gateway"], owner_numbers=["+1"], sandbox_info=SandboxInfo(True)
    )
    assert "\n\n" not in prompt
    assert not prompt.startswith("\n")
    assert not prompt.endswith("\n")


def test_blank_lines_inside_multiline_entries_kept() -> None:
    prompt = build(extra_system_prompt="line one\n\nline two", skills_prompt=SKILLS_PROMPT)
    assert "## Group Chat Context\nline one\n\nline two\n## Silent Replies" in prompt
    # pi formatSkillsForPrompt's leading newlines disappear: buildSkillsSection trims the block.
    assert "429/Retry-After.\nThe following skills provide specialized instructions" in prompt


def test_extra_context_header_depends_on_mode() -> None:
    """buildAgentSystemPrompt: full mode (even a DM) gets the group header; minimal the sub-agent
    header."""
    assert "## Group Chat Context\ntrusted meta" in build(extra_system_prompt="  trusted meta \n")
    assert "## Subagent Context\nx" in build(extra_system_prompt="x", prompt_mode="minimal")
    assert "## Group Chat Context" not in build(extra_system_prompt="   ")


def test_trimmed_inputs_blank_means_absent() -> None:
    """buildAgentSystemPrompt: blank text inputs count as absent; present ones are trimmed."""
    prompt = build(
        skills_prompt="  \n ", heartbeat_prompt="\t", user_timezone=" ", docs_path=" ", tts_hint=" "
    )
    for absent in ("## Skills", "## Current Date & Time", "## Documentation", "## Voice"):
        assert absent not in prompt
    assert "Heartbeat prompt: (configured)" in prompt
    trimmed = build(heartbeat_prompt="  Check mail.  ", user_timezone=" UTC ", docs_path=" /d ")
    assert "Heartbeat prompt: Check mail.\n" in trimmed
    assert "Time zone: UTC\n" in trimmed
    assert "OpenClaw docs: /d\n" in trimmed


@pytest.mark.parametrize(
    ("session_key", "mode"),
    [
        (None, "full"),
        ("", "full"),
        ("agent:main:main", "full"),
        ("agent:main:subagent:abc", "minimal"),
        ("agent:main:SubAgent:abc", "minimal"),
        ("  subagent:abc ", "minimal"),
        ("agent::main::subagent:x", "minimal"),
        ("agent:main:cron:job1", "full"),
        ("agent:main", "full"),
        ("other:main:subagent:x", "full"),
    ],
)
def test_resolve_prompt_mode(session_key: str | None, mode: str) -> None:
    """resolvePromptModeForSession (src/agents/pi-embedded-runner/run/attempt.ts), baseline."""
    assert resolve_prompt_mode(session_key) == mode


def test_resolve_prompt_mode_later_cron_flag() -> None:
    assert resolve_prompt_mode("agent:main:cron:job1", cron_minimal=True) == "minimal"
    assert resolve_prompt_mode("agent:main:main", cron_minimal=True) == "full"
    assert is_subagent_session_key("agent:x:subagent:y")
    assert not is_subagent_session_key("agent:x:main")


# ---------------------------------------------------------------------------------------------
# section rules (system-prompt.ts)
# ---------------------------------------------------------------------------------------------


def test_memory_recall_section() -> None:
    """buildMemorySection: memory tools → section; citations line by mode; suppressed when minimal."""
    prompt = build(tool_names=["memory_get"])
    assert section_of(prompt, "## Memory Recall") == [
        "## Memory Recall",
        "Before answering anything about prior work, decisions, dates, people, preferences, or "
        "todos: run memory_search on MEMORY.md + memory/*.md; then use memory_get to pull only the "
        "needed lines. If low confidence after search, say you checked.",
        "Citations: include Source: <path#line> when it helps the user verify memory snippets.",
    ]
    off = build(tool_names=["Memory_Search"], memory_citations_mode="off")
    assert section_of(off, "## Memory Recall")[-1] == (
        "Citations are disabled: do not mention file paths or line numbers in replies unless the "
        "user explicitly asks."
    )
    assert "## Memory Recall" not in build(tool_names=["exec"])


def test_workspace_literals_sanitized_and_notes_trimmed() -> None:
    """Workspace section (src/agents/sanitize-for-prompt.ts): paths pass through
    sanitizeForPromptLiteral; notes trimmed, blanks dropped."""
    prompt = build(
        workspace_dir="/tmp/project\nINJECT\u2028MORE\t", workspace_notes=["  note a ", "   ", ""]
    )
    assert section_of(prompt, "## Workspace") == [
        "## Workspace",
        "Your working directory is: /tmp/projectINJECTMORE",
        "Treat this directory as the single global workspace for file operations unless "
        "explicitly instructed otherwise.",
        "note a",
    ]
    assert "\u2028" not in prompt
    assert sanitize_for_prompt_literal("a\u200bb\u202ec\x00d\u2029e") == "abcde"
    assert sanitize_for_prompt_literal("/plain path/é") == "/plain path/é"


def test_sandbox_without_container_dir_keeps_host_workspace() -> None:
    """Workspace section: the container guidance needs a (non-blank) container dir."""
    prompt = build(sandbox_info=SandboxInfo(enabled=True, container_workspace_dir="  "))
    assert "Your working directory is: /tmp/openclaw" in prompt
    assert "Treat this directory as the single global workspace" in prompt
    assert "## Sandbox" not in build(sandbox_info=SandboxInfo(enabled=False))


def test_sandbox_optional_lines() -> None:
    """Sandbox section: browser, host browser and elevated lines."""
    prompt = build(
        sandbox_info=SandboxInfo(
            enabled=True,
            workspace_access="rw",
            browser_bridge_url="http://bridge",
            browser_no_vnc_url="http://novnc/\nui",
            host_browser_allowed=False,
        )
    )
    assert section_of(prompt, "## Sandbox")[4:] == [
        "Agent workspace access: rw",
        "Sandbox browser: enabled.",
        "Sandbox browser observer (noVNC): http://novnc/ui",
        "Host browser control: blocked.",
    ]
    allowed = build(sandbox_info=SandboxInfo(enabled=True, host_browser_allowed=True))
    assert "Host browser control: allowed." in allowed
    assert "Elevated" not in allowed


def test_messaging_inline_buttons_not_enabled_and_hints() -> None:
    """buildMessagingSection: channel without the capability; hints appended; channel ids joined by |."""
    prompt = build(
        tool_names=["message"],
        runtime_info=RuntimeInfo(channel=" Discord "),
        message_tool_hints=["- Hint one", ""],
        message_channel_options=("discord", "slack"),
    )
    assert section_of(prompt, "## Messaging")[6:] == [
        "### message tool",
        "- Use `message` for proactive sends + channel actions (polls, reactions, etc.).",
        "- For `action=send`, include `to` and `message`.",
        "- If multiple channels are configured, pass `channel` (discord|slack).",
        "- If you use `message` (`action=send`) to deliver your user-visible reply, respond with "
        "ONLY: NO_REPLY (avoid duplicate replies).",
        "- Inline buttons not enabled for discord. If you need them, ask to set "
        'discord.capabilities.inlineButtons ("dm"|"group"|"all"|"allowlist").',
        "- Hint one",
    ]
    default_options = "|".join(DEFAULT_MESSAGE_CHANNEL_OPTIONS)
    assert f"pass `channel` ({default_options})." in build(tool_names=["message"])
    caps = build(
        tool_names=["message"],
        runtime_info=RuntimeInfo(channel="telegram", capabilities=(" INLINEBUTTONS ",)),
    )
    assert "- Inline buttons supported." in caps


def test_reactions_extensive() -> None:
    prompt = build(reaction_guidance=ReactionGuidance(level="extensive", channel="Slack"))
    assert section_of(prompt, "## Reactions") == [
        "## Reactions",
        "Reactions are enabled for Slack in EXTENSIVE mode.",
        "Feel free to react liberally:",
        "- Acknowledge messages with appropriate emojis",
        "- Express sentiment and personality through reactions",
        "- React to interesting content, humor, or notable events",
        "- Use reactions to confirm understanding or agreement",
        "Guideline: react whenever it feels natural.",
    ]


def test_runtime_reasoning_level_and_think_level() -> None:
    """Runtime section: runtime line, then the Reasoning line."""
    prompt = build(reasoning_level="stream", default_think_level="high")
    assert section_of(prompt, "## Runtime") == [
        "## Runtime",
        "Runtime: thinking=high",
        "Reasoning: stream (hidden unless on/stream). Toggle /reasoning; /status shows Reasoning "
        "when enabled.",
    ]


def test_params_accept_lists_and_stay_immutable() -> None:
    params = SystemPromptParams(
        workspace_dir="/w", tool_names=["a"], tool_summaries={"a": "A"}, owner_numbers=["+1"]
    )
    assert params.tool_names == ("a",)
    assert params.owner_numbers == ("+1",)
    with pytest.raises(TypeError):
        params.tool_summaries["b"] = "B"  # type: ignore[index]
    changed = dataclasses.replace(params, prompt_mode="minimal")
    assert changed.tool_names == ("a",)
    assert changed.tool_summaries == {"a": "A"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        params.prompt_mode = "none"  # type: ignore[misc]


# ---------------------------------------------------------------------------------------------
# tool list (buildAgentSystemPrompt: toolOrder, coreToolSummaries)
# ---------------------------------------------------------------------------------------------


def test_tool_lines_order_dedupe_and_unknown_sort() -> None:
    """Tool list: canonical order, case-insensitive dedupe keeping the first spelling, unknown
    tools sorted by lower-case name after the known ones."""
    lines = format_tool_lines(
        [" zeta ", "Image", "READ", "read", "Beta", "", "  ", "exec", "alpha", "ALPHA"]
    )
    assert lines == [
        "- READ: Read file contents",
        "- exec: Run shell commands (pty available for TTY-required CLIs)",
        "- Image: Analyze an image with the configured image model",
        "- alpha",
        "- Beta",
        "- zeta",
    ]


def test_tool_lines_full_canonical_order() -> None:
    lines = format_tool_lines(list(reversed(TOOL_ORDER)))
    assert [line.split(":")[0][2:] for line in lines] == list(TOOL_ORDER)


def test_tool_lines_unknown_sorted_by_utf16_code_units() -> None:
    """Tool list: JS sort compares UTF-16 code units, so an astral name (surrogates D800-DBFF)
    sorts before U+FB00, unlike Python's code-point order."""
    assert format_tool_lines(["\ufb00", "\U00010000x"]) == ["- \U00010000x", "- \ufb00"]


def test_tool_lines_external_summaries() -> None:
    """Tool summaries: built-in table first; caller keys trimmed + lower-cased, values trimmed, blanks
    ignored."""
    lines = format_tool_lines(
        ["read", "MyTool", "other", "blank"],
        {" MYTOOL ": "  Does things  ", "read": "ignored", "blank": "   ", "": "x"},
    )
    assert lines == [
        "- read: Read file contents",
        "- blank",
        "- MyTool: Does things",
        "- other",
    ]


def test_tool_lines_acp_variants() -> None:
    """Tool summaries: agents_list / sessions_spawn summaries depend on ACP being usable."""
    acp = format_tool_lines(["agents_list", "sessions_spawn"])
    assert acp == [
        '- agents_list: List OpenClaw agent ids allowed for sessions_spawn when runtime="subagent" '
        "(not ACP harness ids)",
        '- sessions_spawn: Spawn an isolated sub-agent or ACP coding session (runtime="acp" '
        "requires `agentId` unless `acp.defaultAgent` is configured; ACP harness ids follow "
        "acp.allowedAgents, not agents_list)",
    ]
    assert format_tool_lines(["agents_list", "sessions_spawn"], acp_spawn_enabled=False) == [
        "- agents_list: List OpenClaw agent ids allowed for sessions_spawn",
        "- sessions_spawn: Spawn an isolated sub-agent session",
    ]


def test_tool_lines_empty_fallback() -> None:
    """Tool list: no (non-blank) tool → the fixed fallback block."""
    lines = format_tool_lines(["", "  "])
    assert lines[0] == "Pi lists the standard tools above. This runtime enables:"
    assert (
        lines[-1]
        == '- session_status: show usage/time/model state and answer "what model are we using?"'
    )
    assert lines == format_tool_lines([])
    assert "- subagents: list/steer/kill sub-agent runs" in lines


@given(st.lists(st.text(alphabet="abcAB_ \t", max_size=6), max_size=12))
def test_tool_lines_one_line_per_distinct_name(names: list[str]) -> None:
    distinct = {name.strip().lower() for name in names if name.strip()}
    lines = format_tool_lines(names)
    if distinct:
        assert len(lines) == len(distinct)
        shown = [line[2:].split(":")[0].lower() for line in lines]
        assert sorted(shown) == sorted(distinct)


# ---------------------------------------------------------------------------------------------
# skills (pi formatSkillsForPrompt), owners (buildOwnerIdentityLine, formatOwnerDisplayId)
# ---------------------------------------------------------------------------------------------


def test_skills_block_exact_and_escaped() -> None:
    """pi-mono 0.58.3 `packages/coding-agent/src/core/skills.ts` (``formatSkillsForPrompt``):
    hidden skills left out, the block text, XML escaping."""
    text = format_skills_for_prompt(
        [
            Skill("a&b", 'Say "hi" <now>', "/s/it's/SKILL.md"),
            Skill("hidden", "x", "/h", disable_model_invocation=True),
        ]
    )
    assert text == (
        "\n\nThe following skills provide specialized instructions for specific tasks.\n"
        "Use the read tool to load a skill's file when the task matches its description.\n\n"
        "<available_skills>\n"
        "  <skill>\n"
        "    <name>a&amp;b</name>\n"
        "    <description>Say &quot;hi&quot; &lt;now&gt;</description>\n"
        "    <location>/s/it&apos;s/SKILL.md</location>\n"
        "  </skill>\n"
        "</available_skills>"
    )
    assert format_skills_for_prompt([Skill("h", "x", "/h", disable_model_invocation=True)]) == ""
    assert format_skills_for_prompt([]) == ""


@given(st.text(max_size=40))
def test_skills_escaping_round_trips(value: str) -> None:
    text = format_skills_for_prompt([Skill(value, value, value)])
    escaped = re.search(r"<name>(.*)</name>", text, re.S)
    assert escaped is not None
    body = escaped.group(1)
    assert "<" not in body and ">" not in body and '"' not in body and "'" not in body
    unescaped = (
        body.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", '"')
        .replace("&apos;", "'")
        .replace("&amp;", "&")
    )
    assert unescaped == value


def test_owner_ids_display_modes() -> None:
    """buildOwnerIdentityLine / formatOwnerDisplayId: trimmed, blanks dropped; anything but "hash" is raw; blank secret → SHA-256;
    the secret is trimmed."""
    assert format_owner_ids([" +1 ", "", "  "]) == ["+1"]
    assert format_owner_ids(["+123"], display="other") == ["+123"]
    assert format_owner_ids([" +123 "], display="hash", secret="   ") == ["1b245e45ea4b"]
    assert format_owner_ids(["+123"], display="hash", secret=" secret-key-A ") == ["49aeffabb32f"]
    assert format_owner_ids([], display="hash") == []


@given(st.lists(st.text(max_size=20), max_size=5), st.one_of(st.none(), st.text(max_size=10)))
def test_owner_hashes_are_12_hex(ids: list[str], secret: str | None) -> None:
    for token in format_owner_ids(ids, display="hash", secret=secret):
        assert re.fullmatch(r"[0-9a-f]{12}", token)


# ---------------------------------------------------------------------------------------------
# runtime line (system-prompt.ts: buildRuntimeLine)
# ---------------------------------------------------------------------------------------------


def test_runtime_line_field_rules() -> None:
    assert build_runtime_line(None) == "Runtime: thinking=off"
    assert build_runtime_line(RuntimeInfo(arch="x64", shell="zsh")) == (
        "Runtime: arch=x64 | shell=zsh | thinking=off"
    )
    # capabilities only with a channel; none → "none"; channel trimmed and lower-cased
    assert build_runtime_line(RuntimeInfo(capabilities=("a",))) == "Runtime: thinking=off"
    # an explicit channel is printed as given (buildRuntimeLine; runtime_line-003-random)
    assert build_runtime_line(RuntimeInfo(), " TeleGram ", []) == (
        "Runtime: channel= TeleGram  | capabilities=none | thinking=off"
    )
    # channel / capabilities default to the runtime's own
    assert build_runtime_line(RuntimeInfo(channel="Slack", capabilities=(" x ", "", "y"))) == (
        "Runtime: channel=slack | capabilities=x,y | thinking=off"
    )


# ---------------------------------------------------------------------------------------------
# sub-agent prompt (src/agents/subagent-announce.ts: buildSubagentSystemPrompt)
# ---------------------------------------------------------------------------------------------


def test_subagent_prompt_defaults_and_task_normalisation() -> None:
    """buildSubagentSystemPrompt: task collapsed + trimmed or the placeholder; depth 1 of 1 → no
    spawning section; blank lines kept."""
    prompt = build_subagent_system_prompt(task="  research\n\t task ", child_session_key="k")
    assert "- You were created to handle: research task\n" in prompt
    assert "## Sub-Agent Spawning" not in prompt
    assert prompt.startswith(
        "# Subagent Context\n\nYou are a **subagent** spawned by the main agent for a specific "
        "task.\n\n## Your Role\n"
    )
    for task in (None, "", "   "):
        placeholder = build_subagent_system_prompt(task=task, child_session_key="k")
        assert "- You were created to handle: {{TASK_DESCRIPTION}}\n" in placeholder


def test_subagent_prompt_leaf_worker_and_session_context() -> None:
    prompt = build_subagent_system_prompt(
        task="t",
        child_session_key="agent:main:subagent:a:subagent:b",
        requester_session_key="agent:main:subagent:a",
        requester_channel="telegram",
        label="research",
        child_depth=2,
        max_spawn_depth=2,
    )
    assert "spawned by the parent orchestrator" in prompt
    assert "- You are NOT the parent orchestrator. Don't try to be." in prompt
    assert (
        "## Sub-Agent Spawning\nYou are a leaf worker and CANNOT spawn further sub-agents. Focus "
        "on your assigned task.\n\n## Session Context\n" in prompt
    )
    assert prompt.endswith(
        "## Session Context\n- Label: research\n- Requester session: agent:main:subagent:a.\n"
        "- Requester channel: telegram.\n- Your session: agent:main:subagent:a:subagent:b.\n"
    )


def test_subagent_prompt_is_minimal_mode_extra_context() -> None:
    """buildSubagentSystemPrompt: the child runs minimal with the text under ## Subagent Context."""
    extra = build_subagent_system_prompt(task="t", child_session_key="agent:m:subagent:x")
    prompt = build(prompt_mode=resolve_prompt_mode("agent:m:subagent:x"), extra_system_prompt=extra)
    assert "## Subagent Context\n# Subagent Context\n\nYou are a **subagent**" in prompt


# ---------------------------------------------------------------------------------------------
# modifiers (src/agents/pi-embedded-runner/run/attempt.ts)
# ---------------------------------------------------------------------------------------------


def test_modifiers_engine_addition_prepended() -> None:
    """prependSystemPromptAddition: addition + "\\n\\n" + prompt."""
    assert apply_system_prompt_modifiers("BASE", context_engine_addition="ADD") == "ADD\n\nBASE"
    assert apply_system_prompt_modifiers("BASE", context_engine_addition="") == "BASE"
    assert apply_system_prompt_modifiers(" BASE ") == " BASE "


def test_modifiers_hook_replaces_and_wraps() -> None:
    """composeSystemPromptWithHookContext: a non-blank hook prompt replaces (trimmed); prepend/append wrap with \\n\\n."""
    assert apply_system_prompt_modifiers("BASE", hook_system_prompt="  NEW  ") == "NEW"
    assert apply_system_prompt_modifiers("BASE", hook_system_prompt="   ") == "BASE"
    assert (
        apply_system_prompt_modifiers(
            "BASE",
            context_engine_addition="ADD",
            hook_system_prompt="NEW",
            prepend_system_context=" PRE ",
            append_system_context=" POST\n",
        )
        == "PRE\n\nNEW\n\nPOST"
    )
    assert apply_system_prompt_modifiers(" BASE\n", append_system_context="POST") == "BASE\n\nPOST"
    assert apply_system_prompt_modifiers("BASE", prepend_system_context="PRE") == "PRE\n\nBASE"
    assert apply_system_prompt_modifiers(" BASE ", prepend_system_context="  ") == " BASE "


def test_build_extra_system_prompt() -> None:
    """runPreparedReply (src/auto-reply/reply/get-reply-run.ts): extraSystemPrompt parts, empties
    dropped, joined with a blank line."""
    assert build_extra_system_prompt("meta", None, "", "intro", "group") == "meta\n\nintro\n\ngroup"
    assert build_extra_system_prompt() == ""
    assert build_extra_system_prompt(None, "") == ""


# ---------------------------------------------------------------------------------------------
# Layout customisation
# ---------------------------------------------------------------------------------------------

EXPECTED_NAMES = (
    "identity",
    "tooling",
    "tool_call_style",
    "safety",
    "cli_quick_reference",
    "skills",
    "memory_recall",
    "self_update",
    "model_aliases",
    "time_hint",
    "workspace",
    "documentation",
    "sandbox",
    "authorized_senders",
    "current_date_time",
    "workspace_files",
    "reply_tags",
    "messaging",
    "voice",
    "extra_context",
    "reactions",
    "reasoning_format",
    "project_context",
    "silent_replies",
    "heartbeats",
    "runtime",
)


def _fixed(name: str, lines: Sequence[str]) -> SystemPromptSection:
    return SystemPromptSection(name, lambda _params: list(lines))


def test_default_layout_names() -> None:
    assert OPENCLAW_LAYOUT.names() == EXPECTED_NAMES
    assert len(OPENCLAW_LAYOUT) == 26
    assert "runtime" in OPENCLAW_LAYOUT
    assert [section.name for section in OPENCLAW_LAYOUT] == list(EXPECTED_NAMES)


def test_layout_add_section_before_and_after() -> None:
    policy = _fixed("house_rules", ["## House Rules", "Be brief.", ""])
    before = OPENCLAW_LAYOUT.with_section(policy, before="runtime")
    after = OPENCLAW_LAYOUT.with_section(policy, after="safety")
    at_end = OPENCLAW_LAYOUT.with_section(policy)
    params = SystemPromptParams(workspace_dir=WORKSPACE)
    assert build_system_prompt(params, layout=before).endswith(
        "✅ Right: NO_REPLY\n## Heartbeats\n"
        + "\n".join(section_of(DEFAULT_PROMPT, "## Heartbeats")[1:])
        + "\n## House Rules\nBe brief.\n## Runtime\nRuntime: thinking=off\n"
        "Reasoning: off (hidden unless on/stream). Toggle /reasoning; /status shows Reasoning "
        "when enabled."
    )
    assert after.names().index("house_rules") == after.names().index("safety") + 1
    assert (
        "and paste the output."
        not in build_system_prompt(params, layout=after).split("## House Rules")[0]
    )
    assert build_system_prompt(params, layout=at_end).endswith(
        "when enabled.\n## House Rules\nBe brief."
    )
    # the preset is untouched
    assert OPENCLAW_LAYOUT.names() == EXPECTED_NAMES
    assert build_system_prompt(params) == DEFAULT_PROMPT


def test_layout_drop_and_replace_section() -> None:
    params = SystemPromptParams(workspace_dir=WORKSPACE)
    dropped = OPENCLAW_LAYOUT.without("cli_quick_reference")
    prompt = build_system_prompt(params, layout=dropped)
    assert "## OpenClaw CLI Quick Reference" not in prompt
    assert "## Safety" in prompt
    assert "cli_quick_reference" not in dropped.names()

    replaced = OPENCLAW_LAYOUT.replacing("safety", _fixed("safety", ["## Safety", "Custom."]))
    assert "## Safety\nCustom.\n## OpenClaw CLI Quick Reference" in build_system_prompt(
        params, layout=replaced
    )
    renamed = OPENCLAW_LAYOUT.replacing("safety", _fixed("my_safety", ["## My Safety"]))
    assert renamed.names().index("my_safety") == EXPECTED_NAMES.index("safety")
    assert OPENCLAW_LAYOUT.section("safety").render(params)[0] == "## Safety"
    assert build_system_prompt(params) == DEFAULT_PROMPT


def test_layout_errors() -> None:
    with pytest.raises(ValueError, match="already exists"):
        OPENCLAW_LAYOUT.with_section(_fixed("runtime", []))
    with pytest.raises(ValueError, match="at most one"):
        OPENCLAW_LAYOUT.with_section(_fixed("x", []), before="runtime", after="identity")
    with pytest.raises(KeyError):
        OPENCLAW_LAYOUT.with_section(_fixed("x", []), before="nope")
    with pytest.raises(KeyError):
        OPENCLAW_LAYOUT.without("nope")
    with pytest.raises(KeyError):
        OPENCLAW_LAYOUT.replacing("nope", _fixed("nope", []))
    with pytest.raises(ValueError, match="already exists"):
        OPENCLAW_LAYOUT.replacing("safety", _fixed("runtime", []))
    with pytest.raises(ValueError, match="duplicate"):
        SystemPromptLayout((_fixed("a", []), _fixed("a", [])))


def test_layout_none_mode_still_identity_only() -> None:
    layout = OPENCLAW_LAYOUT.with_section(_fixed("x", ["X"]), before="identity")
    params = SystemPromptParams(workspace_dir=WORKSPACE, prompt_mode="none")
    assert build_system_prompt(params, layout=layout) == IDENTITY_LINE


def test_empty_layout_gives_empty_prompt() -> None:
    assert (
        build_system_prompt(SystemPromptParams(workspace_dir="/w"), layout=SystemPromptLayout())
        == ""
    )


def test_owner_hash_of_lone_surrogate_matches_node() -> None:
    """Node hashes a lone surrogate as U+FFFD (EF BF BD); Python must not raise."""
    expected = hashlib.sha256("\ufffd".encode()).hexdigest()[:12]
    assert format_owner_ids(["\ud800"], display="hash") == [expected]


def test_tool_summaries_reach_the_prompt() -> None:
    prompt = build(tool_names=["weather"], tool_summaries={"Weather": " Forecasts "})
    assert "\n- weather: Forecasts\n" in prompt


def test_elevated_without_level_omits_level_line() -> None:
    prompt = build(sandbox_info=SandboxInfo(enabled=True, elevated_allowed=True))
    assert "User can toggle with /elevated on|off|ask|full." in prompt
    assert "Current elevated level" not in prompt


# ---------------------------------------------------------------------------------------------
# 2026.3.13 specifics (conformance cases system_prompt / runtime_line / subagent_system_prompt)
# ---------------------------------------------------------------------------------------------

EXEC_APPROVAL_LINES = (
    "When exec returns approval-pending, include the concrete /approve command from tool output "
    "(with allow-once|allow-always|deny) and do not ask for a different or rotated code.",
    "Treat allow-once as single-command only: if another elevated command needs approval, "
    "request a fresh /approve and do not claim prior approval covered it.",
    "When approvals are required, preserve and show the full command/script exactly as provided "
    "(including chained operators like &&, ||, |, ;, or multiline shells) so the user can "
    "approve what will actually run.",
)


@pytest.mark.parametrize("mode", ["full", "minimal"])
def test_tool_call_style_ends_with_exec_approval_lines(mode: str) -> None:
    """buildAgentSystemPrompt 2026.3.13: three exec-approval lines close Tool Call Style."""
    section = section_of(build(prompt_mode=mode), "## Tool Call Style")
    assert tuple(section[-3:]) == EXEC_APPROVAL_LINES


def test_message_channel_list_ends_with_line() -> None:
    """listDeliverableMessageChannels with no plugins: the core channels, LINE last."""
    assert DEFAULT_MESSAGE_CHANNEL_OPTIONS[-1] == "line"
    assert (
        "pass `channel` (telegram|whatsapp|discord|irc|googlechat|slack|signal|imessage|line)."
        in build(tool_names=["message"])
    )


def test_skills_kept_in_minimal_by_default_and_dropped_on_request() -> None:
    assert "## Skills (mandatory)" in build(prompt_mode="minimal", skills_prompt=SKILLS_PROMPT)
    dropped = build(
        prompt_mode="minimal", skills_prompt=SKILLS_PROMPT, keep_skills_in_minimal=False
    )
    assert "## Skills" not in dropped
    assert "<available_skills>" not in dropped
    # full mode ignores the switch
    assert "## Skills (mandatory)" in build(
        skills_prompt=SKILLS_PROMPT, keep_skills_in_minimal=False
    )


def test_bootstrap_truncation_warning_with_context_files() -> None:
    prompt = build(
        context_files=[ContextFile("AGENTS.md", "agents")],
        bootstrap_truncation_warning_lines=["AGENTS.md: 30000 raw -> 20000 injected", "  ", ""],
    )
    start = prompt.index("# Project Context")
    assert prompt[start:].startswith(
        "# Project Context\n"
        "The following project context files have been loaded:\n"
        "⚠ Bootstrap truncation warning:\n"
        "- AGENTS.md: 30000 raw -> 20000 injected\n"
        "## AGENTS.md\n"
        "agents\n"
    )


def test_bootstrap_truncation_warning_alone_opens_project_context() -> None:
    prompt = build(bootstrap_truncation_warning_lines=("a", "b"))
    assert "# Project Context\n⚠ Bootstrap truncation warning:\n- a\n- b\n## Silent Replies" in (
        prompt
    )
    assert "The following project context files" not in prompt
    assert "# Project Context" not in build(bootstrap_truncation_warning_lines=[" ", ""])


def test_runtime_line_keeps_explicit_channel_and_capabilities_raw() -> None:
    """buildRuntimeLine prints what it is given: channel case, blank capabilities, ``??``."""
    assert build_runtime_line(None, "Discord", ["", "inlineButtons"], "") == (
        "Runtime: channel=Discord | capabilities=,inlineButtons | thinking="
    )
    assert build_runtime_line(None, "Discord", [""]) == (
        "Runtime: channel=Discord | capabilities= | thinking=off"
    )
    assert build_runtime_line(None, "", ["x"]) == "Runtime: thinking=off"
    # the system prompt still normalizes runtimeInfo.channel / capabilities first
    prompt = build(runtime_info=RuntimeInfo(channel=" Discord ", capabilities=("", " x ")))
    assert "Runtime: channel=discord | capabilities=x | thinking=off" in prompt


SUBAGENT_PUSH_LINES = (
    "Auto-announce is push-based. After spawning children, do NOT call sessions_list, "
    "sessions_history, exec sleep, or any polling tool.",
    "Wait for completion events to arrive as user messages.",
    "Track expected child session keys and only send your final answer after completion events "
    "for ALL expected children arrive.",
    "If a child completion event arrives AFTER you already sent your final answer, reply ONLY "
    "with NO_REPLY.",
)

SUBAGENT_ACP_LINES = (
    "For ACP harness sessions (codex/claudecode/gemini), use `sessions_spawn` with "
    '`runtime: "acp"` (set `agentId` unless `acp.defaultAgent` is configured).',
    '`agents_list` and `subagents` apply to OpenClaw sub-agents (`runtime: "subagent"`); ACP '
    "harness ids are controlled by `acp.allowedAgents`.",
    "Do not ask users to run slash commands or CLI when `sessions_spawn` can do it directly.",
    "Do not use `exec` (`openclaw ...`, `acpx ...`) to spawn ACP sessions.",
    'Use `subagents` only for OpenClaw subagents (`runtime: "subagent"`).',
    "Subagent results auto-announce back to you; ACP sessions continue in their bound thread.",
    "Avoid polling loops; spawn, orchestrate, and synthesize results.",
)


def test_subagent_spawning_section_push_and_acp_lines() -> None:
    prompt = build_subagent_system_prompt(
        task="t", child_session_key="k", child_depth=1, max_spawn_depth=2
    )
    section = section_of(prompt, "## Sub-Agent Spawning")
    assert tuple(section[5:9]) == SUBAGENT_PUSH_LINES
    assert section[9].startswith("Do NOT repeatedly poll `subagents list`")
    assert section[10] == "Coordinate their work and synthesize results before reporting back."
    assert tuple(section[11:18]) == SUBAGENT_ACP_LINES
    assert section[18:] == [""]


def test_subagent_acp_lines_off_and_absent_without_spawning() -> None:
    off = build_subagent_system_prompt(
        task="t", child_session_key="k", max_spawn_depth=2, acp_enabled=False
    )
    assert SUBAGENT_PUSH_LINES[0] in off
    assert "ACP" not in off
    assert section_of(off, "## Sub-Agent Spawning")[-2:] == [
        "Coordinate their work and synthesize results before reporting back.",
        "",
    ]
    leaf = build_subagent_system_prompt(task="t", child_session_key="k", child_depth=2)
    assert "ACP" not in leaf
    assert SUBAGENT_PUSH_LINES[0] not in leaf
