"""The cost lookup over LiteLLM's bundled cost map: known models priced, unknown ones None."""

from __future__ import annotations

import pytest

from promptcanary.providers.litellm import cost_usd, import_litellm


def test_a_known_model_is_priced_from_the_map() -> None:
    prices = import_litellm().model_cost["gpt-4o-mini"]
    expected = 1000 * prices["input_cost_per_token"] + 500 * prices["output_cost_per_token"]

    assert cost_usd("openai/gpt-4o-mini", 1000, 500) == pytest.approx(expected)
    assert cost_usd("gpt-4o-mini", 1000, 500) == pytest.approx(expected)


@pytest.mark.parametrize("model", ["openai/no-such-model", "ollama/no-such-model", "replay:x"])
def test_a_model_outside_the_map_has_no_price_not_a_guess(model: str) -> None:
    # LiteLLM itself prices any ollama/… model at 0: that would be a guess.
    assert cost_usd(model, 1000, 500) is None
