"""Tool definitions in pi-ai's shape (pi-mono 0.58.3 `packages/ai/src/types.ts`, ``Tool``:
``{name, description, parameters}`` with ``parameters`` a JSON Schema), from the shapes the
provider SDKs use, so that a runtime can pass the tools it already has.

The payload builders (:func:`~clawctx.wire.build_request_payload`) take pi tools and convert
them per API as pi-ai does (Anthropic ``input_schema``, OpenAI ``function``, Gemini
``functionDeclarations``, ...).

**History with tool calls, no definitions given.** pi-ai 0.58.3 sends what the caller gives:
only `packages/ai/src/providers/openai-completions.ts` adds ``tools: []`` when the messages
hold tool calls or results (``hasToolHistory``; proxies in front of Anthropic require the
field); every other API's body then has no tools. The APIs differ on such a body: Anthropic
answers 400 "Requests which include tool_use or tool_result blocks must define tools"
(anthropics/anthropic-sdk-python#494), Bedrock "The toolConfig field must be defined when using
toolUse and toolResult content blocks"; OpenAI and Gemini accept it. OpenClaw 2026.3.13 always
runs pi's agent loop with its tool list, so its requests carry definitions. clawctx builds
exactly pi-ai's body: pass the definitions (``ContextPipeline(tools=...)``) whenever the
history may hold tool calls.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from clawctx.errors import ToolDefinitionError

__all__ = ["ToolDefinitionError", "normalize_tools"]

#: An empty object schema (a tool without parameters).
_NO_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


def _schema(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return dict(_NO_PARAMETERS)
    if hasattr(value, "model_json_schema"):  # a pydantic model class
        value = value.model_json_schema()
    if not isinstance(value, Mapping):
        raise ToolDefinitionError(f"{where}: the parameters must be a JSON Schema object")
    return dict(value)


def _pi_tool(name: Any, description: Any, parameters: Any, where: str) -> dict[str, Any]:
    if not isinstance(name, str) or not name:
        raise ToolDefinitionError(f"{where}: a tool needs a non-empty string name")
    if description is not None and not isinstance(description, str):
        raise ToolDefinitionError(f"{where}: the description must be a string")
    return {
        "name": name,
        "description": description or "",
        "parameters": _schema(parameters, where),
    }


def _from_mapping(tool: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    # Gemini: one Tool holds many declarations (google-genai spells both cases).
    for key in ("function_declarations", "functionDeclarations"):
        if key in tool:
            declarations = tool[key]
            if not isinstance(declarations, list):
                raise ToolDefinitionError(f"{where}: {key} must be a list")
            out = []
            for i, declaration in enumerate(declarations):
                if not isinstance(declaration, Mapping):
                    raise ToolDefinitionError(f"{where}.{key}[{i}] is not a mapping")
                parameters = next(
                    (
                        declaration[k]
                        for k in ("parametersJsonSchema", "parameters_json_schema", "parameters")
                        if declaration.get(k) is not None
                    ),
                    None,
                )
                out.append(
                    _pi_tool(
                        declaration.get("name"),
                        declaration.get("description"),
                        parameters,
                        f"{where}.{key}[{i}]",
                    )
                )
            return out
    # OpenAI Chat Completions: {"type": "function", "function": {...}}.
    function = tool.get("function")
    if isinstance(function, Mapping):
        return [
            _pi_tool(
                function.get("name"),
                function.get("description"),
                function.get("parameters"),
                where,
            )
        ]
    # Anthropic: input_schema; pi and OpenAI Responses: parameters.
    parameters = tool.get("input_schema", tool.get("parameters"))
    return [_pi_tool(tool.get("name"), tool.get("description"), parameters, where)]


def _from_object(tool: Any, where: str) -> list[dict[str, Any]]:
    # A pydantic model instance of an SDK's tool type (anthropic ToolParam objects, google-genai
    # Tool, ...): its fields in the SDK's own shape.
    if hasattr(tool, "model_dump") and not hasattr(tool, "args_schema"):
        dumped = tool.model_dump(exclude_none=True)
        if isinstance(dumped, Mapping):
            return _from_mapping(dumped, where)
    # LangChain-style tool objects: name, description and a pydantic args_schema (or a dict).
    if isinstance(getattr(tool, "name", None), str):
        schema = getattr(tool, "args_schema", None)
        if schema is None and hasattr(tool, "get_input_schema"):
            schema = tool.get_input_schema()
        return [_pi_tool(tool.name, getattr(tool, "description", None), schema, where)]
    raise ToolDefinitionError(
        f"{where}: not a tool definition (a mapping in pi's, Anthropic's, OpenAI's or Gemini's "
        f"shape, or a tool object with a name), got {type(tool).__name__}"
    )


def normalize_tools(tools: Iterable[Any] | None) -> list[dict[str, Any]] | None:
    """Tool definitions as pi-ai ``Tool`` dicts (``name``, ``description``, ``parameters``),
    in order, from any mix of:

    * pi's ``{name, description, parameters}``;
    * Anthropic's ``{name, description, input_schema}``;
    * OpenAI Chat's ``{type: "function", function: {name, description, parameters}}``;
    * OpenAI Responses' ``{type: "function", name, description, parameters}``;
    * Gemini's ``{function_declarations: [...]}`` / ``{functionDeclarations: [...]}`` (each
      declaration one tool; ``parametersJsonSchema`` or ``parameters``);
    * SDK objects with ``model_dump()`` (one of the shapes above), and tool objects with a
      ``name``, a ``description`` and an ``args_schema`` (a pydantic model or a JSON Schema),
      as LangChain's tools have.

    A missing description becomes ``""`` and missing parameters an empty object schema.
    ``None`` stays ``None`` (no tools given). Raises :class:`ToolDefinitionError` naming the
    first definition it cannot read.
    """
    if tools is None:
        return None
    if isinstance(tools, (str, bytes, Mapping)):
        raise ToolDefinitionError("tools must be a list of tool definitions")
    out: list[dict[str, Any]] = []
    for index, tool in enumerate(tools):
        where = f"tools[{index}]"
        if isinstance(tool, Mapping):
            out.extend(_from_mapping(tool, where))
        else:
            out.extend(_from_object(tool, where))
    return out
