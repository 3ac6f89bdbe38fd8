"""The facade's request from a cold process (issue 20): ``ContextPipeline.prepare`` on a path,
which opens the session lazily (``Session.open(path, lazy=True)``: the file is read from its end
only as far as the leaf's messages reach), against ``prepare`` on a full open (what a path cost
before), and the same plus ``request_payload()`` against the plain-Python reference pipeline
extended with a payload step.

Sizes are those of ``conftest.py``. The 1 GB file takes ~100 s to generate: set
``CLAWCTX_BENCH_1GB_PATH`` to a file made once with
``python -m benches.generate /tmp/cold-bench/session-1GB.jsonl --size 1GB`` to reuse it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

import clawctx
from benches import reference_pipeline as ref
from benches.conftest import GB_SIZE, SIZES, _generate, measure
from benches.generate import GeneratedSession, format_size
from clawctx.history import Session

MODEL = clawctx.ModelSpec("anthropic", "anthropic-messages", "claude-sonnet-4-5")
#: The pi-ai model mapping ``request_payload`` builds the body for.
PI_MODEL: dict[str, Any] = {
    "id": "claude-sonnet-4-5",
    "name": "Claude Sonnet 4.5",
    "api": "anthropic-messages",
    "provider": "anthropic",
    "baseUrl": "https://api.anthropic.com",
    "reasoning": True,
    "input": ["text", "image"],
    "maxTokens": 64000,
}
REQUEST = clawctx.PromptRequest(text="Summarize where we are.", session_key="agent:main:main")
SYSTEM = "You are a coding agent. Be concise."
#: Sizes of the payload comparison (the reference reads the whole file: seconds per GB).
PAYLOAD_SIZES = [s for s in SIZES if s >= 100_000_000] or SIZES[:1]


@pytest.fixture(scope="session", params=SIZES, ids=format_size)
def cold_session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> GeneratedSession:
    """``conftest.session``, but a 1 GB file named by ``CLAWCTX_BENCH_1GB_PATH`` is reused."""
    size: int = request.param
    reuse = os.environ.get("CLAWCTX_BENCH_1GB_PATH")
    if size == GB_SIZE and reuse and Path(reuse).is_file():
        path = Path(reuse)
        return GeneratedSession(
            path=path,
            target=size,
            size=path.stat().st_size,
            lines=0,
            seed=0,
            leaf_id="",
            counts={},
            damaged=False,
        )
    return _generate(size, False, tmp_path_factory)


@pytest.fixture(scope="session", params=PAYLOAD_SIZES, ids=format_size)
def payload_session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> GeneratedSession:
    reuse = os.environ.get("CLAWCTX_BENCH_1GB_PATH")
    if request.param == GB_SIZE and reuse and Path(reuse).is_file():
        path = Path(reuse)
        return GeneratedSession(path, GB_SIZE, path.stat().st_size, 0, 0, "", {}, False)
    return _generate(request.param, False, tmp_path_factory)


def _pipeline(tmp_path: Path) -> clawctx.ContextPipeline:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    (workspace / "AGENTS.md").write_text("Be brief.\n", encoding="utf-8")
    # A fixed clock: synthetic tool results are stamped with it (comparable outputs).
    return clawctx.ContextPipeline(
        model=MODEL, workspace_dir=workspace, read_only=True, now_ms=lambda: 1_700_000_000_000
    )


def test_cold_prepare(benchmark: Any, cold_session: GeneratedSession, tmp_path: Path) -> None:
    pipeline = _pipeline(tmp_path)

    def prepare() -> int:
        return pipeline.prepare(cold_session.path, REQUEST).estimated_tokens

    tokens = measure(benchmark, "cold prepare", "clawctx lazy", cold_session, prepare)
    assert tokens > 0


def test_full_open_prepare(benchmark: Any, cold_session: GeneratedSession, tmp_path: Path) -> None:
    """What ``prepare`` on a path cost before: the whole file opened."""
    pipeline = _pipeline(tmp_path)

    def prepare() -> int:
        session = Session.open(cold_session.path, read_only=True)
        return pipeline.prepare(session, REQUEST).estimated_tokens

    tokens = measure(
        benchmark, "cold prepare", "clawctx full open", cold_session, prepare, rounds=3
    )
    assert tokens > 0


def test_same_request(cold_session: GeneratedSession, tmp_path: Path) -> None:
    pipeline = _pipeline(tmp_path)
    lazy = pipeline.prepare(cold_session.path, REQUEST)
    full = pipeline.prepare(Session.open(cold_session.path, read_only=True), REQUEST)
    assert lazy.system_prompt == full.system_prompt
    assert lazy.messages.to_json() == full.messages.to_json()
    assert lazy.request_payload(model=PI_MODEL) == full.request_payload(model=PI_MODEL)


def clawctx_payload(pipeline: clawctx.ContextPipeline, path: Path) -> bytes:
    prepared = pipeline.prepare(path, REQUEST)
    return json.dumps(
        prepared.request_payload(model=PI_MODEL), ensure_ascii=False, separators=(",", ":")
    ).encode()


def test_cold_prepare_payload(
    benchmark: Any, cold_session: GeneratedSession, tmp_path: Path
) -> None:
    pipeline = _pipeline(tmp_path)
    body = measure(
        benchmark,
        "cold prepare + payload",
        "clawctx lazy",
        cold_session,
        clawctx_payload,
        pipeline,
        cold_session.path,
    )
    assert body.startswith(b'{"model"')


# ---- the plain-Python reference, extended with a payload step ------------------------------

_NOT_ID = re.compile(r"[^a-zA-Z0-9_-]")


def _text_of(content: Any) -> list[dict[str, Any]]:
    """User-side content blocks for Anthropic (text and base64 images)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    blocks: list[dict[str, Any]] = []
    for block in content or []:
        if block.get("type") == "text" and str(block.get("text", "")).strip():
            blocks.append({"type": "text", "text": block["text"]})
        elif block.get("type") == "image":
            blocks.append(
                {
                    "type": "image",
                    "source": {
                        "type": "base64",
                        "media_type": block.get("mimeType"),
                        "data": block.get("data"),
                    },
                }
            )
    return blocks


def _llm_message(message: dict[str, Any]) -> dict[str, Any] | None:
    """pi's ``convertToLlm`` (messages.ts) for the roles a session holds."""
    role = message.get("role")
    if role in ("user", "assistant", "toolResult"):
        return message
    if role == "bashExecution":
        if message.get("excludeFromContext"):
            return None
        text = f"Ran `{message.get('command')}`\n```\n{message.get('output') or ''}\n```"
        return {"role": "user", "content": [{"type": "text", "text": text}]}
    if role == "custom":
        return {"role": "user", "content": message.get("content")}
    if role == "branchSummary":
        text = f"<summary>\n{message.get('summary')}\n</summary>"
        return {"role": "user", "content": [{"type": "text", "text": text}]}
    if role == "compactionSummary":
        text = f"<summary>\n{message.get('summary')}\n</summary>"
        return {"role": "user", "content": [{"type": "text", "text": text}]}
    return None


def reference_payload(messages: list[dict[str, Any]], prompt: str) -> bytes:
    """The Anthropic body in plain Python (pi-ai ``transformMessages`` + ``convertMessages``,
    as ``benches/test_payload.py`` writes it, widened to every role of a session). A cost
    reference: its body is not checked to equal clawctx's."""
    llm = [m for m in (_llm_message(x) for x in messages) if m is not None]
    llm.append({"role": "user", "content": prompt})
    id_map: dict[str, str] = {}
    params: list[dict[str, Any]] = []
    i = 0
    while i < len(llm):
        msg = llm[i]
        role = msg["role"]
        if role == "user":
            blocks = _text_of(msg.get("content"))
            if blocks:
                params.append({"role": "user", "content": blocks})
        elif role == "assistant":
            out: list[dict[str, Any]] = []
            for b in msg.get("content") or []:
                kind = b.get("type")
                if kind == "thinking" and str(b.get("thinking", "")).strip():
                    out.append({"type": "text", "text": b["thinking"]})
                elif kind == "text" and str(b.get("text", "")).strip():
                    out.append({"type": "text", "text": b["text"]})
                elif kind == "toolCall":
                    new_id = _NOT_ID.sub("_", str(b.get("id")))[:64]
                    id_map[str(b.get("id"))] = new_id
                    out.append(
                        {
                            "type": "tool_use",
                            "id": new_id,
                            "name": b.get("name"),
                            "input": b.get("arguments") or {},
                        }
                    )
            if out:
                params.append({"role": "assistant", "content": out})
        else:
            results = []
            while i < len(llm) and llm[i]["role"] == "toolResult":
                r = llm[i]
                call = str(r.get("toolCallId"))
                results.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": id_map.get(call, call),
                        "content": _text_of(r.get("content")),
                        "is_error": bool(r.get("isError")),
                    }
                )
                i += 1
            i -= 1
            params.append({"role": "user", "content": results})
        i += 1
    last = params[-1]
    if last["role"] == "user" and last["content"]:
        last["content"][-1]["cache_control"] = {"type": "ephemeral"}
    body = {
        "model": PI_MODEL["id"],
        "messages": params,
        "max_tokens": PI_MODEL["maxTokens"] // 3,
        "stream": True,
        "system": [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}],
    }
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def reference_request(path: Path) -> bytes:
    """``reference_pipeline.run_pipeline``'s steps up to the limited history, then the body."""
    entries = ref.load_entries(path)
    messages, _thinking, _model = ref.build_session_context(entries)
    messages = ref.repair_tool_pairing(messages, ref.NOW_MS)
    messages = ref.limit_history_turns(messages, ref.HISTORY_TURNS)
    return reference_payload(messages, REQUEST.text)


def test_clawctx_prepare_payload(
    benchmark: Any, payload_session: GeneratedSession, tmp_path: Path
) -> None:
    pipeline = _pipeline(tmp_path)
    body = measure(
        benchmark,
        "prepare + payload",
        "clawctx lazy",
        payload_session,
        clawctx_payload,
        pipeline,
        payload_session.path,
    )
    assert body.startswith(b'{"model"')


def test_reference_prepare_payload(benchmark: Any, payload_session: GeneratedSession) -> None:
    body = measure(
        benchmark,
        "prepare + payload",
        "reference",
        payload_session,
        reference_request,
        payload_session.path,
        rounds=2 if payload_session.target >= GB_SIZE else 3,
    )
    assert body.startswith(b'{"model"')
