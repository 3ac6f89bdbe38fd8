"""Every recorded pi-ai payload case (``../shared/conformance-payload``) through clawctx's
public API: ``build_request_payload`` for ``stream`` / ``stream_simple`` cases,
``transform_messages`` for the replay-layer cases. Every produced body is also validated
against the official SDK request types.

Cases in ``known_failures.tsv`` are strict xfails: one that starts to pass fails the run
until its line is removed. ``DEVIATIONS`` are the deliberate differences, from ``tests/conformance/deviations.py``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

import clawctx
from clawctx.history import convert_to_llm
from clawctx.wire import PayloadError, build_request_payload, transform_messages
from tests.conformance.deviations import deviating_case_ids

from ._sdk import sdk_problems
from .conftest import CASES_DIR, CLOCK_MS, SKIP_REASON, load_cases, load_known_failures

if not CASES_DIR.is_dir():
    pytest.skip(SKIP_REASON, allow_module_level=True)

CASES = load_cases()
KNOWN = load_known_failures()
#: Deliberate differences from pi-ai, from the project's one list: ``id -> reason``.
DEVIATIONS: dict[str, str] = {
    case_id: deviation.why
    for case_id, deviation in deviating_case_ids("conformance-payload").items()
}
#: The SDKs whose request types the payloads are checked against, by API.
SDK_CHECKED = {
    "anthropic-messages",
    "openai-completions",
    "openai-responses",
    "azure-openai-responses",
    "openai-codex-responses",
    "google-generative-ai",
    "google-vertex",
    "google-gemini-cli",
}
#: Fields whose values pi-ai sends although the SDK Literals reject them (the cases' README):
#: Codex ``reasoning.summary`` ``"off"``/``"on"`` and groq's ``reasoning_effort: "default"``.
SDK_LITERAL_GAPS = {
    ("openai-codex-responses", "reasoning.summary"),
    ("openai-completions", "reasoning_effort"),
}
_REQUEST_ID = re.compile(r"^(pi|agent)-\d+-[a-z0-9]*$")


def json_equal(expected: Any, actual: Any) -> bool:
    """Equality of parsed JSON values (booleans never equal numbers; 1 equals 1.0; gemini-cli's
    random ``requestId`` matched by pattern)."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is bool and type(actual) is bool and expected == actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return expected == actual
    if isinstance(expected, dict) and isinstance(actual, dict):
        if expected.keys() != actual.keys():
            return False
        return all(
            bool(_REQUEST_ID.match(str(actual[k])))
            if k == "requestId"
            else json_equal(expected[k], actual[k])
            for k in expected
        )
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(
            json_equal(e, a) for e, a in zip(expected, actual, strict=True)
        )
    return type(expected) is type(actual) and expected == actual


def _param(case: dict[str, Any]) -> Any:
    marks = []
    if case["id"] in DEVIATIONS:
        marks.append(pytest.mark.xfail(strict=True, reason=DEVIATIONS[case["id"]]))
    elif case["id"] in KNOWN:
        marks.append(pytest.mark.xfail(strict=True, reason=KNOWN[case["id"]]))
    return pytest.param(case, id=case["id"], marks=marks)


def _validate_with_sdk(api: str, payload: dict[str, Any]) -> None:
    from pydantic import ValidationError

    try:
        unknown = sdk_problems(api, payload)
    except ValidationError as e:
        locations = {".".join(str(p) for p in err["loc"]) for err in e.errors()}
        if locations and all((api, loc) in SDK_LITERAL_GAPS for loc in locations):
            return
        raise
    assert unknown == [], f"keys the {api} SDK types do not declare: {unknown}"


def _run_stream(case: dict[str, Any]) -> None:
    inp, params, expected = case["input"], case["params"], case["expected"]
    model, ctx = inp["model"], inp["context"]
    context = {
        "system_prompt": ctx.get("systemPrompt"),
        "messages": ctx["messages"],
        "tools": ctx.get("tools"),
    }
    simple = case["fn"] == "stream_simple"
    if "throws" in expected:
        with pytest.raises(PayloadError) as info:
            build_request_payload(
                model, context, params.get("options"), simple=simple, now_ms=CLOCK_MS
            )
        assert str(info.value) == expected["throws"]["message"]
        return
    payload = build_request_payload(
        model, context, params.get("options"), simple=simple, now_ms=CLOCK_MS
    )
    actual = payload.to_dict()
    assert json.loads(payload.to_json()) == actual
    assert json_equal(expected["payload"], actual), (
        f"expected {json.dumps(expected['payload'])[:3000]}\nactual   {json.dumps(actual)[:3000]}"
    )
    if model["api"] in SDK_CHECKED:
        _validate_with_sdk(model["api"], actual)


def _run_transform(case: dict[str, Any]) -> None:
    inp, params, expected = case["input"], case["params"], case["expected"]
    messages = inp["messages"]
    if params.get("convertToLlm"):
        messages = list(convert_to_llm(messages))
    actual = transform_messages(messages, inp["model"], params["normalizer"], now_ms=CLOCK_MS)
    assert json_equal(expected["messages"], actual), (
        f"expected {json.dumps(expected['messages'])[:3000]}\nactual   {json.dumps(actual)[:3000]}"
    )


@pytest.fixture(autouse=True)
def _recorded_release() -> Iterator[None]:
    """The recorded cases are the recorded release's output, invalid requests included: they
    run under ``clawctx.compat`` (the safe default's agreement with them is
    ``test_safe_default_agrees.py``)."""
    with clawctx.compat("openclaw-2026.3.13"):
        yield


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_case(case: dict[str, Any]) -> None:
    if case["fn"] == "transform_messages":
        _run_transform(case)
    else:
        _run_stream(case)


def test_all_cases_are_run() -> None:
    assert len(CASES) == 340
    assert {c["fn"] for c in CASES} == {"stream", "stream_simple", "transform_messages"}


def test_known_failures_name_real_cases() -> None:
    ids = {c["id"] for c in CASES}
    assert sorted(KNOWN.keys() - ids) == []
    assert sorted(DEVIATIONS.keys() - ids) == []
    assert sorted(DEVIATIONS.keys() & KNOWN.keys()) == []


def _js_json(value: Any) -> bytes:
    """``JSON.stringify`` of a parsed case value, as pi-ai wrote it (key order kept)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8", "surrogatepass")


_BYTE_CASES = [
    c
    for c in CASES
    if c["fn"] != "transform_messages"
    and "payload" in c["expected"]
    and c["id"] not in KNOWN
    and c["id"] not in DEVIATIONS
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c["id"]) for c in _BYTE_CASES])
def test_json_bytes_are_what_pi_ai_sends(case: dict[str, Any]) -> None:
    """``to_json()`` is byte for byte the body pi-ai sends: same keys in the same order, same
    number and string forms (most of the messages are copied from the stored bytes)."""
    inp, params = case["input"], case["params"]
    ctx = inp["context"]
    context = {
        "system_prompt": ctx.get("systemPrompt"),
        "messages": ctx["messages"],
        "tools": ctx.get("tools"),
    }
    payload = build_request_payload(
        inp["model"],
        context,
        params.get("options"),
        simple=case["fn"] == "stream_simple",
        now_ms=CLOCK_MS,
    )
    actual = payload.to_json()
    expected = dict(case["expected"]["payload"])
    if "requestId" in expected:
        # gemini-cli's request id is random (json_equal matches it by pattern).
        request_id = json.loads(actual)["requestId"]
        assert _REQUEST_ID.match(request_id)
        expected["requestId"] = request_id
    assert actual == _js_json(expected)
