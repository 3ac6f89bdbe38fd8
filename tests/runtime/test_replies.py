"""Silent replies and heartbeat prompt helpers (OpenClaw 2026.3.13 `src/auto-reply/tokens.ts`,
`src/auto-reply/heartbeat.ts`, `src/infra/heartbeat-events-filter.ts`)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clawctx.history.heartbeat import DEFAULT_HEARTBEAT_PROMPT
from clawctx.runtime.replies import (
    CRON_EVENT_EMPTY_PROMPT,
    CRON_EVENT_EMPTY_PROMPT_INTERNAL,
    EXEC_EVENT_PROMPT,
    SILENT_REPLY_TOKEN,
    build_cron_event_prompt,
    build_exec_event_prompt,
    heartbeat_prompt_from_config,
    is_heartbeat_content_effectively_empty,
    is_silent_reply_prefix_text,
    is_silent_reply_text,
    resolve_heartbeat_prompt,
    strip_silent_token,
)

# --- isHeartbeatContentEffectivelyEmpty (upstream src/auto-reply/heartbeat.test.ts) --------


@pytest.mark.parametrize("content", [None])
def test_8_3_08_missing_file_is_not_empty(content: str | None) -> None:
    assert is_heartbeat_content_effectively_empty(content) is False


@pytest.mark.parametrize("content", ["", "   ", "\n\n\n", "  \n  \n  ", "\t\t"])
def test_8_3_08_blank_content_is_empty(content: str) -> None:
    assert is_heartbeat_content_effectively_empty(content) is True


@pytest.mark.parametrize("content", ["# HEARTBEAT.md", "# HEARTBEAT.md\n", "# HEARTBEAT.md\n\n"])
def test_8_3_08_title_only_is_empty(content: str) -> None:
    assert is_heartbeat_content_effectively_empty(content) is True


@pytest.mark.parametrize("content", ["# Header\n# Another comment", "## Subheader\n### Another"])
def test_8_3_08_headers_only_are_empty(content: str) -> None:
    assert is_heartbeat_content_effectively_empty(content) is True


def test_8_3_08_template_sentence_is_content() -> None:
    template = (
        "# HEARTBEAT.md\n\nKeep this file empty unless you want a tiny checklist. Keep it small.\n"
    )
    assert is_heartbeat_content_effectively_empty(template) is False


@pytest.mark.parametrize(
    "content", ["- Check email", "# HEARTBEAT.md\n- Task 1", "Remind me to call mom"]
)
def test_8_3_08_tasks_are_content(content: str) -> None:
    assert is_heartbeat_content_effectively_empty(content) is False


def test_8_3_08_header_with_task_line_is_content() -> None:
    assert (
        is_heartbeat_content_effectively_empty(
            "# HEARTBEAT.md\n\n## Tasks\n\nCheck the server logs"
        )
        is False
    )


def test_8_3_08_headers_only_document_is_empty() -> None:
    assert (
        is_heartbeat_content_effectively_empty("# HEARTBEAT.md\n\n## Tasks\n\n## Notes\n") is True
    )


@pytest.mark.parametrize("line", ["#TODO", "#hashtag", "-item", "- [ ] call bob", "+ x"])
def test_heartbeat_empty_rejects_non_structural_lines(line: str) -> None:
    assert is_heartbeat_content_effectively_empty(f"# Title\n{line}") is False


@pytest.mark.parametrize(
    "line", ["-", "- ", "*", "+", "- [ ]", "- [x]", "* [X]", "- []", "+ [ ]  ", "#", "###", "# "]
)
def test_heartbeat_empty_accepts_empty_list_items_and_bare_headers(line: str) -> None:
    assert is_heartbeat_content_effectively_empty(f"# Title\n{line}\n") is True


def test_heartbeat_empty_trims_js_whitespace_only() -> None:
    # NBSP and the BOM are JS whitespace; U+001C is not (Python's str.strip would remove it).
    assert is_heartbeat_content_effectively_empty("\u00a0\ufeff\n# h\u00a0") is True
    assert is_heartbeat_content_effectively_empty("\x1c") is False


@given(st.lists(st.sampled_from(["", "# a", "## b c", "- ", "* [x]", "  ", "\t#"]), max_size=8))
def test_heartbeat_empty_property_structural_lines(lines: list[str]) -> None:
    assert is_heartbeat_content_effectively_empty("\n".join(lines)) is True


# --- heartbeat prompt (heartbeat.ts: HEARTBEAT_PROMPT, resolveHeartbeatPrompt) -------------


def test_resolve_heartbeat_prompt_defaults_and_trims() -> None:
    assert resolve_heartbeat_prompt(None) == DEFAULT_HEARTBEAT_PROMPT
    assert resolve_heartbeat_prompt("   \n") == DEFAULT_HEARTBEAT_PROMPT
    assert resolve_heartbeat_prompt("  Check the inbox.  ") == "Check the inbox."


def test_heartbeat_prompt_from_config() -> None:
    config = {"agents": {"defaults": {"heartbeat": {"prompt": " Custom "}}}}
    assert heartbeat_prompt_from_config(config) == "Custom"
    assert heartbeat_prompt_from_config({"agents": {"defaults": {}}}) == DEFAULT_HEARTBEAT_PROMPT
    assert heartbeat_prompt_from_config(None) == DEFAULT_HEARTBEAT_PROMPT
    bad = {"agents": {"defaults": {"heartbeat": {"prompt": 5}}}}
    assert heartbeat_prompt_from_config(bad) == DEFAULT_HEARTBEAT_PROMPT


# --- cron and exec prompts (heartbeat-events-filter.ts: buildCronEventPrompt) -------------


def test_cron_prompt_empty_events() -> None:
    expected = (
        "A scheduled cron event was triggered, but no event content was found. Reply HEARTBEAT_OK."
    )
    assert expected == CRON_EVENT_EMPTY_PROMPT
    assert build_cron_event_prompt([]) == expected
    assert build_cron_event_prompt(["  ", "\n"]) == expected


def test_cron_prompt_empty_events_not_delivering() -> None:
    assert build_cron_event_prompt([], deliver_to_user=False) == CRON_EVENT_EMPTY_PROMPT_INTERNAL
    assert CRON_EVENT_EMPTY_PROMPT_INTERNAL.startswith(
        "A scheduled cron event was triggered, but no event content was found. "
    )


def test_cron_prompt_with_events_exact() -> None:
    assert build_cron_event_prompt(["  Call mom", "Buy milk  "]) == (
        "A scheduled reminder has been triggered. The reminder content is:\n\n"
        "Call mom\nBuy milk\n\n"
        "Please relay this reminder to the user in a helpful and friendly way."
    )


def test_cron_prompt_with_events_not_delivering_exact() -> None:
    assert build_cron_event_prompt(["Call mom"], deliver_to_user=False) == (
        "A scheduled reminder has been triggered. The reminder content is:\n\n"
        "Call mom\n\n"
        "Handle this reminder internally. Do not relay it to the user unless explicitly requested."
    )


def test_exec_event_prompt_is_the_pinned_start() -> None:
    assert EXEC_EVENT_PROMPT == (
        "An async command you ran earlier has completed. "
        "The result is shown in the system messages above."
    )
    assert build_exec_event_prompt().startswith(EXEC_EVENT_PROMPT + " ")
    assert build_exec_event_prompt().endswith("If it failed, explain what went wrong.")
    assert build_exec_event_prompt(deliver_to_user=False) == (
        EXEC_EVENT_PROMPT
        + " Handle the result internally. Do not relay it to the user unless explicitly requested."
    )


# --- NO_REPLY (tokens.ts: isSilentReplyText, stripSilentToken) ---------------------------


def test_silent_token_value() -> None:
    assert SILENT_REPLY_TOKEN == "NO_REPLY"


@pytest.mark.parametrize("text", ["NO_REPLY", "  NO_REPLY", "NO_REPLY\n", "\n\tNO_REPLY  \n"])
def test_silent_reply_text_whole_token(text: str) -> None:
    assert is_silent_reply_text(text) is True


@pytest.mark.parametrize(
    "text",
    [None, "", "Done. NO_REPLY", "NO_REPLY.", "NO_REPLY thanks", "no_reply", "NO_REPLY\nmore"],
)
def test_silent_reply_text_rejects_substantive(text: str | None) -> None:
    assert is_silent_reply_text(text) is False


def test_silent_reply_text_later_case_insensitive_flag() -> None:
    assert is_silent_reply_text(" no_reply ", ignore_case=True) is True
    assert is_silent_reply_text("no_reply") is False


def test_silent_reply_text_custom_token_is_escaped() -> None:
    assert is_silent_reply_text("A.B", token="A.B") is True
    assert is_silent_reply_text("AxB", token="A.B") is False


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("NO_REPLY", ""),
        ("  NO_REPLY  ", ""),
        ("All done NO_REPLY", "All done"),
        ("All done\n\nNO_REPLY\n", "All done"),
        ("**NO_REPLY", ""),
        ("a **NO_REPLY  ", "a"),
        ("Answer is here", "Answer is here"),
        ("textNO_REPLY", "textNO_REPLY"),
        ("NO_REPLY then more", "NO_REPLY then more"),
    ],
)
def test_strip_silent_token(text: str, expected: str) -> None:
    assert strip_silent_token(text) == expected


@given(st.text(alphabet=" \n\tNO_REPLYab*", max_size=30))
def test_strip_silent_token_empties_every_silent_text(text: str) -> None:
    if is_silent_reply_text(text):
        assert strip_silent_token(text) == ""


@pytest.mark.parametrize("text", ["NO_", "no_re", "  NO_R", "NO_REPLY", "_"])
def test_silent_prefix_matches_token_starts(text: str) -> None:
    # "_" is not a prefix of NO_REPLY; checked separately below.
    assert is_silent_reply_prefix_text(text) is (text != "_")


@pytest.mark.parametrize("text", [None, "", "NO", "N", "NO_X", "NO REPLY", "NO_REPLY_", "NO_1"])
def test_silent_prefix_rejects(text: str | None) -> None:
    assert is_silent_reply_prefix_text(text) is False
