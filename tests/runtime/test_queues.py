"""Queue modes, follow-up queue, collect prompt and inbound dedupe (OpenClaw 2026.3.13
`src/auto-reply/reply/queue/`, `src/utils/queue-helpers.ts`, `src/auto-reply/reply/inbound-dedupe.ts`)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clawctx.runtime.queues import (
    COLLECT_TITLE_ANNOUNCES,
    COLLECT_TITLE_MESSAGES,
    DedupeCache,
    FollowupQueue,
    InboundDedupe,
    MessageRoute,
    QueueDirective,
    QueuedMessage,
    QueueSettings,
    build_collect_prompt,
    build_overflow_summary,
    build_queue_summary_line,
    normalize_queue_drop_policy,
    normalize_queue_mode,
    parse_queue_directive,
    resolve_inbound_debounce_ms,
    resolve_queue_settings,
)


class FakeClock:
    """A millisecond clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


# --- collect prompt (queue-helpers.ts: buildCollectPrompt) ----------------------------------


def test_8_6_05_collect_prompt_exact() -> None:
    assert build_collect_prompt(["p1", "p2"]) == (
        "[Queued messages while agent was busy]\n\n---\nQueued #1\np1\n\n---\nQueued #2\np2"
    )


def test_8_6_05_collect_prompt_with_overflow_summary() -> None:
    summary = build_overflow_summary(1, ["x"])
    assert summary == "[Queue overflow] Dropped 1 message due to cap.\nSummary:\n- x"
    assert build_collect_prompt(["p1", "p2"], overflow_summary=summary) == (
        "[Queued messages while agent was busy]\n\n"
        "[Queue overflow] Dropped 1 message due to cap.\nSummary:\n- x\n\n"
        "---\nQueued #1\np1\n\n---\nQueued #2\np2"
    )


def test_collect_prompt_titles_and_block_trim() -> None:
    assert COLLECT_TITLE_ANNOUNCES == "[Queued announce messages while agent was busy]"
    assert COLLECT_TITLE_MESSAGES == "[Queued messages while agent was busy]"
    assert build_collect_prompt(["a \n\n"], title=COLLECT_TITLE_ANNOUNCES, overflow_summary="") == (
        "[Queued announce messages while agent was busy]\n\n---\nQueued #1\na"
    )
    assert build_collect_prompt([]) == COLLECT_TITLE_MESSAGES


# --- overflow summary (queue-helpers.ts: buildQueueSummaryPrompt) ---------------------------


def test_overflow_summary_forms() -> None:
    assert build_overflow_summary(0, ["x"]) == ""
    assert build_overflow_summary(2, []) == "[Queue overflow] Dropped 2 messages due to cap."
    assert build_overflow_summary(3, ["a", "b"], noun="announce") == (
        "[Queue overflow] Dropped 3 announces due to cap.\nSummary:\n- a\n- b"
    )


def test_summary_line_collapses_and_elides_at_160() -> None:
    assert build_queue_summary_line("  a \n\t b  ") == "a b"
    exact = "x" * 160
    assert build_queue_summary_line(exact) == exact
    long = "y" * 158 + " " + "z" * 10
    # Cut to 159 units ("y"*158 + " "), right-trimmed, then the ellipsis.
    assert build_queue_summary_line(long) == "y" * 158 + "…"


def test_overflow_summary_only_for_summarize_policy() -> None:
    # buildQueueSummaryPrompt: the `old` and `new` policies drop silently.
    assert build_overflow_summary(2, ["a"], drop_policy="old") == ""
    assert build_overflow_summary(2, ["a"], drop_policy="new") == ""
    assert build_overflow_summary(2, ["a"], drop_policy="summarize") == (
        "[Queue overflow] Dropped 2 messages due to cap.\nSummary:\n- a"
    )


def test_summary_line_never_splits_a_surrogate_pair() -> None:
    # Upstream slices UTF-16 units and can leave a lone high surrogate before the ellipsis
    # (conformance queue_summary_line-049-random), which cannot be encoded to UTF-8: writing
    # the prompt or the transcript would fail. The whole emoji is dropped instead.
    # 159 units are kept: "ab" and 78 emoji fill 158, the 79th would need 2.
    line = build_queue_summary_line("ab" + "🦞" * 100)
    assert line == "ab" + "🦞" * 78 + "…"
    assert line.encode("utf-8").decode("utf-8") == line


def test_summary_line_counts_utf16_units() -> None:
    # Each emoji is two UTF-16 units: 80 of them fill the 160 limit exactly.
    assert build_queue_summary_line("😀" * 80) == "😀" * 80
    # 81 emoji: cut to 159 units without splitting a pair -> 79 emoji.
    assert build_queue_summary_line("😀" * 81) == "😀" * 79 + "…"


@given(st.text(max_size=400))
def test_summary_line_property_bounded(text: str) -> None:
    line = build_queue_summary_line(text)
    assert len(line.encode("utf-16-le")) // 2 <= 160
    assert "  " not in line


# --- normalization (queue/normalize.ts: normalizeQueueMode, normalizeQueueDropPolicy) -------


@pytest.mark.parametrize(
    ("raw", "mode"),
    [
        ("queue", "steer"),
        ("Queued", "steer"),
        ("steer", "steer"),
        (" steering ", "steer"),
        ("interrupt", "interrupt"),
        ("interrupts", "interrupt"),
        ("ABORT", "interrupt"),
        ("followup", "followup"),
        ("follow-ups", "followup"),
        ("followups", "followup"),
        ("collect", "collect"),
        ("coalesce", "collect"),
        ("steer+backlog", "steer-backlog"),
        ("steer-backlog", "steer-backlog"),
        ("steer_backlog", "steer-backlog"),
        ("follow-up", None),
        ("", None),
        (None, None),
    ],
)
def test_normalize_queue_mode(raw: str | None, mode: str | None) -> None:
    assert normalize_queue_mode(raw) == mode


@pytest.mark.parametrize(
    ("raw", "policy"),
    [
        ("old", "old"),
        ("Oldest", "old"),
        ("new", "new"),
        ("newest ", "new"),
        ("summarize", "summarize"),
        ("summary", "summarize"),
        ("drop", None),
        (None, None),
    ],
)
def test_normalize_queue_drop_policy(raw: str | None, policy: str | None) -> None:
    assert normalize_queue_drop_policy(raw) == policy


# --- settings resolution (queue/settings.ts: resolveQueueSettings) --------------------------


def test_settings_defaults_baseline() -> None:
    assert resolve_queue_settings() == QueueSettings("collect", 1000, 20, "summarize")
    assert QueueSettings("steer") == QueueSettings("steer", 1000, 20, "summarize")


def test_settings_mode_precedence() -> None:
    config = {"messages": {"queue": {"mode": "followup", "byChannel": {"telegram": "steer"}}}}
    assert resolve_queue_settings(config=config).mode == "followup"
    assert resolve_queue_settings(channel=" Telegram ", config=config).mode == "steer"
    assert (
        resolve_queue_settings(channel="telegram", session_mode="interrupt", config=config).mode
        == "interrupt"
    )
    inline = QueueDirective(mode="collect")
    assert (
        resolve_queue_settings(
            channel="telegram", inline=inline, session_mode="interrupt", config=config
        ).mode
        == "collect"
    )
    # Unknown words are skipped, not fatal.
    assert resolve_queue_settings(session_mode="bogus", config=config).mode == "followup"


def test_settings_debounce_precedence() -> None:
    queue = {"debounceMs": 300, "debounceMsByChannel": {"slack": 700}}
    config = {"messages": {"queue": queue}}
    assert resolve_queue_settings(config=config).debounce_ms == 300
    assert resolve_queue_settings(config=config, channel_default_debounce_ms=50).debounce_ms == 50
    assert (
        resolve_queue_settings(
            channel="SLACK", config=config, channel_default_debounce_ms=50
        ).debounce_ms
        == 700
    )
    assert (
        resolve_queue_settings(channel="slack", session_debounce_ms=20, config=config).debounce_ms
        == 20
    )
    inline = QueueDirective(debounce_ms=5)
    assert (
        resolve_queue_settings(
            channel="slack", inline=inline, session_debounce_ms=20, config=config
        ).debounce_ms
        == 5
    )
    assert resolve_queue_settings(session_debounce_ms=-40).debounce_ms == 0


def test_settings_cap_and_drop_precedence() -> None:
    config = {"messages": {"queue": {"cap": 7.9, "drop": "Oldest"}}}
    resolved = resolve_queue_settings(config=config)
    assert (resolved.cap, resolved.drop) == (7, "old")
    resolved = resolve_queue_settings(session_cap=3, session_drop="new", config=config)
    assert (resolved.cap, resolved.drop) == (3, "new")
    inline = QueueDirective(cap=2, drop="summarize")
    resolved = resolve_queue_settings(inline=inline, session_cap=3, session_drop="new")
    assert (resolved.cap, resolved.drop) == (2, "summarize")
    assert resolve_queue_settings(session_cap=0).cap == 1


def test_settings_ignore_non_numbers() -> None:
    config = {"messages": {"queue": {"debounceMs": "fast", "cap": True}}}
    resolved = resolve_queue_settings(config=config)
    assert (resolved.debounce_ms, resolved.cap) == (1000, 20)


def test_settings_inline_reset_ignores_session_values() -> None:
    resolved = resolve_queue_settings(
        inline=QueueDirective(reset=True),
        session_mode="interrupt",
        session_debounce_ms=5,
        session_cap=2,
        session_drop="new",
    )
    assert resolved == QueueSettings("collect", 1000, 20, "summarize")


# --- /queue directive (queue/directive.ts: extractQueueDirective) ---------------------------


def test_directive_full() -> None:
    directive, cleaned = parse_queue_directive(
        "please /queue collect debounce:2s cap:5 drop:old  do it"
    )
    assert directive == QueueDirective("collect", 2000, 5, "old", False)
    assert cleaned == "please do it"


def test_directive_colon_prefix_and_case() -> None:
    # Upstream finds a mis-cased `/QUEUE` but slices it one character early (indexOf is
    # case-sensitive), so it sets no mode and leaves garbled text (conformance
    # extract_queue_directive-047-random and friends).
    assert parse_queue_directive("/QUEUE: Interrupt") == (
        QueueDirective(),
        "/QUEUE: Interrup E: Interrupt",
    )
    assert parse_queue_directive("/queue:followup hi") == (QueueDirective(mode="followup"), "hi")


@pytest.mark.parametrize(
    ("arg", "ms"),
    [
        ("debounce:500ms", 500),
        ("debounce=2s", 2000),
        ("debounce:1m", 60_000),
        ("debounce:1.5s", 1500),
        ("debounce:250", 250),
        ("debounce:1h", 3_600_000),
        ("debounce:0", None),  # upstream drops a falsy duration
        ("debounce:soon", None),
        ("debounce:", None),
    ],
)
def test_directive_debounce_durations(arg: str, ms: int | None) -> None:
    directive, cleaned = parse_queue_directive(f"/queue {arg} rest")
    assert directive is not None
    assert directive.debounce_ms == ms
    assert cleaned == "rest"


@pytest.mark.parametrize(
    ("arg", "cap"), [("cap:3", 3), ("cap=4.9", 4), ("cap:0", None), ("cap:x", None)]
)
def test_directive_cap(arg: str, cap: int | None) -> None:
    directive, _ = parse_queue_directive(f"/queue {arg}")
    assert directive is not None
    assert directive.cap == cap


def test_directive_stops_at_first_unknown_token() -> None:
    directive, cleaned = parse_queue_directive("/queue steer what is up collect")
    assert directive == QueueDirective(mode="steer")
    assert cleaned == "what is up collect"


def test_directive_reset_ends_arguments() -> None:
    directive, cleaned = parse_queue_directive("hey /queue reset collect")
    assert directive == QueueDirective(reset=True)
    assert cleaned == "hey collect"


def test_directive_bare_and_absent() -> None:
    assert parse_queue_directive("/queue") == (QueueDirective(), "")
    assert parse_queue_directive("  no directive  here ") == (None, "no directive  here")
    assert parse_queue_directive("a/queue collect")[0] is None
    assert parse_queue_directive("/queued collect")[0] is None


def test_directive_later_mode_alias() -> None:
    directive, cleaned = parse_queue_directive("x\n/queue steer+backlog\ny")
    assert directive == QueueDirective(mode="steer-backlog")
    assert cleaned == "x y"


def test_directive_reports_raw_tokens_and_options() -> None:
    directive, cleaned = parse_queue_directive(
        "hi /queue STEER debounce:3s cap=2.5 drop:bogus Collect rest"
    )
    assert directive is not None
    assert cleaned == "hi rest"
    assert (directive.mode, directive.raw_mode) == ("collect", "Collect")
    assert (directive.debounce_ms, directive.raw_debounce) == (3000, "3s")
    assert (directive.cap, directive.raw_cap) == (2, "2.5")
    assert (directive.drop, directive.raw_drop) == (None, "bogus")
    assert directive.has_options
    # The raw spelling is not part of equality: the settings are the same.
    assert directive == QueueDirective("collect", 3000, 2, None, False)


def test_directive_without_options_reports_none() -> None:
    directive, _ = parse_queue_directive("/queue queued")
    assert directive is not None
    assert directive.raw_mode == "queued"
    assert (directive.raw_debounce, directive.raw_cap, directive.raw_drop) == (None, None, None)
    assert not directive.has_options
    # A blank option value is still an option (upstream: hasOptions, rawCap "").
    blank, _ = parse_queue_directive("/queue cap: debounce=")
    assert blank is not None
    assert (blank.cap, blank.raw_cap, blank.debounce_ms, blank.raw_debounce) == (None, "", None, "")
    assert blank.has_options


@pytest.mark.parametrize(
    ("arg", "ms"),
    [
        ("debounce:1h30m", 5_400_000),
        ("debounce:2m500ms", 120_500),
        ("debounce:30m1h", 5_400_000),
        ("debounce:1m1m", 120_000),
        ("debounce:1D2H", 93_600_000),
        ("debounce:2.5ms", 3),
        ("debounce:0.4", None),  # rounds to 0, which upstream discards
        ("debounce:1h30", None),  # a composite token without a unit
        ("debounce:1h-30m", None),
        ("debounce:1e3", None),
        ("debounce:" + "9" * 400, None),  # overflows to Infinity
    ],
)
def test_directive_composite_durations(arg: str, ms: int | None) -> None:
    directive, _ = parse_queue_directive(f"/queue {arg}")
    assert directive is not None
    assert directive.debounce_ms == ms


@pytest.mark.parametrize(
    ("arg", "cap"),
    [("cap=0x10", 16), ("cap:0b11", 3), ("cap:1e1", 10), ("cap:1_0", None), ("cap:inf", None)],
)
def test_directive_cap_reads_numbers_as_javascript(arg: str, cap: int | None) -> None:
    directive, _ = parse_queue_directive(f"/queue {arg}")
    assert directive is not None
    assert directive.cap == cap


@pytest.mark.parametrize(
    ("body", "cleaned"),
    [
        ("/Queue collect", "/Queue collec e collect"),
        ("prefix /QUEUE debounce:1h30m steering", "prefi UE debounce:1h30m steering"),
        ("/Queue", "/Queu e"),
    ],
)
def test_directive_miscased_word_is_sliced_as_upstream(body: str, cleaned: str) -> None:
    directive, text = parse_queue_directive(body)
    assert directive == QueueDirective()
    assert directive is not None and not directive.has_options
    assert text == cleaned


def test_directive_miscased_slice_never_leaves_half_a_surrogate_pair() -> None:
    # Upstream cuts one UTF-16 unit before the match (or off the end), which would leave a lone
    # surrogate of the emoji; the whole emoji goes instead, so the text stays encodable.
    _, before = parse_queue_directive("🦞 /Queue x")
    assert before == "ue x"
    _, at_end = parse_queue_directive("/Queue x🦞")
    assert at_end == "/Queue x e x🦞"
    at_end.encode("utf-8")


@given(st.text(alphabet=" \n\tab/queucoltdrp:=0123456789sm", max_size=40))
def test_directive_cleaned_text_is_collapsed(text: str) -> None:
    directive, cleaned = parse_queue_directive(text)
    if directive is not None:
        assert "  " not in cleaned
        assert cleaned == cleaned.strip()


# --- routing (queue-helpers.ts: hasCrossChannelItems) ---------------------------------------


def test_routing_key() -> None:
    message = QueuedMessage("p", channel="telegram", to="42", account_id="a", thread_id=7)
    assert message.routing_key == "telegram|42|a|7"
    assert QueuedMessage("p", channel="slack", to="C1").routing_key == "slack|C1||"
    assert QueuedMessage("p", channel="slack").routing_key is None
    assert MessageRoute().is_empty
    assert not MessageRoute(thread_id=0).is_empty


def test_can_collect_rules() -> None:
    queue = FollowupQueue(QueueSettings("collect"))
    a1 = QueuedMessage("1", channel="telegram", to="42")
    a2 = QueuedMessage("2", channel="telegram", to="42")
    b = QueuedMessage("3", channel="telegram", to="43")
    bare = QueuedMessage("4")
    partial = QueuedMessage("5", channel="telegram")
    assert queue.can_collect([a1, a2])
    assert queue.can_collect([a1, bare, a2])  # items without any route fit any batch
    assert not queue.can_collect([a1, b])
    assert not queue.can_collect([bare, partial])
    assert queue.can_collect([])


# --- overflow (queue-helpers.ts: applyQueueDropPolicy, buildQueueSummaryLine) --------------


def _queue(cap: int, drop: str, **kwargs: object) -> FollowupQueue:
    return FollowupQueue(QueueSettings("followup", 0, cap, drop), **kwargs)  # type: ignore[arg-type]


def test_overflow_new_rejects_incoming() -> None:
    queue = _queue(2, "new")
    assert queue.enqueue(QueuedMessage("a")) and queue.enqueue(QueuedMessage("b"))
    assert queue.offer(QueuedMessage("c")) == "dropped-new"
    assert [m.prompt for m in queue] == ["a", "b"]
    assert queue.take_overflow_summary() is None


def test_overflow_old_drops_oldest_without_summary() -> None:
    queue = _queue(2, "old")
    for prompt in "abc":
        assert queue.enqueue(QueuedMessage(prompt))
    assert [m.prompt for m in queue] == ["b", "c"]
    assert queue.take_overflow_summary() is None


def test_overflow_summarize_lines() -> None:
    queue = _queue(2, "summarize")
    queue.enqueue(QueuedMessage("  first\n message "))
    queue.enqueue(QueuedMessage("second", summary_line="  custom line "))
    queue.enqueue(QueuedMessage("third"))
    queue.enqueue(QueuedMessage("fourth"))
    assert [m.prompt for m in queue] == ["third", "fourth"]
    assert queue.has_overflow
    assert queue.take_overflow_summary() == (
        "[Queue overflow] Dropped 2 messages due to cap.\nSummary:\n- first message\n- custom line"
    )
    assert queue.take_overflow_summary() is None
    assert not queue.has_overflow


def test_overflow_summary_keeps_at_most_cap_lines() -> None:
    queue = _queue(2, "summarize", noun="announce")
    for prompt in "abcdef":
        queue.enqueue(QueuedMessage(prompt))
    assert queue.take_overflow_summary() == (
        "[Queue overflow] Dropped 4 announces due to cap.\nSummary:\n- c\n- d"
    )


def test_overflow_summary_line_elided() -> None:
    queue = _queue(1, "summarize")
    queue.enqueue(QueuedMessage("w" * 200))
    queue.enqueue(QueuedMessage("next"))
    assert queue.take_overflow_summary() == (
        "[Queue overflow] Dropped 1 message due to cap.\nSummary:\n- " + "w" * 159 + "…"
    )


def test_clear_drops_items_and_summary() -> None:
    queue = _queue(1, "summarize")
    queue.enqueue(QueuedMessage("a"))
    queue.enqueue(QueuedMessage("b"))
    queue.clear()
    assert len(queue) == 0
    assert queue.take_overflow_summary() is None


def test_pop_and_drain_order() -> None:
    queue = _queue(5, "old")
    for prompt in "abc":
        queue.enqueue(QueuedMessage(prompt))
    assert queue.pop_next() == QueuedMessage("a")
    assert [m.prompt for m in queue.drain_batch()] == ["b", "c"]
    assert queue.pop_next() is None
    assert queue.last_item == QueuedMessage("c")


# --- dedupe (queue/enqueue.ts: enqueueFollowupRun) ------------------------------------------


def test_dedupe_message_id_same_route_rejected() -> None:
    queue = _queue(5, "old")
    first = QueuedMessage("hi", message_id=" m1 ", channel="telegram", to="42")
    assert queue.offer(first) == "queued"
    again = QueuedMessage("hi again", message_id="m1", channel="telegram", to="42")
    assert queue.offer(again) == "duplicate"
    elsewhere = QueuedMessage("hi", message_id="m1", channel="telegram", to="43")
    assert queue.offer(elsewhere) == "queued"


def test_dedupe_prompt_mode() -> None:
    by_id = _queue(5, "old")
    assert by_id.enqueue(QueuedMessage("same")) and by_id.enqueue(QueuedMessage("same"))
    by_prompt = _queue(5, "old", dedupe="prompt")
    assert by_prompt.enqueue(QueuedMessage("same", channel="c", to="t"))
    assert not by_prompt.enqueue(QueuedMessage("same", channel="c", to="t"))
    assert by_prompt.enqueue(QueuedMessage("same", channel="c", to="u"))


def test_dedupe_none_mode_accepts_everything() -> None:
    queue = _queue(5, "old", dedupe="none")
    assert queue.enqueue(QueuedMessage("x", message_id="m"))
    assert queue.enqueue(QueuedMessage("x", message_id="m"))


def test_recent_message_ids_reject_redelivery_for_five_minutes() -> None:
    clock = FakeClock()
    queue = _queue(5, "old", now_ms=clock, queue_key="agent:main:main")
    message = QueuedMessage("hi", message_id="m1", channel="telegram", to="42")
    assert queue.enqueue(message)
    queue.drain_batch()
    clock.now += 5 * 60 * 1000 - 1
    assert queue.offer(message) == "duplicate"  # no longer queued, but recently seen
    clock.now += 1
    assert queue.offer(message) == "queued"


def test_recent_message_ids_shared_cache_is_keyed_by_queue() -> None:
    clock = FakeClock()
    shared = DedupeCache(ttl_ms=300_000, max_keys=10_000, now_ms=clock)
    q1 = _queue(5, "old", now_ms=clock, queue_key="s1", recent_message_ids=shared)
    q2 = _queue(5, "old", now_ms=clock, queue_key="s2", recent_message_ids=shared)
    message = QueuedMessage("hi", message_id="m1")
    assert q1.enqueue(message)
    q1.drain_batch()
    assert not q1.enqueue(message)
    assert q2.enqueue(message)
    assert len(shared) == 2
    key = json.dumps(["queue", "s1", "", "", "", "", "m1"], separators=(",", ":"))
    assert shared.peek(key)


def test_dedupe_cache_bounds_and_sliding_ttl() -> None:
    clock = FakeClock()
    cache = DedupeCache(ttl_ms=100, max_keys=2, now_ms=clock)
    assert not cache.check("a")
    assert not cache.check("b")
    assert not cache.check("c")  # evicts "a", the least recently seen
    assert not cache.peek("a")
    assert cache.check("b")
    clock.now += 99
    assert cache.check("b")  # a hit refreshes the entry
    clock.now += 99
    assert cache.check("b")
    clock.now += 100
    assert not cache.check("b")
    assert not cache.check("") and len(cache) <= 2


def test_default_recent_id_limits() -> None:
    queue = FollowupQueue(QueueSettings("collect"))
    assert (queue._recent.ttl_ms, queue._recent.max_keys) == (300_000, 10_000)


# --- inbound dedupe (reply/inbound-dedupe.ts: buildInboundDedupeKey) ------------------------


def test_inbound_key_shape_and_precedence() -> None:
    key = InboundDedupe.build_key(
        originating_channel=" Telegram ",
        provider="whatsapp",
        message_sid=" 99 ",
        originating_to="chat-1",
        to="bot",
        session_key="agent:main:main",
        account_id=" acc ",
        thread_id=5,
    )
    assert key == "telegram|acc|agent:main:main|chat-1|5|99"
    minimal = InboundDedupe.build_key(provider="Slack", message_sid="m", from_="U1")
    assert minimal == "slack|U1|m"
    # The peer falls back to the session key.
    assert InboundDedupe.build_key(surface="web", message_sid="m", session_key="s") == "web|s|s|m"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"message_sid": "m", "to": "x"},
        {"provider": "p", "to": "x"},
        {"provider": "p", "message_sid": "  ", "to": "x"},
        {"provider": "p", "message_sid": "m"},
        {"originating_channel": "", "provider": "p", "message_sid": "m", "to": "x"},
    ],
)
def test_inbound_key_missing_parts(kwargs: dict[str, str]) -> None:
    assert InboundDedupe.build_key(**kwargs) is None


def test_inbound_key_from_context() -> None:
    ctx = {"Provider": "discord", "MessageSid": "1", "To": "chan", "MessageThreadId": 3}
    assert InboundDedupe.key_from_context(ctx) == "discord|chan|3|1"


def test_inbound_dedupe_ttl_20_minutes() -> None:
    clock = FakeClock()
    dedupe = InboundDedupe(now_ms=clock)
    key = InboundDedupe.build_key(provider="telegram", message_sid="1", to="42")
    assert dedupe.check_and_remember(key) is True
    assert dedupe.check_and_remember(key) is False
    clock.now += 20 * 60 * 1000
    assert dedupe.check_and_remember(key) is True
    assert dedupe.check_and_remember(None) is True
    assert dedupe.check_and_remember(None) is True


def test_inbound_dedupe_max_keys() -> None:
    dedupe = InboundDedupe(max_keys=2)
    for key in ("a", "b", "c"):
        assert dedupe.check_and_remember(key)
    assert len(dedupe) == 2
    assert dedupe.check_and_remember("a") is True
    default = InboundDedupe()
    assert (default._cache.ttl_ms, default._cache.max_keys) == (1_200_000, 5000)


# --- inbound debounce (auto-reply/inbound-debounce.ts: resolveInboundDebounceMs) ------------


def test_inbound_debounce_precedence() -> None:
    config = {"messages": {"inbound": {"debounceMs": 1500, "byChannel": {"whatsapp": 2500}}}}
    assert resolve_inbound_debounce_ms() == 0
    assert resolve_inbound_debounce_ms(config=config) == 1500
    assert resolve_inbound_debounce_ms(channel="whatsapp", config=config) == 2500
    assert resolve_inbound_debounce_ms(channel="WhatsApp", config=config) == 1500
    assert resolve_inbound_debounce_ms(channel="whatsapp", override=10.9, config=config) == 10
    assert resolve_inbound_debounce_ms(override=-5, config=config) == 0
    bad = {"messages": {"inbound": {"debounceMs": "2s", "byChannel": {"x": None}}}}
    assert resolve_inbound_debounce_ms(channel="x", config=bad) == 0


def test_enqueue_time_stamped_even_when_full_but_not_for_duplicates() -> None:
    clock = FakeClock()
    queue = _queue(1, "new", now_ms=clock)
    assert queue.enqueue(QueuedMessage("a", message_id="1"))
    assert queue.last_enqueued_at_ms == clock.now
    clock.now += 10
    assert queue.offer(QueuedMessage("a", message_id="1")) == "duplicate"
    assert queue.last_enqueued_at_ms == clock.now - 10
    clock.now += 10
    # Upstream restarts the debounce window before the cap check rejects the item.
    assert queue.offer(QueuedMessage("b")) == "dropped-new"
    assert queue.last_enqueued_at_ms == clock.now


def test_directive_unusable_option_is_consumed() -> None:
    directive, cleaned = parse_queue_directive("/queue drop:bogus collect hi")
    assert directive == QueueDirective(mode="collect")
    assert cleaned == "hi"


def test_inbound_key_empty_peer_does_not_fall_through() -> None:
    # `??` semantics: an empty OriginatingTo is chosen over To and then found empty.
    assert InboundDedupe.build_key(provider="p", message_sid="m", originating_to="", to="x") is None
