"""Where the compatibility targets differ, the behaviour pinned here and which version it follows.

Targets: OpenClaw 2026.3.13 to 2026.5.4 and pi-mono 0.58 (the spec's baseline is the earlier end).
- Repair follows OpenClaw G3 (the newest src/agents generation): delivered trailing assistant
  replies stay on disk (G2 trimmed them). Tested in test_repair.py.
- A custom_message entry with null content: pi 0.58 (baseline) passes the content through as it
  is; later pi versions project it as an empty list. Pinned to the baseline below.
- Deferred persistence (pi writes nothing before the first assistant message) and its
  duplicate-lines quirk (pi-mono 0.58.3 `packages/coding-agent/src/core/session-manager.ts`, ``SessionManager._persist``: nothing is
  written before the first assistant message, then a reopened file's entries are appended again)
  are not copied: every append is written immediately.
"""

from __future__ import annotations

from pathlib import Path

import clawctx


def test_custom_message_null_content_passes_through_pi_058_baseline() -> None:
    entries = [
        {
            "type": "custom_message",
            "id": "01",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "customType": "legacy-null",
            "content": None,
            "display": True,
        }
    ]
    message = clawctx.build_session_context(entries).messages[0]
    assert message == {
        "role": "custom",
        "customType": "legacy-null",
        "content": None,
        "display": True,
        "timestamp": 1767225601000,
    }


def test_user_only_session_is_persisted_immediately(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = clawctx.Session.create(path, cwd="/")
    session.append_message({"role": "user", "content": "first", "timestamp": 1})
    # pi would hold both lines in memory until an assistant message arrives.
    assert len(path.read_text().splitlines()) == 2
    assert clawctx.Session.open(path).context().messages.roles() == ["user"]


def test_per_dm_null_history_limit_is_returned_as_null() -> None:
    config = {
        "channels": {"telegram": {"dmHistoryLimit": 15, "dms": {"123": {"historyLimit": None}}}}
    }
    # Upstream checks `!== undefined`, so a present null wins over the channel default.
    assert clawctx.history_limit_for_session_key("telegram:dm:123", config) is None
    assert clawctx.history_limit_for_session_key("telegram:dm:456", config) == 15


def test_cache_touch_at_zero_counts_as_no_touch() -> None:
    settings = clawctx.PruningSettings.from_config({"mode": "cache-ttl"})
    assert settings is not None
    pruner = clawctx.CacheTtlPruner(
        settings, context_window_tokens=1000, last_cache_touch_at=0, now_ms=lambda: 10**12
    )
    assert not pruner.is_due()
    pruner.touch(1)
    assert pruner.is_due()
