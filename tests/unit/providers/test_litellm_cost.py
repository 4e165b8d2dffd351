"""The cost lookup over LiteLLM's bundled cost map: known models priced, unknown ones None."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from promptcanary.providers.litellm import _bundled_cost_map, cost_usd, import_litellm


def test_a_known_model_is_priced_from_the_map() -> None:
    prices = import_litellm().model_cost["gpt-4o-mini"]
    expected = 1000 * prices["input_cost_per_token"] + 500 * prices["output_cost_per_token"]

    assert cost_usd("openai/gpt-4o-mini", 1000, 500) == pytest.approx(expected)
    assert cost_usd("gpt-4o-mini", 1000, 500) == pytest.approx(expected)


@pytest.mark.parametrize("model", ["openai/no-such-model", "ollama/no-such-model", "replay:x"])
def test_a_model_outside_the_map_has_no_price_not_a_guess(model: str) -> None:
    # LiteLLM itself prices any ollama/… model at 0: that would be a guess.
    assert cost_usd(model, 1000, 500) is None


def test_the_bundled_map_read_as_data_holds_every_model_litellm_prices() -> None:
    # The pre-check that spares a merge job LiteLLM's import says "no price" only for a model
    # LiteLLM does not price either: every model LiteLLM knows is in the file.
    bundled = _bundled_cost_map()
    assert bundled is not None
    assert set(import_litellm().model_cost) <= set(bundled)


def test_an_unpriced_model_does_not_import_litellm(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from promptcanary.providers.litellm import cost_usd\n"
        "print(cost_usd('openai/no-such-model', 10, 5), 'litellm' in sys.modules)\n"
        "print(cost_usd('openai/gpt-4o-mini', 10, 5) > 0, 'litellm' in sys.modules)\n"
    )
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert proc.stdout.splitlines() == ["None False", "True True"]
