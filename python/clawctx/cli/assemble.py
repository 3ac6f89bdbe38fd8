"""``clawctx assemble``: the system prompt, messages and request body of one request, read-only.

Layer: ``clawctx.cli`` (the top of the package).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any

from clawctx import _core
from clawctx.cli._common import (
    DEFAULT_MODEL_BY_API,
    MODEL_APIS,
    PROVIDERS,
    Printer,
    add_context_window,
    clawctx_log,
    default_api,
    describe,
    error,
    is_store_path,
    load_tool_definitions,
    missing_session,
    pi_session_problem,
    print_json,
    store_session_file,
)
from clawctx.demo import demo_session_path, demo_workspace_path
from clawctx.history.inspect import TOOL_CALL_BLOCK_TYPES
from clawctx.wire.payload import SUPPORTED_APIS

SUMMARY = "assemble the system prompt and messages of one request (read-only)"
"""The command's line in ``clawctx --help``."""
DESCRIPTION = (
    "Assemble the system prompt and messages of one request, and report every "
    "change the pipeline made. The session file is only read."
)
"""The command's description in ``clawctx assemble --help``."""
EXAMPLES = """\
examples:
  clawctx assemble                                # the bundled demo session and workspace
  clawctx assemble session.jsonl --workspace ~/agent --prompt "hi" --json
  clawctx assemble --provider google --model-api google-generative-ai --model gemini-2.5-pro
  clawctx assemble --payload                      # the Anthropic request body, as JSON
  clawctx assemble openclaw-agent.sqlite --session ID --prompt "hi"   # from an OpenClaw store"""
"""Its examples, shown after the options in ``clawctx assemble --help``."""


#: The tools ``clawctx assemble`` lists when none are given: pi's coding tools.
DEFAULT_ASSEMBLE_TOOLS: tuple[str, ...] = ("read", "write", "edit", "grep", "find", "ls", "exec")


def run(args: argparse.Namespace) -> int:
    if args.session is not None and is_store_path(Path(args.session)):
        # An OpenClaw store: the session --session names, read into a temporary JSONL file.
        store = Path(args.session)
        if args.store_session is None:
            return missing_session("assemble", store)
        with contextlib.ExitStack() as stack:
            try:
                local = stack.enter_context(store_session_file(store, args.store_session))
            except (OSError, _core.ClawctxError) as err:
                error("assemble", store, describe(err, store))
                return 1
            return _run(argparse.Namespace(**{**vars(args), "session": str(local)}))
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    # Imported here: the facade modules are not needed by the other commands.
    from clawctx.engine.pipeline import ContextPipeline, ModelSpec, PromptRequest
    from clawctx.prompt.system_prompt import SystemPromptParams
    from clawctx.runtime.replies import resolve_heartbeat_prompt

    session = Path(args.session) if args.session else demo_session_path()
    workspace = Path(args.workspace) if args.workspace else demo_workspace_path()
    problem = pi_session_problem(session)
    if problem is not None:
        error("assemble", session, problem)
        return 1
    api = args.model_api or default_api(args.provider)
    if args.payload and api not in SUPPORTED_APIS:
        # The cause is the API, not the session file: say so.
        print(
            f"clawctx assemble: --payload: no request body for {api}: pi-ai builds that "
            f"request inside the vendor's SDK; --payload writes: {', '.join(SUPPORTED_APIS)}",
            file=sys.stderr,
        )
        return 1
    if not workspace.is_dir():
        error("assemble", workspace, "workspace is not a directory")
        return 1
    # --tools: a JSON file of tool definitions (a list, or {"tools": [...]}, in pi's or an
    # SDK's shape: sent in --payload, names and descriptions listed in the system prompt), or
    # comma-separated names (the system prompt only).
    tools = None
    tool_names = tuple(args.tools.split(",")) if args.tools else DEFAULT_ASSEMBLE_TOOLS
    if args.tools and Path(args.tools).is_file():
        try:
            tools = load_tool_definitions(Path(args.tools))
        except (OSError, ValueError) as err:
            error("assemble", Path(args.tools), f"cannot read the tool definitions: {err}")
            return 1
        tool_names = ()  # the pipeline lists the definitions' names and descriptions
    params = SystemPromptParams(
        workspace_dir=str(workspace),
        tool_names=tool_names,
        user_timezone=args.timezone,
        # What OpenClaw 2026.3.13 gives the default agent with no heartbeat configured
        # (`src/agents/pi-embedded-runner/run/attempt.ts`, resolveHeartbeatPrompt).
        heartbeat_prompt=resolve_heartbeat_prompt(None),
    )
    model = ModelSpec(
        provider=args.provider,
        api=api,
        id=args.model or DEFAULT_MODEL_BY_API.get(api, "claude-sonnet-4-5"),
        input=("text", "image") if args.image_input else ("text",),
        context_window=args.context_window,
    )
    # A preview: the session file is only read (no repair on disk, no leaf or snapshot writes).
    pipeline = ContextPipeline(
        model=model, workspace_dir=workspace, system_prompt=params, read_only=True, tools=tools
    )
    request = PromptRequest(text=args.prompt, session_key=args.session_key)
    try:
        with clawctx_log(verbose=False):
            prepared = pipeline.prepare(session, request)
            # For the report's think-level line; reads only the end of the file.
            recorded = None if args.json else _core.read_leaf_context(session).thinking_level
    except (OSError, _core.ClawctxError) as err:
        error("assemble", session, describe(err, session))
        return 1
    if args.json:
        print_json(prepared.to_dict())
        return 0
    out = Printer()
    if args.payload and prepared.should_run:
        # The request body pi-ai 0.58.3 would send for this model (clawctx.wire).
        try:
            body = prepared.request_payload()
        except _core.ClawctxError as err:
            # Where pi-ai throws (credentials the API needs, an option it refuses): the cause
            # is the API, not the session file.
            print(f"clawctx assemble: --payload: {api}: {err}", file=sys.stderr)
            return 1
        print_json(body)
        return 0
    if not prepared.should_run:
        out.line(f"(no model call) {prepared.reply_text}")
        return 0
    messages = prepared.messages.to_list() + [prepared.prompt_message]
    # The summary first, the long system prompt last.
    out.heading("report")
    if prepared.think_level:
        think = f"{prepared.think_level} (the level word the prompt starts with)"
    else:
        think = (
            "(model default): the prompt does not start with a level word such as 'high'; "
            "the session file records "
            f"thinking level {recorded}, which a runtime passes as "
            "PromptRequest(resolved_think_level=...)"
        )
    out.line(f"think level: {think}")
    out.line(f"estimated tokens: {prepared.estimated_tokens}")
    if prepared.estimated_tokens > args.context_window:
        out.line(
            f"over the context window: ~{prepared.estimated_tokens:,} estimated tokens against "
            f"a {args.context_window:,}-token window (--context-window); the provider would "
            "reject or truncate this request: compact the session first",
            "bold red",
        )
    lines = prepared.system_prompt.count("\n") + 1
    out.line(f"system prompt: {lines} lines (printed last)")
    out.line(f"images: {len(prepared.images)}")
    for change in prepared.changes:
        out.line(f"- {change.stage}: {change.detail}")
    out.line()
    out.heading(f"messages ({len(messages)})")
    for index, message in enumerate(messages):
        out.line(f"[{index}] {_message_preview(message)}")
    out.line()
    out.heading("system prompt")
    out.line(prepared.system_prompt)
    return 0


def _message_preview(message: dict[str, Any], width: int = 100) -> str:
    role = message.get("role", "?")
    content = message.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        parts = []
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                parts.append(str(block.get("text", "")))
            elif kind in TOOL_CALL_BLOCK_TYPES:
                parts.append(f"<{kind} {block.get('name', '')}>")
            else:
                parts.append(f"<{kind}>")
        text = " ".join(parts)
    else:
        summary = message.get("summary")  # compactionSummary / branchSummary messages
        text = summary if isinstance(summary, str) else ""
    text = " ".join(text.split())
    if len(text) > width:
        text = text[: width - 1] + "…"
    return f"{role}: {text}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``clawctx assemble``."""
    parser.add_argument(
        "session",
        nargs="?",
        help="session .jsonl file or OpenClaw .sqlite store (default: the demo)",
    )
    parser.add_argument(
        "--session",
        dest="store_session",
        metavar="ID",
        help="with an OpenClaw store as SESSION: the session (window) to assemble",
    )
    parser.add_argument(
        "--provider",
        default="anthropic",
        metavar="NAME",
        help=f"model provider (default: %(default)s); one of: {', '.join(PROVIDERS)}",
    )
    parser.add_argument(
        "--model-api",
        default=None,
        metavar="API",
        help="model API (default: the API of --provider's models, anthropic-messages for "
        f"anthropic, openai-responses for openai); one of: {', '.join(MODEL_APIS)}",
    )
    parser.add_argument(
        "--model", help="model id (default: one of --model-api's, claude-sonnet-4-5 for Anthropic)"
    )
    parser.add_argument(
        "--prompt", default="What changed since the last release?", help="the user message"
    )
    parser.add_argument(
        "--workspace", help="workspace directory: AGENTS.md, SOUL.md, skills/ (default: the demo)"
    )
    parser.add_argument("--session-key", help="session key (sub-agent keys get a minimal prompt)")
    parser.add_argument(
        "--tools",
        help="comma-separated tool names (default: pi's coding tools), or a JSON file of tool "
        "definitions (pi's {name, description, parameters} or an SDK's shape) that --payload sends",
    )
    parser.add_argument("--timezone", help="user time zone for the system prompt")
    parser.add_argument(
        "--image-input", action="store_true", help="the model accepts images (loads prompt images)"
    )
    add_context_window(
        parser,
        "the model's context window, a positive number of tokens (default: %(default)s)",
    )
    parser.add_argument("--json", action="store_true", help="print everything as JSON")
    parser.add_argument(
        "--payload",
        action="store_true",
        help="print only the provider request body pi-ai would send for --model-api (JSON)",
    )
