"""``fit_to_budget`` (issue 16 §3): newest messages that fit, pairs never split, the caller's
shape kept, unreadable shapes refused. The three reported framework scenarios are in
``tests/interop/test_interop_integrations.py``."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import clawctx
from clawctx.history import Transcript, count_message_tokens, validate_for_provider
from clawctx.interop import _openai_chat as openai_chat
from clawctx.interop import fit_to_budget, from_anthropic, read
from clawctx.wire import validate_request_body

PROVIDERS = ("anthropic", "openai", "google", "ollama")


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": 1}


def _call(*ids: str, text: str = "", stop: str | None = None) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks += [{"type": "toolCall", "id": i, "name": "read", "arguments": {"path": i}} for i in ids]
    message: dict[str, Any] = {"role": "assistant", "content": blocks, "timestamp": 1}
    if stop:
        message["stopReason"] = stop
    return message


def _result(call_id: str, text: str = "ok") -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "read",
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 1,
    }


@st.composite
def broken_histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Any order of user messages, assistant turns (some errored), results (some missing,
    displaced, duplicated or answering nothing) and system messages."""
    out: list[dict[str, Any]] = []
    if draw(st.booleans()):
        out.append({"role": "system", "content": draw(st.text(max_size=40))})
    calls: list[str] = []
    for n in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["user", "assistant", "result", "orphan", "user"]))
        text = draw(st.text(max_size=60))
        if kind == "user":
            out.append(_user(text))
        elif kind == "assistant":
            ids = [f"c{n}_{k}" for k in range(draw(st.integers(0, 3)))]
            calls += ids
            out.append(
                _call(*ids, text=text, stop=draw(st.sampled_from([None, None, "error", "aborted"])))
            )
        elif kind == "result" and calls:
            out.append(_result(draw(st.sampled_from(calls)), text))
        else:
            out.append(_result(f"nowhere{n}", text))
    return out


def _estimate(messages: Transcript) -> int:
    return int(
        sum(
            Transcript(
                [{**m, "role": "user"} if m["role"] == "system" else m for m in messages]
            ).token_counts()
        )
    )


def _violations(messages: Any, provider: str) -> list[str]:
    """What ``provider`` refuses in ``messages`` as they leave ``fit_to_budget``. Gemini's rule
    that a function-call turn directly follow a user turn or a function response is a matter of
    the Gemini writers (they merge a plain model turn into the call turn after it, checked
    below on the written contents), not of the kept messages: every other provider takes two
    model turns in a row."""
    found = [v.rule for v in validate_for_provider(messages, provider=provider)]
    if provider == "google":
        found = [rule for rule in found if rule != "function-call-turn-misplaced"]
    return found


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=broken_histories(), budget=st.integers(0, 120))
def test_any_history_comes_out_provider_valid_and_within_budget(
    history: list[dict[str, Any]], budget: int
) -> None:
    transcript = Transcript(history)
    prelude = _estimate(transcript[:1]) if history and history[0]["role"] == "system" else 0
    if prelude > budget:
        with pytest.raises(ValueError, match="prelude alone"):
            fit_to_budget(transcript, budget)
        return
    fit = fit_to_budget(transcript, budget)
    kept = fit.messages
    assert isinstance(kept, Transcript)
    assert fit.tokens <= budget
    assert fit.tokens == _estimate(kept)
    for provider in PROVIDERS:
        assert _violations(kept, provider) == [], provider
    if kept:
        contents = clawctx.interop.to_gemini(kept)[1]
        assert validate_request_body({"contents": contents}, "google-generative-ai") == []
    if kept and kept[0]["role"] != "system":
        assert kept[0]["role"] == "user"
    # The same history as OpenAI Chat messages: a valid result, in that shape, within budget.
    chat = openai_chat.write(history)
    chat_fit = fit_to_budget(chat, budget)
    back = read(chat_fit.messages) if chat_fit.messages else None
    assert back is None or back.format == "openai_chat"
    assert chat_fit.tokens <= budget
    for provider in PROVIDERS:
        assert back is None or _violations(back.transcript, provider) == []


def test_keeps_the_newest_turns_whole() -> None:
    history = [
        _user("first question " * 10),
        _call("a", "b"),
        _result("a", "x" * 200),
        _result("b", "y" * 200),
        _user("second"),
        _call("c"),
        _result("c", "short"),
        {"role": "assistant", "content": [{"type": "text", "text": "done"}], "timestamp": 1},
    ]
    counts = Transcript(history).token_counts()
    tail = int(sum(counts[4:]))
    fit = fit_to_budget(history, tail)
    assert fit.messages == history[4:]
    assert fit.dropped == history[:4]
    assert fit.tokens == tail and not fit.repaired
    # One token less: the call turn "c" cannot be split, and the kept part may not start with
    # an assistant turn, so the newest user turn is kept with the newest exchange that fits.
    assert fit_to_budget(history, tail - 1).messages == [history[4], history[7]]


def test_a_budget_between_a_call_and_its_results_drops_both() -> None:
    history = [
        _user("q"),
        _call("a"),
        _result("a", "x" * 400),
        _user("next"),
        _call("b"),
        _result("b"),
    ]
    last_turn = int(sum(Transcript(history[3:]).token_counts()))
    fit = fit_to_budget(history, last_turn + 50)  # room for part of the big result, not all
    assert fit.messages == history[3:]


def test_system_prelude_is_kept_and_counted() -> None:
    history = [{"role": "system", "content": "rules " * 20}, _user("a" * 400), _user("b")]
    fit = fit_to_budget(history, 40)
    assert fit.messages == [history[0], history[2]]
    assert fit_to_budget(history, 40, keep_first=0).messages == history[1:][1:]
    with pytest.raises(ValueError, match="prelude alone needs"):
        fit_to_budget(history, 5)


def test_keep_first_counts_elements_and_rounds_up_to_a_turn() -> None:
    history = [_user("setup"), _call("a"), _result("a", "r" * 400), _user("q" * 400), _user("last")]
    fit = fit_to_budget(history, 200, keep_first=2)
    assert fit.messages == [*history[:3], history[4]]


def test_strategy_first_keeps_the_oldest() -> None:
    history = [_result("orphan"), _user("one"), _call("a"), _result("a"), _user("two" * 100)]
    fit = fit_to_budget(history, 30, strategy="first")
    assert [m["role"] for m in fit.messages] == ["user", "assistant", "toolResult"]
    assert fit.repaired and fit.dropped_orphans == 1


def test_broken_pairing_is_repaired_before_fitting() -> None:
    history = [_user("q"), _call("a", "b"), _result("b"), _user("interjection"), _result("a")]
    fit = fit_to_budget(history, 10_000)
    assert fit.repaired
    assert [m.get("toolCallId") for m in fit.messages] == [None, None, "a", "b", None]


def test_exact_counters_and_a_callable() -> None:
    history = [_user("hello world " * 30), _user("short")]
    exact = count_message_tokens(Transcript(history), "o200k_base")
    fit = fit_to_budget(history, int(exact[1]), counter="o200k_base")
    assert fit.messages == history[1:] and fit.tokens == int(exact[1])
    calls: list[Any] = []

    def count(part: Any) -> int:
        calls.append(part)
        return 1

    assert fit_to_budget(history, 1, counter=count).messages == history[1:]
    assert all(isinstance(p, list) and len(p) == 1 for p in calls)
    with pytest.raises(ValueError, match="counter must be"):
        fit_to_budget(history, 10, counter="p50k_base")  # type: ignore[arg-type]


OPENAI_CHAT = [
    {"role": "system", "content": "sys"},
    {"role": "user", "content": "weather?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "w", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "sunny " * 50},
    {"role": "assistant", "content": "It is sunny."},
    {"role": "user", "content": "thanks"},
]


def test_openai_chat_in_openai_chat_out() -> None:
    fit = fit_to_budget(OPENAI_CHAT, 20)
    assert fit.messages == [OPENAI_CHAT[0], OPENAI_CHAT[5]]
    assert all(a is b for a, b in zip(fit.messages, [OPENAI_CHAT[0], OPENAI_CHAT[5]], strict=True))
    assert fit.dropped == OPENAI_CHAT[1:5]


def test_anthropic_request_in_request_out() -> None:
    request = {
        "model": "claude-sonnet-4-5",
        "system": "sys",
        "messages": [
            {"role": "user", "content": "weather?"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "w", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny " * 50},
                    {"type": "text", "text": "and now?"},
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "still sunny"}]},
        ],
    }
    fit = fit_to_budget(request, 10)
    # The last user message holds the tool result: it cannot be kept without its call, and
    # the kept part may not start with the assistant turn either: the newest user turn that
    # stands alone is kept, with the newest turn that fits after it.
    assert fit.messages == {
        "model": "claude-sonnet-4-5",
        "system": "sys",
        "messages": [request["messages"][0], request["messages"][3]],
    }
    assert fit_to_budget(request, 1).messages == {
        "model": "claude-sonnet-4-5",
        "system": "sys",
        "messages": [],
    }
    whole = fit_to_budget(request, 10_000)
    assert whole.messages == request
    assert (
        validate_for_provider(from_anthropic(whole.messages["messages"]), provider="anthropic")
        == []
    )


def test_repaired_foreign_history_comes_back_in_its_shape() -> None:
    chat = [OPENAI_CHAT[1], OPENAI_CHAT[2], {"role": "user", "content": "hello?"}]
    fit = fit_to_budget(chat, 10_000)
    assert fit.repaired and fit.added_results == 1
    assert [m["role"] for m in fit.messages] == ["user", "assistant", "tool", "user"]
    assert read(fit.messages).format == "openai_chat"


@pytest.mark.parametrize(
    ("history", "error"),
    [
        ([{"role": "user", "content": "a"}, {"parts": "x"}], ValueError),
        (42, TypeError),
        (
            [_user("a"), {"role": "tool", "tool_call_id": "x", "content": "c"}, _result("x")],
            ValueError,
        ),
    ],
)
def test_unreadable_or_mixed_shapes_are_refused(history: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match=r"element|history"):
        fit_to_budget(history, 100)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_tokens": -1},
        {"max_tokens": 1.5},
        {"max_tokens": 5, "strategy": "middle"},
        {"max_tokens": 5, "keep_first": -2},
        {"max_tokens": 5, "start_on": "ai"},
    ],
)
def test_bad_arguments_are_refused(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        fit_to_budget([_user("a")], **kwargs)


# ---- agent runs (issue 29: an empty result was silent) ----------------------------------------


def _agent_run(turns: int) -> list[dict[str, Any]]:
    """One task prompt, then ``turns`` tool exchanges of ~2,000 estimated tokens each."""
    out: list[dict[str, Any]] = [{"role": "user", "content": "Fix the failing build."}]
    for i in range(turns):
        out.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "toolCall", "id": f"call_{i}", "name": "exec", "arguments": {"i": i}}
                ],
                "stopReason": "toolUse",
            }
        )
        out.append(
            {
                "role": "toolResult",
                "toolCallId": f"call_{i}",
                "toolName": "exec",
                "content": [{"type": "text", "text": "x" * 8000}],
                "isError": False,
            }
        )
    return out


def test_an_agent_run_keeps_its_prompt_and_the_newest_exchanges() -> None:
    run = _agent_run(40)
    fit = clawctx.fit_to_budget(run, 20_000)
    assert fit.warning is None
    kept = fit.messages
    assert kept[0] == run[0]
    assert kept[-2:] == run[-2:]
    assert 4 < len(kept) < len(run)
    assert fit.tokens <= 20_000
    assert kept[1]["role"] == "assistant"
    assert clawctx.validate_for_provider(kept, provider="anthropic") == []


def test_nothing_kept_is_never_silent(caplog: pytest.LogCaptureFixture) -> None:
    run = [{"role": "user", "content": "y" * 100_000}, *_agent_run(2)[1:]]
    with caplog.at_level("WARNING", logger="clawctx"):
        fit = clawctx.fit_to_budget(run, 1_000)
    assert fit.messages == []
    assert fit.warning is not None and "max_tokens=1000" in fit.warning
    assert "fit_to_budget" in caplog.text
