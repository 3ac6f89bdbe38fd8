"""Records that nothing points at (no id, parent, timestamp or known type) on consecutive lines
are held as one run to bound memory (issue 17, finding 12). Every public view of a session must
be the same as for the same records separated by blank lines, which are never held as runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import clawctx
from clawctx.history import find_cut_point, read_leaf_context, scan_sessions

STAMP = "2026-01-01T00:00:00.000Z"
INERT = ["{}", '{"x":1}', '{"type":"future_thing","n":[1]}', ' {"y":2}\r']


def _lines() -> list[str]:
    lines = [
        json.dumps({"type": "session", "version": 3, "id": "s", "timestamp": STAMP, "cwd": "/"})
    ]
    parent = None
    for k in range(30):
        lines.extend(INERT[(k + j) % len(INERT)] for j in range(k % 6))
        entry_id = f"m{k}"
        role = "user" if k % 2 == 0 else "assistant"
        message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": f"t{k}"}]}
        if role == "assistant":
            message |= {"provider": "anthropic", "model": "m", "stopReason": "stop"}
        lines.append(
            json.dumps(
                {"type": "message", "id": entry_id, "parentId": parent, "timestamp": STAMP}
                | {"message": message}
            )
        )
        if k % 7 == 0:
            lines.append(
                json.dumps(
                    {"type": "label", "id": f"l{k}", "parentId": entry_id, "timestamp": STAMP}
                    | {"targetId": entry_id, "label": f"x{k}"}
                )
            )
            entry_id = f"l{k}"
        parent = entry_id
    return lines


def _view(path: Path) -> dict[str, object]:
    session = clawctx.Session.open(path, read_only=True)
    summary = scan_sessions([path], workers=1)[0].to_dict()
    for key in ("path", "size_bytes"):
        summary.pop(key, None)
    return {
        "len": len(session),
        "entries": session.entries(),
        "types": session.entry_types(),
        "tree": session.tree(),
        "labels": session.labels,
        "leaf": session.leaf_id,
        "context": session.context().messages.to_list(),
        "cut": find_cut_point(session, 0, len(session), 20).first_kept_entry_index,
        "summary": summary,
        "leaf_read": read_leaf_context(path).messages.to_list(),
    }


def test_runs_are_invisible_in_every_public_view(tmp_path: Path) -> None:
    lines = _lines()
    packed = tmp_path / "packed.jsonl"
    packed.write_text("\n".join(lines) + "\n", newline="")
    spaced = tmp_path / "spaced.jsonl"
    spaced.write_text("\n\n".join(lines) + "\n", newline="")
    view = _view(packed)
    assert view == _view(spaced)
    assert view["len"] == len(lines) - 1
    assert {"x": 1} in view["entries"] and {} in view["entries"]


def test_a_file_ending_in_inert_lines_has_the_last_one_as_leaf(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join([*_lines(), "{}", '{"x":1}', "{}"]) + "\n")
    session = clawctx.Session.open(path)
    assert session.leaf_id is None
    assert session.branch_path() == [{}]
    assert session.context().messages.to_list() == []
    # Appending continues from that leaf, as pi's `appendMessage` does.
    session.append_message({"role": "user", "content": "next"})
    assert session.entries()[-1]["parentId"] is None
    assert len(session) == len(_lines()) - 1 + 4
    session.refresh()
    assert clawctx.Session.open(path, read_only=True).entries() == session.entries()
