"""``validate_for_provider`` refuses names it does not know instead of silently applying no
rules (issue 27: ``provider="antropic"`` used to drop the Anthropic rules)."""

from __future__ import annotations

import pytest

import clawctx

ASSISTANT_FIRST = [{"role": "assistant", "content": [{"type": "text", "text": "hi"}]}]


def test_misspelt_provider_raises_listing_known_ones() -> None:
    with pytest.raises(ValueError, match='unknown provider "antropic"'):
        clawctx.validate_for_provider(ASSISTANT_FIRST, provider="antropic")
    with pytest.raises(ValueError, match="amazon-bedrock") as err:
        clawctx.validate_for_provider(ASSISTANT_FIRST, provider="antropic")
    assert "anthropic" in str(err.value) and "openrouter" in str(err.value)


def test_unknown_model_api_raises_even_with_a_known_provider() -> None:
    with pytest.raises(ValueError, match="anthropic-messages"):
        clawctx.validate_for_provider(ASSISTANT_FIRST, model_api="anthropic-msgs")
    with pytest.raises(ValueError, match="unknown model_api"):
        clawctx.validate_for_provider(ASSISTANT_FIRST, provider="anthropic", model_api="x")


@pytest.mark.parametrize(
    "provider",
    [
        "anthropic",
        " Anthropic ",
        "amazon-bedrock",
        "bedrock",
        "openai",
        "openai-codex",
        "google",
        "google-vertex",
        "google-gemini-cli",
        "mistral",
        "openrouter",
        "minimax",
        "xai",
        "groq",
        "deepseek",
        "together",
        "ollama",
        "github-copilot",
        "kimi-coding",
        "zai",
    ],
)
def test_known_providers_are_accepted(provider: str) -> None:
    clawctx.validate_for_provider(ASSISTANT_FIRST, provider=provider)


def test_known_provider_keeps_its_rules() -> None:
    found = clawctx.validate_for_provider(ASSISTANT_FIRST, provider="anthropic")
    assert [v.rule for v in found] == ["first-turn-not-user"]


def test_custom_provider_is_usable_with_a_known_model_api() -> None:
    # An OpenAI-compatible proxy names its own provider id; the model API picks the rules.
    found = clawctx.validate_for_provider(
        ASSISTANT_FIRST, provider="my-llm-proxy", model_api="anthropic-messages"
    )
    assert [v.rule for v in found] == ["first-turn-not-user"]
    assert (
        clawctx.validate_for_provider(
            ASSISTANT_FIRST, provider="my-llm-proxy", model_api="openai-completions"
        )
        == []
    )


def test_no_names_means_no_family_rules() -> None:
    assert clawctx.validate_for_provider(ASSISTANT_FIRST) == []
