"""The safe default agrees with the recorded release wherever the release's request is valid.

Every recorded pi-ai payload case (``../shared/conformance-payload``) and every recorded
``sanitize_session_history`` case (``../shared/conformance``) runs through the public API
*without* ``clawctx.compat``. Where the default's output differs from the recording, the
recording must be a request the provider rejects: its body breaks a rule of
``validate_request_body`` (payload cases) or the sanitized history breaks one of
``validate_for_provider`` (hygiene cases). Any other difference fails: the guard changed a
request that was already valid.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from clawctx.history import convert_to_llm, request_issues, sanitize_session_history
from clawctx.wire import (
    VALIDATED_APIS,
    PayloadError,
    build_request_payload,
    transform_messages,
    validate_request_body,
)

from .conftest import CASES_DIR, CLOCK_MS, SKIP_REASON, load_cases
from .test_cases import DEVIATIONS, KNOWN, json_equal

if not CASES_DIR.is_dir():
    pytest.skip(SKIP_REASON, allow_module_level=True)

HYGIENE_CASES = CASES_DIR.parent / "conformance" / "sanitize_session_history.jsonl"
PAYLOAD_CASES = [c for c in load_cases() if c["id"] not in DEVIATIONS and c["id"] not in KNOWN]


def _hygiene_cases() -> list[dict[str, Any]]:
    if not HYGIENE_CASES.is_file():
        return []
    text = HYGIENE_CASES.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line.strip()]


def _default_output(case: dict[str, Any]) -> Any:
    inp, params = case["input"], case["params"]
    if case["fn"] in ("stream", "stream_simple"):
        ctx = inp["context"]
        context = {
            "system_prompt": ctx.get("systemPrompt"),
            "messages": ctx["messages"],
            "tools": ctx.get("tools"),
        }
        return build_request_payload(
            inp["model"],
            context,
            params.get("options"),
            simple=case["fn"] == "stream_simple",
            now_ms=CLOCK_MS,
        ).to_dict()
    messages = inp["messages"]
    if params.get("convertToLlm"):
        messages = list(convert_to_llm(messages))
    return transform_messages(messages, inp["model"], params["normalizer"], now_ms=CLOCK_MS)


def _recorded_is_invalid(case: dict[str, Any]) -> bool:
    model = case["input"]["model"]
    if case["fn"] in ("stream", "stream_simple"):
        api = model["api"]
        assert api in VALIDATED_APIS, api
        return bool(validate_request_body(case["expected"]["payload"], api))
    found = request_issues(
        case["expected"]["messages"],
        provider=model["provider"],
        model_api=model["api"],
        model_id=model["id"],
    )
    return bool(found)


@pytest.mark.parametrize("case", PAYLOAD_CASES, ids=[c["id"] for c in PAYLOAD_CASES])
def test_a_payload_differs_only_where_the_recording_is_invalid(case: dict[str, Any]) -> None:
    if "throws" in case["expected"]:
        with pytest.raises(PayloadError):
            _default_output(case)
        return
    actual = _default_output(case)
    recorded = case["expected"].get("payload", case["expected"].get("messages"))
    if not json_equal(recorded, actual):
        assert _recorded_is_invalid(case), "the guard changed a valid request"


def test_the_default_changes_some_recorded_payloads() -> None:
    changed = [
        c["id"]
        for c in PAYLOAD_CASES
        if "throws" not in c["expected"]
        and not json_equal(
            c["expected"].get("payload", c["expected"].get("messages")), _default_output(c)
        )
    ]
    # The recorded release sends invalid requests for some of its own cases.
    assert changed


@pytest.mark.parametrize("case", _hygiene_cases(), ids=lambda c: c["id"])
def test_sanitize_differs_only_where_the_recording_is_invalid(case: dict[str, Any]) -> None:
    params = case["params"]
    target = {
        "provider": params.get("provider"),
        "model_api": params.get("modelApi"),
        "model_id": params.get("modelId"),
    }
    out = sanitize_session_history(
        case["input"]["messages"],
        allowed_tool_names=params.get("allowedToolNames"),
        session_id=params["sessionId"],
        now_ms=CLOCK_MS,
        **target,
    )
    recorded = case["expected"]["messages"]
    if not json_equal(recorded, out.to_list()):
        assert request_issues(recorded, **target), "the guard changed a valid history"
