"""The framework hooks, run inside the real frameworks (the ``test`` extra installs them).

Each reported scenario is rebuilt as the issue describes it and shown fixed.
"""

from __future__ import annotations

import asyncio
import importlib.util
import re
from typing import Any

import pytest

from clawctx.history import Transcript, validate_for_provider
from clawctx.interop import from_langchain, from_openai_agents, from_pydantic_ai
from conftest import REPO

_MISSING = [
    m for m in ("langchain_core", "pydantic_ai", "agents") if importlib.util.find_spec(m) is None
]
pytestmark = pytest.mark.skipif(
    bool(_MISSING),
    reason=f"needs the test extra (pip install '.[test]'): {_MISSING} not installed",
)


def _valid(
    transcript: Transcript, providers: tuple[str, ...] = ("anthropic", "openai", "google")
) -> None:
    for provider in providers:
        assert validate_for_provider(transcript, provider=provider) == [], provider


def test_langchain_trim_never_orphans_a_tool_message() -> None:
    """langchain-ai/langchain#33245: ``trim_messages(messages, strategy="last",
    token_counter=len, max_tokens=5)`` returns a leading ``ToolMessage`` whose ``AIMessage`` was
    cut. The same call shape here keeps whole turns and starts on a human message."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.messages.utils import trim_messages as langchain_trim

    from clawctx.interop.integrations.langchain import trim_messages

    messages = [
        HumanMessage("What's the weather in Florida?"),
        AIMessage(
            [
                {"type": "text", "text": "Let's check the weather in Florida"},
                {
                    "type": "tool_use",
                    "id": "abc123",
                    "name": "get_weather",
                    "input": {"location": "Florida"},
                },
            ],
            tool_calls=[
                {
                    "name": "get_weather",
                    "args": {"location": "Florida"},
                    "id": "abc123",
                    "type": "tool_call",
                }
            ],
        ),
        ToolMessage("It's sunny.", name="get_weather", tool_call_id="abc123"),
        HumanMessage("I see, what about Texas?"),
        AIMessage("It's sunny there too."),
        HumanMessage("And Ohio?"),
        AIMessage("Rainy."),
    ]
    reported = langchain_trim(messages, strategy="last", token_counter=len, max_tokens=5)
    assert isinstance(reported[0], ToolMessage)  # the reported bug, still there upstream

    kept = trim_messages(messages, strategy="last", token_counter=len, max_tokens=5)
    assert kept == messages[3:]
    assert all(a is b for a, b in zip(kept, messages[3:], strict=True))  # the caller's objects
    # With room for the tool turn, call and result come together.
    assert trim_messages(messages, token_counter=len, max_tokens=6) == messages[3:]
    assert trim_messages(messages, token_counter=len, max_tokens=7) == messages
    _valid(from_langchain(kept))


def test_pydantic_ai_history_processor_repairs_a_poisoned_history() -> None:
    """pydantic/pydantic-ai#4728: a persisted ``ToolCallPart`` whose run timed out before its
    ``ToolReturnPart`` arrived, and a return whose id matches no call, poison every later run
    (Anthropic answers 400). Run through a real ``Agent``: the model gets a repaired history."""
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from clawctx.interop.integrations.pydantic_ai import history_processor

    seen: list[list[ModelMessage]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        return ModelResponse(parts=[TextPart("ok")])

    poisoned: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("look up the order")]),
        ModelResponse(parts=[ToolCallPart("lookup", {"id": 7}, tool_call_id="call_timed_out")]),
        ModelRequest(parts=[ToolReturnPart("lookup", "late result", tool_call_id="call_other_id")]),
        ModelResponse(parts=[TextPart("sorry, that took too long")]),
    ]

    def returns(messages: list[ModelMessage]) -> list[tuple[str, str]]:
        parts = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts]
        return [(p.tool_call_id, p.outcome) for p in parts if isinstance(p, ToolReturnPart)]

    repaired = history_processor()(poisoned)
    assert returns(repaired) == [("call_timed_out", "failed")]  # synthetic error result added
    _valid(from_pydantic_ai(repaired))

    agent = Agent(FunctionModel(model), capabilities=[ProcessHistory(history_processor())])
    result = asyncio.run(agent.run("try again", message_history=poisoned))
    assert result.output == "ok"
    # pydantic-ai may mark the dangling call itself first; either way the orphan is gone.
    assert [call_id for call_id, _ in returns(seen[0])] == ["call_timed_out"]
    _valid(from_pydantic_ai(seen[0]))


def test_pydantic_ai_history_processor_fits_a_budget() -> None:
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    from clawctx.interop.integrations.pydantic_ai import history_processor

    history = [
        ModelRequest(parts=[UserPromptPart("x" * 400)]),
        ModelResponse(parts=[ToolCallPart("f", {}, tool_call_id="c1")]),
        ModelRequest(parts=[ToolReturnPart("f", "y" * 400, tool_call_id="c1")]),
        ModelResponse(parts=[TextPart("done")]),
        ModelRequest(parts=[UserPromptPart("next")]),
    ]
    kept = history_processor(max_tokens=50)(history)
    assert kept == history[4:]


def test_agents_input_filter_drops_an_output_whose_call_was_cut() -> None:
    """openai/openai-agents-python#4322: with ``SessionSettings(limit=2)`` the stored history
    user / function_call / function_call_output / assistant message is cut to its last two
    items, and the model input holds a ``function_call_output`` without its call."""
    from agents.run import CallModelData, ModelInputData

    from clawctx.interop.integrations.openai_agents import input_filter

    stored = [
        {"role": "user", "content": "What is the weather?"},
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": "{}",
            "id": "fc_1",
            "status": "completed",
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
        {
            "type": "message",
            "role": "assistant",
            "id": "msg_1",
            "status": "completed",
            "content": [{"type": "output_text", "text": "It is sunny.", "annotations": []}],
        },
    ]
    limited = stored[-2:] + [{"role": "user", "content": "And tomorrow?"}]
    data = CallModelData(
        model_data=ModelInputData(input=limited, instructions="be brief"), agent=None, context=None
    )  # type: ignore[arg-type]
    filtered = input_filter()(data)
    assert filtered.instructions == "be brief"
    assert filtered.input == limited[1:]
    _valid(from_openai_agents(filtered.input), ("openai",))


def test_agents_input_filter_runs_inside_the_runner() -> None:
    from agents import Agent, ModelSettings, RunConfig, Runner
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import ResponseOutputMessage, ResponseOutputText

    from clawctx.interop.integrations.openai_agents import input_filter

    seen: list[Any] = []

    class CaptureModel(Model):
        async def get_response(
            self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
        ) -> ModelResponse:
            seen.append(input)
            text = ResponseOutputText(type="output_text", text="ok", annotations=[])
            message = ResponseOutputMessage(
                id="msg_2", type="message", role="assistant", status="completed", content=[text]
            )
            return ModelResponse(output=[message], usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    history = [
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
        {
            "type": "message",
            "role": "assistant",
            "id": "msg_1",
            "status": "completed",
            "content": [{"type": "output_text", "text": "It is sunny.", "annotations": []}],
        },
        {"role": "user", "content": "And tomorrow?"},
    ]
    agent = Agent(name="a", model=CaptureModel(), model_settings=ModelSettings())
    result = asyncio.run(
        Runner.run(agent, history, run_config=RunConfig(call_model_input_filter=input_filter()))
    )
    assert result.final_output == "ok"
    assert not any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in seen[0])
    _valid(from_openai_agents(seen[0]), ("openai",))


def _guide_blocks() -> list[str]:
    page = REPO / "docs" / "guide" / "wire-and-interop.md"
    section = page.read_text(encoding="utf-8").split("## Histories from other runtimes", 1)[1]
    section = section.split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)


def test_the_guide_section_has_one_example_per_sdk() -> None:
    assert len(_guide_blocks()) == 5


@pytest.mark.parametrize("index", range(5))
def test_the_guide_examples_run_as_written(index: int) -> None:
    exec(
        compile(_guide_blocks()[index], f"docs/guide/wire-and-interop.md block {index}", "exec"), {}
    )
