"""Builds request payloads N times over one 5,000-message transcript, for instruction counts.

    valgrind --tool=callgrind python benches/payload_calls.py clawctx anthropic-messages 12
    valgrind --tool=callgrind python benches/payload_calls.py reference anthropic-messages 6

The difference between two runs with different N, divided by the difference in N, is the cost
of one call (the first build of a transcript scans its messages: compare N=1 with N=0 for it).
``reference`` is ``test_payload.reference_payload`` (Anthropic only). Add
``--toggle-collect='clawctx_core::payload::build_payload'`` to count the Rust build alone.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_payload import MODEL, SYSTEM, make_messages, reference_payload

from clawctx.history import Transcript
from clawctx.wire import build_request_payload

# A provider and model id per API, so that the assistant turns (from OpenAI Responses' gpt-5)
# are another model's for every API but openai-responses.
MODELS = {
    "anthropic-messages": ("anthropic", "claude-sonnet-4-5"),
    "openai-completions": ("openai", "gpt-4o"),
    "openai-responses": ("openai", "gpt-5"),
    "google-generative-ai": ("google", "gemini-2.5-pro"),
    "mistral-conversations": ("mistral", "mistral-large-latest"),
}


def main(impl: str, api: str, calls: int) -> None:
    messages = make_messages(5_000)
    if impl == "reference":
        for _ in range(calls):
            reference_payload(messages)
        return
    provider, model_id = MODELS[api]
    model: dict[str, Any] = dict(MODEL, api=api, provider=provider, id=model_id, name=model_id)
    transcript = Transcript(messages)
    for _ in range(calls):
        context = {"system_prompt": SYSTEM, "messages": transcript}
        build_request_payload(model, context, now_ms=0).to_json()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
