"""Hooks: ``before_prompt_build``, legacy ``before_agent_start`` and ``context`` (OpenClaw 2026.3.13 `src/plugins/hooks.ts`,
``createHookRunner``; `src/agents/pi-embedded-runner/run/attempt.ts`)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

import clawctx
from clawctx.engine.hooks import (
    ContextHookEvent,
    HookContext,
    HookError,
    HookRunner,
    PromptBuildEvent,
    PromptBuildHookResult,
    apply_prompt_build_hook_result,
    resolve_prompt_build_hook_result,
    resolve_prompt_build_hook_result_sync,
)

EVENT = PromptBuildEvent(prompt="hi", messages=[{"role": "user", "content": "old"}])
CTX = HookContext(agent_id="main", session_key="agent:main:main", trigger="user")


def const(value: Any) -> Any:
    return lambda event, ctx: value


def aconst(value: Any) -> Any:
    async def handler(event: Any, ctx: Any) -> Any:
        await asyncio.sleep(0)
        return value

    return handler


def boom(event: Any, ctx: Any) -> Any:
    raise ValueError("boom")


# ---- registration and order (hooks.ts: getHooksForName, by priority) ----------------------------


def test_register_validates_and_has() -> None:
    runner = HookRunner()
    assert not runner.has("before_prompt_build")
    runner.register("before_prompt_build", const(None))
    assert runner.has("before_prompt_build")
    assert not runner.has("context")
    with pytest.raises(ValueError, match="unknown hook"):
        runner.register("after_everything", const(None))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="callable"):
        runner.register("context", "not a function")  # type: ignore[arg-type]


def test_descending_priority_stable_for_ties() -> None:
    calls: list[str] = []

    def record(name: str) -> Any:
        def handler(event: Any, ctx: Any) -> None:
            calls.append(name)

        return handler

    runner = HookRunner()
    runner.register("before_prompt_build", record("low"), priority=-5)
    runner.register("before_prompt_build", record("tie-1"))
    runner.register("before_prompt_build", record("high"), priority=10)
    runner.register("before_prompt_build", record("tie-2"))
    assert runner.run_before_prompt_build_sync(EVENT, CTX) is None
    assert calls == ["high", "tie-1", "tie-2", "low"]


def test_handlers_receive_event_and_ctx() -> None:
    seen: list[tuple[Any, Any]] = []
    runner = HookRunner()
    runner.register("before_prompt_build", lambda event, ctx: seen.append((event, ctx)))
    runner.run_before_prompt_build_sync(EVENT, CTX)
    assert seen == [(EVENT, CTX)]


# ---- merge rules (hooks.ts: mergeBeforePromptBuild) ----------------------------------------------


def three_handler_runner(*, system_prompt_merge: Any = "last") -> HookRunner:
    runner = HookRunner(system_prompt_merge=system_prompt_merge)
    runner.register(
        "before_prompt_build",
        const({"prependContext": "low", "systemPrompt": "SP-low", "appendSystemContext": "A3"}),
        priority=1,
        plugin_id="low",
    )
    runner.register(
        "before_prompt_build",
        const(
            PromptBuildHookResult(
                prepend_context="high",
                system_prompt="SP-high",
                prepend_system_context="P1",
                append_system_context="A1",
            )
        ),
        priority=100,
        plugin_id="high",
    )
    runner.register(
        "before_prompt_build",
        aconst(
            {"prepend_context": "mid", "prepend_system_context": "", "appendSystemContext": "A2"}
        ),
        priority=50,
        plugin_id="mid",
    )
    return runner


def test_merge_three_handlers_baseline() -> None:
    result = asyncio.run(three_handler_runner().run_before_prompt_build(EVENT, CTX))
    assert result == PromptBuildHookResult(
        system_prompt="SP-low",  # baseline: the last (lowest-priority) defined value wins
        prepend_context="high\n\nmid\n\nlow",
        prepend_system_context="P1",  # the empty string is skipped
        append_system_context="A1\n\nA2\n\nA3",
    )


def test_merge_three_handlers_sync_matches_async() -> None:
    runner = three_handler_runner()
    assert runner.run_before_prompt_build_sync(EVENT, CTX) == asyncio.run(
        runner.run_before_prompt_build(EVENT, CTX)
    )


def test_merge_system_prompt_first_wins_later_rule() -> None:
    result = three_handler_runner(system_prompt_merge="first").run_before_prompt_build_sync(
        EVENT, CTX
    )
    assert result is not None
    assert result.system_prompt == "SP-high"


def test_merge_none_results_are_skipped() -> None:
    runner = HookRunner()
    runner.register("before_prompt_build", const(None), priority=3)
    runner.register("before_prompt_build", const({"prependContext": "only"}), priority=2)
    runner.register("before_prompt_build", const({}), priority=1)
    assert runner.run_before_prompt_build_sync(EVENT, CTX) == PromptBuildHookResult(
        prepend_context="only"
    )


def test_merge_empty_string_does_not_erase_earlier_text() -> None:
    runner = HookRunner()
    runner.register("before_prompt_build", const({"prependContext": "a"}), priority=2)
    runner.register("before_prompt_build", const({"prependContext": ""}), priority=1)
    result = runner.run_before_prompt_build_sync(EVENT, CTX)
    assert result is not None
    assert result.prepend_context == "a"


def test_merge_later_system_prompt_empty_string_still_counts_as_defined() -> None:
    # baseline `next ?? acc`: an explicit "" is defined (and then ignored when applied: blank).
    runner = HookRunner()
    runner.register("before_prompt_build", const({"systemPrompt": "X"}), priority=2)
    runner.register("before_prompt_build", const({"systemPrompt": ""}), priority=1)
    result = runner.run_before_prompt_build_sync(EVENT, CTX)
    assert result is not None
    assert result.system_prompt == ""


def test_before_agent_start_overrides_first_defined_wins() -> None:
    runner = HookRunner()
    runner.register("before_agent_start", const({"systemPrompt": "S1"}), priority=9)
    runner.register(
        "before_agent_start",
        const({"modelOverride": "m-high", "prependContext": "x"}),
        priority=5,
    )
    runner.register(
        "before_agent_start",
        aconst({"modelOverride": "m-low", "providerOverride": "p-low", "systemPrompt": "S2"}),
        priority=1,
    )
    result = asyncio.run(runner.run_before_agent_start(EVENT, CTX))
    assert result == PromptBuildHookResult(
        system_prompt="S2",
        prepend_context="x",
        model_override="m-high",
        provider_override="p-low",
    )


def test_before_prompt_build_ignores_overrides() -> None:
    runner = HookRunner()
    runner.register("before_prompt_build", const({"modelOverride": "m", "prependContext": "p"}))
    assert runner.run_before_prompt_build_sync(EVENT, CTX) == PromptBuildHookResult(
        prepend_context="p"
    )


def test_result_from_value() -> None:
    assert PromptBuildHookResult.from_value(None) is None
    assert PromptBuildHookResult.from_value(
        {"systemPrompt": "a", "append_system_context": "b", "toolsAllow": ["x"]}
    ) == PromptBuildHookResult(system_prompt="a", append_system_context="b")
    with pytest.raises(TypeError):
        PromptBuildHookResult.from_value("text")
    with pytest.raises(TypeError, match="prependContext"):
        PromptBuildHookResult.from_value({"prependContext": 3})


# ---- error handling (hooks.ts: createHookRunner catchErrors) ---------------------------------------


def test_catch_errors_logs_and_skips(caplog: pytest.LogCaptureFixture) -> None:
    runner = HookRunner()
    runner.register("before_prompt_build", const({"prependContext": "a"}), priority=3)
    runner.register("before_prompt_build", boom, priority=2, plugin_id="bad-plugin")
    runner.register("before_prompt_build", const({"prependContext": "b"}), priority=1)
    with caplog.at_level(logging.ERROR, logger="clawctx.hooks"):
        result = runner.run_before_prompt_build_sync(EVENT, CTX)
    assert result == PromptBuildHookResult(prepend_context="a\n\nb")
    assert caplog.messages == [
        "[hooks] before_prompt_build handler from bad-plugin failed: ValueError: boom"
    ]


def test_catch_errors_with_async_handler_and_custom_logger(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def failing(event: Any, ctx: Any) -> Any:
        raise KeyError("k")

    logger = logging.getLogger("test.hooks.custom")
    runner = HookRunner(logger=logger)
    runner.register("before_agent_start", failing)
    with caplog.at_level(logging.ERROR, logger="test.hooks.custom"):
        assert asyncio.run(runner.run_before_agent_start(EVENT, CTX)) is None
    assert caplog.messages == [
        "[hooks] before_agent_start handler from anonymous failed: KeyError: 'k'"
    ]


def test_invalid_result_counts_as_failure(caplog: pytest.LogCaptureFixture) -> None:
    runner = HookRunner()
    runner.register("before_prompt_build", const(42), plugin_id="p")
    with caplog.at_level(logging.ERROR, logger="clawctx.hooks"):
        assert runner.run_before_prompt_build_sync(EVENT, CTX) is None
    assert caplog.messages[0].startswith("[hooks] before_prompt_build handler from p failed: ")


def test_catch_errors_false_raises_hook_error() -> None:
    runner = HookRunner(catch_errors=False)
    runner.register("before_prompt_build", const({"prependContext": "a"}), priority=1)
    runner.register("before_prompt_build", boom, plugin_id="bad")
    with pytest.raises(HookError) as info:
        runner.run_before_prompt_build_sync(EVENT, CTX)
    assert (
        str(info.value) == "[hooks] before_prompt_build handler from bad failed: ValueError: boom"
    )
    assert isinstance(info.value.__cause__, ValueError)
    assert isinstance(info.value, RuntimeError)
    with pytest.raises(HookError, match="handler from bad failed"):
        asyncio.run(runner.run_before_prompt_build(EVENT, CTX))


def test_error_without_message_prints_the_type_name() -> None:
    runner = HookRunner(catch_errors=False)
    runner.register("context", lambda event, ctx: (_ for _ in ()).throw(RuntimeError()))
    with pytest.raises(
        HookError, match=r"^\[hooks\] context handler from anonymous failed: RuntimeError$"
    ):
        runner.run_context_sync([], CTX)


# ---- sync / async modes -----------------------------------------------------------------------------


def test_sync_wrapper_runs_async_handlers_without_a_loop() -> None:
    runner = HookRunner()
    runner.register("before_prompt_build", aconst({"prependContext": "async"}), priority=1)
    runner.register("before_prompt_build", const({"prependContext": "sync"}))
    assert runner.run_before_prompt_build_sync(EVENT, CTX) == PromptBuildHookResult(
        prepend_context="async\n\nsync"
    )


def test_sync_wrapper_inside_a_running_loop() -> None:
    sync_only = HookRunner()
    sync_only.register("before_prompt_build", const({"prependContext": "ok"}))
    with_async = HookRunner()
    with_async.register("before_prompt_build", aconst({"prependContext": "x"}))

    async def main() -> None:
        # Sync handlers are fine even with a running loop...
        assert sync_only.run_before_prompt_build_sync(EVENT, CTX) == PromptBuildHookResult(
            prepend_context="ok"
        )
        # ...an async one cannot be run from inside it.
        with pytest.raises(RuntimeError, match=r"await HookRunner\.run_before_prompt_build"):
            with_async.run_before_prompt_build_sync(EVENT, CTX)
        # The async method works there.
        assert await with_async.run_before_prompt_build(EVENT, CTX) == PromptBuildHookResult(
            prepend_context="x"
        )

    asyncio.run(main())


def test_async_method_runs_sync_handlers() -> None:
    runner = HookRunner()
    runner.register("before_prompt_build", const({"systemPrompt": "S"}))
    assert asyncio.run(runner.run_before_prompt_build(EVENT, CTX)) == PromptBuildHookResult(
        system_prompt="S"
    )


# ---- context hook (per model call) ----------------------------------------------------------------


def test_context_hook_replaces_messages_in_priority_order() -> None:
    seen: list[ContextHookEvent] = []

    def drop_first(event: ContextHookEvent, ctx: HookContext) -> Any:
        seen.append(event)
        return list(event.messages[1:])

    async def add_marker(event: ContextHookEvent, ctx: HookContext) -> Any:
        seen.append(event)
        return {"messages": [*event.messages, {"role": "user", "content": "marker"}]}

    runner = HookRunner()
    runner.register("context", add_marker, priority=1)
    runner.register("context", drop_first, priority=5)
    runner.register("context", const(None), priority=3)
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": []},
    ]
    out = asyncio.run(runner.run_context(messages, CTX))
    assert out == [{"role": "assistant", "content": []}, {"role": "user", "content": "marker"}]
    assert seen[0].messages == tuple(messages)
    assert seen[1].messages == ({"role": "assistant", "content": []},)
    assert messages == [{"role": "user", "content": "a"}, {"role": "assistant", "content": []}]


def test_context_hook_unchanged_and_transcript_input() -> None:
    runner = HookRunner()
    transcript = clawctx.Transcript([{"role": "user", "content": "a"}])
    assert runner.run_context_sync(transcript, CTX) == [{"role": "user", "content": "a"}]
    runner.register("context", const(clawctx.Transcript([{"role": "user", "content": "b"}])))
    assert runner.run_context_sync(transcript, CTX) == [{"role": "user", "content": "b"}]


def test_context_hook_bad_results_are_isolated(caplog: pytest.LogCaptureFixture) -> None:
    runner = HookRunner()
    runner.register("context", const("text"), priority=4, plugin_id="str")
    runner.register("context", const({"other": 1}), priority=3, plugin_id="map")
    runner.register("context", const([1, 2]), priority=2, plugin_id="items")
    runner.register("context", boom, priority=1, plugin_id="boom")
    messages = [{"role": "user", "content": "a"}]
    with caplog.at_level(logging.ERROR, logger="clawctx.hooks"):
        assert runner.run_context_sync(messages, CTX) == messages
    assert [m.split(" failed:")[0] for m in caplog.messages] == [
        "[hooks] context handler from str",
        "[hooks] context handler from map",
        "[hooks] context handler from items",
        "[hooks] context handler from boom",
    ]


# ---- resolve (attempt.ts: resolvePromptBuildHookResult) ------------------------------------------------


def test_resolve_combines_prompt_build_and_legacy() -> None:
    runner = HookRunner()
    runner.register(
        "before_prompt_build",
        const({"prependContext": "pb", "appendSystemContext": "pb-append"}),
    )
    runner.register(
        "before_agent_start",
        const(
            {
                "systemPrompt": "legacy-sp",
                "prependContext": "legacy",
                "prependSystemContext": "legacy-pre",
                "modelOverride": "m",
            }
        ),
    )
    result = asyncio.run(resolve_prompt_build_hook_result(runner, EVENT, CTX))
    assert result == PromptBuildHookResult(
        system_prompt="legacy-sp",
        prepend_context="pb\n\nlegacy",
        prepend_system_context="legacy-pre",
        append_system_context="pb-append",
    )
    assert resolve_prompt_build_hook_result_sync(runner, EVENT, CTX) == result


def test_resolve_prompt_build_system_prompt_has_precedence() -> None:
    runner = HookRunner()
    runner.register("before_prompt_build", const({"systemPrompt": "pb"}))
    runner.register("before_agent_start", const({"systemPrompt": "legacy"}))
    result = asyncio.run(resolve_prompt_build_hook_result(runner, EVENT, CTX))
    assert result.system_prompt == "pb"


def test_resolve_uses_precomputed_legacy_without_running_the_hook() -> None:
    calls: list[str] = []
    runner = HookRunner()
    runner.register("before_agent_start", lambda event, ctx: calls.append("ran"))
    result = asyncio.run(
        resolve_prompt_build_hook_result(
            runner, EVENT, CTX, precomputed_legacy=PromptBuildHookResult(prepend_context="pre")
        )
    )
    assert result == PromptBuildHookResult(prepend_context="pre")
    assert calls == []


def test_resolve_without_runner_or_hooks() -> None:
    assert asyncio.run(resolve_prompt_build_hook_result(None, EVENT, CTX)) == (
        PromptBuildHookResult()
    )
    assert resolve_prompt_build_hook_result_sync(HookRunner(), EVENT, CTX) == (
        PromptBuildHookResult()
    )


def test_resolve_logs_runner_failures(caplog: pytest.LogCaptureFixture) -> None:
    runner = HookRunner(catch_errors=False)
    runner.register("before_prompt_build", boom, plugin_id="a")
    runner.register("before_agent_start", boom, plugin_id="b")
    with caplog.at_level(logging.WARNING, logger="clawctx.hooks"):
        result = asyncio.run(resolve_prompt_build_hook_result(runner, EVENT, CTX))
        sync_result = resolve_prompt_build_hook_result_sync(runner, EVENT, CTX)
    assert result == sync_result == PromptBuildHookResult()
    expected = [
        "before_prompt_build hook failed: HookError: "
        "[hooks] before_prompt_build handler from a failed: ValueError: boom",
        "before_agent_start hook (legacy prompt build path) failed: HookError: "
        "[hooks] before_agent_start handler from b failed: ValueError: boom",
    ]
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        *expected,
        *expected,
    ]


# ---- apply (attempt.ts: composeSystemPromptWithHookContext) ---------------------------------------


def test_apply_none_and_empty() -> None:
    assert apply_prompt_build_hook_result("p", "SYS", None) == ("p", "SYS")
    assert apply_prompt_build_hook_result("p", "SYS", PromptBuildHookResult()) == ("p", "SYS")


def test_apply_prepend_context() -> None:
    result = PromptBuildHookResult(prepend_context="ctx")
    assert apply_prompt_build_hook_result("p", "SYS", result) == ("ctx\n\np", "SYS")
    assert apply_prompt_build_hook_result(
        "p", "SYS", PromptBuildHookResult(prepend_context="")
    ) == (
        "p",
        "SYS",
    )


def test_apply_system_prompt_replacement_trimmed_and_blank_ignored() -> None:
    assert apply_prompt_build_hook_result(
        "p", "SYS", PromptBuildHookResult(system_prompt="  NEW  ")
    ) == ("p", "NEW")
    assert apply_prompt_build_hook_result(
        "p", "SYS", PromptBuildHookResult(system_prompt=" \n ")
    ) == ("p", "SYS")


def test_apply_system_context_wrap() -> None:
    result = PromptBuildHookResult(
        system_prompt="NEW", prepend_system_context=" pre \n", append_system_context="\napp "
    )
    assert apply_prompt_build_hook_result("p", "SYS", result) == ("p", "pre\n\nNEW\n\napp")
    only_append = PromptBuildHookResult(append_system_context="app")
    assert apply_prompt_build_hook_result("p", "  SYS  ", only_append) == ("p", "SYS\n\napp")
    empty_base = PromptBuildHookResult(prepend_system_context="pre")
    assert apply_prompt_build_hook_result("p", "", empty_base) == ("p", "pre")


def test_apply_blank_system_context_does_not_touch_the_prompt() -> None:
    # Neither prepend nor append non-blank: the base prompt is not even trimmed.
    result = PromptBuildHookResult(prepend_system_context="  ", append_system_context="")
    assert apply_prompt_build_hook_result("p", "  SYS  ", result) == ("p", "  SYS  ")
