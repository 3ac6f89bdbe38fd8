"""Facade prompt text (OpenClaw 2026.3.13): system prompt, runtime line, sub-agent prompt,
inbound metadata, media note, session hints, system events, untrusted context, internal
events, image references, input provenance.

clawctx's hardening options are switched to the baseline where it offers them
(``neutralize_untrusted=False``, ``later_media_rules=False``, undelimited internal events with
raw fields).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import fields
from typing import Any

from . import _api
from ._harness import adapter, json_equal, to_json

# ---- buildAgentSystemPrompt ------------------------------------------------------------------

_RUNTIME_FIELDS = {
    "agentId": "agent_id",
    "host": "host",
    "os": "os",
    "arch": "arch",
    "node": "node",
    "model": "model",
    "defaultModel": "default_model",
    "shell": "shell",
    "channel": "channel",
    "capabilities": "capabilities",
    "repoRoot": "repo_root",
}

_SANDBOX_FIELDS = {
    "enabled": "enabled",
    "workspaceDir": "workspace_dir",
    "containerWorkspaceDir": "container_workspace_dir",
    "workspaceAccess": "workspace_access",
    "agentWorkspaceMount": "agent_workspace_mount",
    "browserBridgeUrl": "browser_bridge_url",
    "browserNoVncUrl": "browser_no_vnc_url",
    "hostBrowserAllowed": "host_browser_allowed",
}

_PROMPT_FIELDS = {
    "workspaceDir": "workspace_dir",
    "defaultThinkLevel": "default_think_level",
    "reasoningLevel": "reasoning_level",
    "extraSystemPrompt": "extra_system_prompt",
    "ownerNumbers": "owner_numbers",
    "ownerDisplay": "owner_display",
    "ownerDisplaySecret": "owner_display_secret",
    "reasoningTagHint": "reasoning_tag_hint",
    "toolNames": "tool_names",
    "toolSummaries": "tool_summaries",
    "modelAliasLines": "model_alias_lines",
    "userTimezone": "user_timezone",
    "userTime": "user_time",
    "userTimeFormat": "user_time_format",
    "bootstrapTruncationWarningLines": "bootstrap_truncation_warning_lines",
    "skillsPrompt": "skills_prompt",
    "heartbeatPrompt": "heartbeat_prompt",
    "docsPath": "docs_path",
    "workspaceNotes": "workspace_notes",
    "ttsHint": "tts_hint",
    "promptMode": "prompt_mode",
    "acpEnabled": "acp_enabled",
    "messageToolHints": "message_tool_hints",
    "memoryCitationsMode": "memory_citations_mode",
}


def _mapped(raw: dict[str, Any], names: dict[str, str], what: str) -> dict[str, Any]:
    out = {}
    for key, value in raw.items():
        if key not in names:
            raise NotImplementedError(f"{what} has no field for upstream's {key!r}")
        if value is not None:
            out[names[key]] = value
    return out


def runtime_info(raw: dict[str, Any] | None) -> Any:
    if raw is None:
        return None
    return _api.RuntimeInfo(**_mapped(raw, _RUNTIME_FIELDS, "RuntimeInfo"))


def sandbox_info(raw: dict[str, Any]) -> Any:
    raw = dict(raw)
    elevated = raw.pop("elevated", None)
    kwargs = _mapped(raw, _SANDBOX_FIELDS, "SandboxInfo")
    if elevated is not None:
        kwargs["elevated_allowed"] = elevated.get("allowed")
        if elevated.get("defaultLevel") is not None:
            kwargs["elevated_default_level"] = elevated["defaultLevel"]
    return _api.SandboxInfo(**kwargs)


@adapter("system_prompt")
def system_prompt(inp: Any, params: Any) -> Any:
    raw = dict(inp["params"])
    context_files = raw.pop("contextFiles", None)
    runtime = raw.pop("runtimeInfo", None)
    sandbox = raw.pop("sandboxInfo", None)
    reaction = raw.pop("reactionGuidance", None)
    kwargs = _mapped(raw, _PROMPT_FIELDS, "SystemPromptParams")
    if context_files is not None:
        kwargs["context_files"] = [_api.ContextFile(f["path"], f["content"]) for f in context_files]
    if runtime is not None:
        kwargs["runtime_info"] = runtime_info(runtime)
    if sandbox is not None:
        kwargs["sandbox_info"] = sandbox_info(sandbox)
    if reaction is not None:
        kwargs["reaction_guidance"] = _api.ReactionGuidance(reaction["level"], reaction["channel"])
    return {"text": _api.build_system_prompt(_api.SystemPromptParams(**kwargs))}


@adapter("runtime_line")
def runtime_line(inp: Any, params: Any) -> Any:
    text = _api.build_runtime_line(
        runtime_info(inp["runtimeInfo"]),
        inp.get("runtimeChannel"),
        inp.get("runtimeCapabilities"),
        inp.get("defaultThinkLevel"),
    )
    return {"text": text}


@adapter("subagent_system_prompt")
def subagent_system_prompt(inp: Any, params: Any) -> Any:
    raw = inp["params"]
    origin = raw.get("requesterOrigin") or {}
    kwargs: dict[str, Any] = {}
    if "childDepth" in raw:
        kwargs["child_depth"] = raw["childDepth"]
    if "maxSpawnDepth" in raw:
        kwargs["max_spawn_depth"] = raw["maxSpawnDepth"]
    if "acpEnabled" in raw:
        kwargs["acp_enabled"] = raw["acpEnabled"]
    text = _api.build_subagent_system_prompt(
        task=raw.get("task"),
        child_session_key=raw.get("childSessionKey"),
        requester_session_key=raw.get("requesterSessionKey"),
        requester_channel=origin.get("channel"),
        label=raw.get("label"),
        **kwargs,
    )
    return {"text": text}


# ---- inbound metadata and the prompt body ----------------------------------------------------


def _pascal(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


_INBOUND_KEYS = frozenset(_pascal(f.name) for f in fields(_api.InboundContext))


def inbound_context(ctx: dict[str, Any], *, strict: bool) -> Any:
    """The case's PascalCase TemplateContext as an InboundContext.

    With ``strict``, a set field that InboundContext has no place for is reported as missing
    (``from_mapping`` would silently ignore it).
    """
    if strict:
        unknown = sorted(k for k, v in ctx.items() if v is not None and k not in _INBOUND_KEYS)
        if unknown:
            raise NotImplementedError(f"InboundContext has no field for {', '.join(unknown)}")
    return _api.InboundContext.from_mapping(ctx)


# 2026.3.13 has no isNewSession: it keeps the thread starter, as clawctx does for a new session.
@adapter("inbound_user_context_prefix")
def inbound_user_context_prefix(inp: Any, params: Any) -> Any:
    ctx = inbound_context(inp["ctx"], strict=True)
    text = _api.build_inbound_user_context_prefix(
        ctx, is_new_session=True, neutralize_untrusted=False
    )
    return {"text": text}


@adapter("inbound_meta_system_prompt")
def inbound_meta_system_prompt(inp: Any, params: Any) -> Any:
    ctx = inbound_context(inp["ctx"], strict=True)
    return {"text": _api.build_inbound_meta_system_prompt(ctx, is_new_session=True)}


@adapter("inbound_media_note")
def inbound_media_note(inp: Any, params: Any) -> Any:
    ctx = inbound_context(inp["ctx"], strict=False)
    note = _api.build_media_note(ctx, later_media_rules=False, neutralize_untrusted=False)
    return {"text": note}


@adapter("apply_session_hints")
def apply_session_hints(inp: Any, params: Any) -> Any:
    return {"text": _api.apply_abort_hint(inp["baseBody"], inp["abortedLastRun"])}


@adapter("system_events")
def system_events(inp: Any, params: Any) -> Any:
    clock = [0]
    queue = _api.SystemEventQueue(now_ms=lambda: clock[0])
    session_key = "agent:main:main"
    enqueued = []
    for event in inp["events"]:
        clock[0] = event["ts"]
        enqueued.append(
            queue.enqueue(
                event["text"],
                session_key=event.get("sessionKey", session_key),
                context_key=event.get("contextKey"),
            )
        )
    body = _api.prepend_system_events(
        "",
        queue.drain(session_key),
        envelope_timezone=params.get("envelopeTimezone"),
        user_timezone=params.get("userTimezone"),
        neutralize_untrusted=False,
    )
    # drainFormattedSystemEvents returns the block alone (null without events); clawctx puts
    # it before a body, followed by a blank line.
    block = None if body == "" else body.removesuffix("\n\n")
    return {"block": block, "enqueued": enqueued}


@adapter("append_untrusted_context")
def append_untrusted_context(inp: Any, params: Any) -> Any:
    text = _api.append_untrusted_context(inp["base"], inp["untrusted"], neutralize_untrusted=False)
    return {"text": text}


@adapter("format_internal_events")
def format_internal_events(inp: Any, params: Any) -> Any:
    text = _api.format_agent_internal_events_for_prompt(
        inp["events"], delimited=False, sanitize_fields=False
    )
    return {"text": text}


@contextlib.contextmanager
def home(path: str) -> Iterator[None]:
    old = os.environ.get("HOME")
    os.environ["HOME"] = path
    try:
        yield
    finally:
        if old is None:
            del os.environ["HOME"]
        else:
            os.environ["HOME"] = old


@adapter("detect_image_references")
def detect_image_references(inp: Any, params: Any) -> Any:
    with home("/home/user"):
        refs = _api.detect_image_references(inp["prompt"])
    return {"refs": [{"raw": r.raw, "type": r.type, "resolved": r.resolved} for r in refs]}


@adapter("apply_input_provenance")
def apply_input_provenance(inp: Any, params: Any) -> Any:
    message = inp["message"]
    out = _api.apply_input_provenance_to_user_message(message, inp["provenance"])
    # clawctx returns a new dict either way: an equal one is its "no change".
    return {"message": out, "unchanged": out is message or json_equal(message, to_json(out))}
