"""Tools in the request (issue 28, item 3): definitions in pi's shape or an SDK's own shape are
normalized to pi's ``{name, description, parameters}`` and sent converted per API exactly as
pi-ai 0.58.3 sends them (checked against ``../shared/conformance-payload/``), through
``ContextPipeline(tools=...)``, ``PromptRequest(tools=...)`` and ``clawctx assemble --tools``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from clawctx.engine.pipeline import ContextPipeline, ModelSpec, PromptRequest
from clawctx.history import Session
from clawctx.prompt.system_prompt import SystemPromptParams
from clawctx.wire import ToolDefinitionError, build_request_payload, normalize_tools
from conftest import SHARED

PAYLOADS = SHARED / "conformance-payload"
NOW = 1_767_225_600_000

#: Where each API's body holds the converted tools.
TOOLS_AT: dict[str, Callable[[dict[str, Any]], Any]] = {
    "anthropic-messages": lambda p: p.get("tools"),
    "openai-completions": lambda p: p.get("tools"),
    "openai-responses": lambda p: p.get("tools"),
    "azure-openai-responses": lambda p: p.get("tools"),
    "openai-codex-responses": lambda p: p.get("tools"),
    "mistral-conversations": lambda p: p.get("tools"),
    "google-generative-ai": lambda p: p["config"].get("tools"),
    "google-vertex": lambda p: p["config"].get("tools"),
    "google-gemini-cli": lambda p: p["request"].get("tools"),
}

#: pi tools in each SDK's shape.
SHAPES: dict[str, Callable[[list[dict[str, Any]]], list[Any]]] = {
    "pi": lambda tools: tools,
    "anthropic": lambda tools: [
        {"name": t["name"], "description": t["description"], "input_schema": t["parameters"]}
        for t in tools
    ],
    "openai-chat": lambda tools: [{"type": "function", "function": dict(t)} for t in tools],
    "openai-responses": lambda tools: [{"type": "function", **t, "strict": False} for t in tools],
    "gemini": lambda tools: [
        {
            "function_declarations": [
                {"name": t["name"], "description": t["description"], "parameters": t["parameters"]}
                for t in tools
            ]
        }
    ],
    "gemini-camel": lambda tools: [
        {
            "functionDeclarations": [
                {
                    "name": t["name"],
                    "description": t["description"],
                    "parametersJsonSchema": t["parameters"],
                }
                for t in tools
            ]
        }
    ],
}


def _cases_with_tools(limit: int = 3) -> list[Any]:
    if not PAYLOADS.is_dir():
        return [pytest.param(None, id="no-shared", marks=pytest.mark.skip("../shared absent"))]
    params = []
    for api in TOOLS_AT:
        taken = 0
        for line in (PAYLOADS / f"{api}.jsonl").read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            tools = case["input"].get("context", {}).get("tools")
            if tools and "payload" in case["expected"] and taken < limit:
                params.append(pytest.param(case, id=case["id"]))
                taken += 1
    return params


@pytest.mark.parametrize("case", _cases_with_tools())
@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_shape_is_sent_as_pi_ai_sends_pi_tools(case: dict[str, Any], shape: str) -> None:
    pi_tools = case["input"]["context"]["tools"]
    given = SHAPES[shape](pi_tools)
    normalized = normalize_tools(given)
    assert normalized == [
        {"name": t["name"], "description": t["description"], "parameters": t["parameters"]}
        for t in pi_tools
    ]
    model = case["input"]["model"]
    context = {**case["input"]["context"], "tools": normalized}
    body = build_request_payload(
        model,
        context,
        case["params"].get("options"),
        simple=case["fn"] == "stream_simple",
        now_ms=NOW,
    ).to_dict()
    at = TOOLS_AT[model["api"]]
    assert at(body) == at(case["expected"]["payload"])


def test_tool_objects_and_bad_definitions() -> None:
    pydantic = pytest.importorskip("pydantic")

    class Args(pydantic.BaseModel):  # type: ignore[misc,name-defined]
        path: str

    class LangChainLike:  # name, description, args_schema: what LangChain's BaseTool has
        name = "read"
        description = "Read a file"
        args_schema = Args

    class SdkTool(pydantic.BaseModel):  # type: ignore[misc,name-defined]
        name: str
        description: str
        input_schema: dict[str, Any]

    (from_object,) = normalize_tools([LangChainLike()]) or []
    assert from_object["name"] == "read" and from_object["description"] == "Read a file"
    assert from_object["parameters"]["properties"]["path"]["type"] == "string"
    assert normalize_tools(
        [SdkTool(name="ls", description="List", input_schema={"type": "object"})]
    ) == [{"name": "ls", "description": "List", "parameters": {"type": "object"}}]
    # Missing description and parameters get pi-ai-safe defaults.
    assert normalize_tools([{"name": "now"}]) == [
        {"name": "now", "description": "", "parameters": {"type": "object", "properties": {}}}
    ]
    assert normalize_tools(None) is None
    for bad, reason in (
        ({"name": "x"}, "list of tool definitions"),
        ([{"description": "no name"}], r"tools\[0\]: a tool needs"),
        ([{"name": "x", "parameters": "oops"}], "JSON Schema"),
        ([{"functionDeclarations": {"name": "x"}}], "must be a list"),
        ([42], "not a tool definition"),
    ):
        with pytest.raises(ToolDefinitionError, match=reason):
            normalize_tools(bad)  # type: ignore[arg-type]


# ---- the pipeline and the CLI ----------------------------------------------------------------

ANTHROPIC = ModelSpec("anthropic", "anthropic-messages", "claude-sonnet-4-5")
CHAT = ModelSpec("openai", "openai-completions", "gpt-4o")
READ_ANTHROPIC = {
    "name": "read_ticket",
    "description": "  Read a ticket  ",
    "input_schema": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
}


def _session_with_tool_call(tmp_path: Path) -> Session:
    session = Session.create(tmp_path / "s.jsonl", cwd="/w")
    session.append_messages(
        [
            {"role": "user", "content": "read a", "timestamp": NOW},
            {
                "role": "assistant",
                "content": [{"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-sonnet-4-5",
                "usage": {
                    "input": 1,
                    "output": 1,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "totalTokens": 2,
                },
                "stopReason": "toolUse",
                "timestamp": NOW,
            },
            {
                "role": "toolResult",
                "toolCallId": "c1",
                "toolName": "read",
                "content": [{"type": "text", "text": "a"}],
                "isError": False,
                "timestamp": NOW,
            },
        ]
    )
    return session


def _pipeline(tmp_path: Path, model: ModelSpec, **kwargs: Any) -> ContextPipeline:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    return ContextPipeline(
        model=model,
        workspace_dir=workspace,
        system_prompt=SystemPromptParams(workspace_dir=str(workspace)),
        now_ms=lambda: NOW,
        **kwargs,
    )


def test_pipeline_tools_reach_the_payload_and_the_system_prompt(tmp_path: Path) -> None:
    session = _session_with_tool_call(tmp_path)
    pipeline = _pipeline(tmp_path, ANTHROPIC, tools=[READ_ANTHROPIC])
    prepared = pipeline.prepare(session, PromptRequest(text="go on"))
    assert prepared.tools is not None and prepared.tools[0]["parameters"]["required"] == ["path"]
    body = prepared.request_payload()
    assert body["tools"] == [
        {
            "name": "read_ticket",
            "description": "  Read a ticket  ",
            "input_schema": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        }
    ]
    # The Tooling section lists the tool with its trimmed description (buildToolSummaryMap).
    assert "- read_ticket: Read a ticket" in prepared.system_prompt
    # A request's own tools replace the pipeline's; request_payload(tools=) replaces both.
    chat_shape = {"type": "function", "function": {"name": "ls", "description": "List"}}
    own = pipeline.prepare(session, PromptRequest(text="go on", tools=[chat_shape]))
    assert [t["name"] for t in own.request_payload()["tools"]] == ["ls"]
    assert [t["name"] for t in own.request_payload(tools=[READ_ANTHROPIC])["tools"]] == [
        "read_ticket"
    ]


def test_tool_history_without_definitions_is_sent_as_pi_ai_sends_it(tmp_path: Path) -> None:
    session = _session_with_tool_call(tmp_path)
    # openai-completions: `tools: []` (pi-ai's hasToolHistory); anthropic: no tools field.
    chat = _pipeline(tmp_path, CHAT).prepare(session, PromptRequest(text="go on"))
    assert chat.tools is None
    assert (
        chat.request_payload(model={**_model(CHAT), "baseUrl": "https://api.openai.com/v1"})[
            "tools"
        ]
        == []
    )
    anthropic = _pipeline(tmp_path, ANTHROPIC).prepare(session, PromptRequest(text="go on"))
    assert "tools" not in anthropic.request_payload()


def _model(spec: ModelSpec) -> dict[str, Any]:
    return {
        "id": spec.id,
        "name": spec.id,
        "api": spec.api,
        "provider": spec.provider,
        "baseUrl": "",
        "reasoning": False,
        "input": ["text"],
        "maxTokens": 32000,
    }


def test_cli_assemble_takes_a_file_of_definitions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from clawctx.cli import main

    defs = tmp_path / "tools.json"
    defs.write_text(json.dumps({"tools": [READ_ANTHROPIC]}))
    assert main(["assemble", "--payload", "--tools", str(defs)]) == 0
    body = json.loads(capsys.readouterr().out)
    assert [t["name"] for t in body["tools"]] == ["read_ticket"]
    assert main(["assemble", "--json", "--tools", str(defs)]) == 0
    assert "- read_ticket: Read a ticket" in json.loads(capsys.readouterr().out)["system_prompt"]
    # Names still work (no definitions: none in the payload).
    assert main(["assemble", "--payload", "--tools", "read,exec"]) == 0
    assert "tools" not in json.loads(capsys.readouterr().out)
    bad = tmp_path / "bad.json"
    bad.write_text('[{"description": "no name"}]')
    assert main(["assemble", "--payload", "--tools", str(bad)]) == 1
    assert "cannot read the tool definitions" in capsys.readouterr().err
