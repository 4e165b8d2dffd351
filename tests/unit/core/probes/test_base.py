"""The probe contract: auto-registration, id clashes, lookups, result building, calling."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from promptcanary.core.models import CanaryPrompt, LLMResponse, ProbeCategory, ProbeResult
from promptcanary.core.probes.base import (
    BaseProbe,
    ProbeRegistryError,
    get_probe,
    get_probe_registry,
    probe,
)
from promptcanary.core.probes.registry import DEFAULT_REGISTRY, ProbeRegistry

PROMPT = CanaryPrompt(id="p1", text="test")
RESPONSE = LLMResponse(prompt_id="p1", provider_model_id="m", content="hello world")


@pytest.fixture
def registry() -> Iterator[ProbeRegistry]:
    """A copy of the default registry, active for the test: test-only probes never leak."""
    with DEFAULT_REGISTRY.copy().active() as own:
        yield own


class _Scored(BaseProbe):
    """No probe_id: an abstract-ish helper base that must not register."""

    def __init__(self, score: float = 1.0) -> None:
        self.score = score

    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        return self._make_result(prompt.id, passed=True, score=self.score, details="d")


def test_subclass_with_probe_id_registers_itself(registry: ProbeRegistry) -> None:
    class WordyProbe(_Scored):
        probe_id = "test_wordy"

    assert registry["test_wordy"] is WordyProbe
    assert get_probe("test_wordy") is WordyProbe
    assert get_probe_registry()["test_wordy"] is WordyProbe
    assert WordyProbe.name == "Test Wordy"  # a display name is derived from the id


def test_subclass_without_probe_id_does_not_register(registry: ProbeRegistry) -> None:
    before = registry.as_dict()

    class Helper(_Scored):
        pass

    assert registry.as_dict() == before
    assert Helper not in registry.values()
    assert _Scored not in registry.values()


def test_registry_copy_cannot_change_the_registry(registry: ProbeRegistry) -> None:
    copy = get_probe_registry()
    copy["test_injected"] = _Scored
    assert "test_injected" not in registry


def test_a_different_class_claiming_a_taken_id_names_both(
    registry: ProbeRegistry,
) -> None:
    class FirstClaim(_Scored):
        probe_id = "test_clash"

    with pytest.raises(ProbeRegistryError) as info:

        class SecondClaim(_Scored):
            probe_id = "test_clash"

    message = str(info.value)
    assert "test_clash" in message
    assert "FirstClaim" in message and "SecondClaim" in message
    assert registry["test_clash"] is FirstClaim


def test_a_decorated_function_cannot_take_a_builtin_id(
    registry: ProbeRegistry,
) -> None:
    with pytest.raises(ProbeRegistryError, match="JsonValidityProbe"):

        @probe("json_validity")
        def json_validity(prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
            raise AssertionError("never called")


def test_reloading_a_module_re_registers_the_same_class_harmlessly(
    registry: ProbeRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module_name = "pc_test_reloaded_probe"
    (tmp_path / f"{module_name}.py").write_text(
        textwrap.dedent(
            """
            from promptcanary.core.probes.base import BaseProbe

            class ReloadedProbe(BaseProbe):
                probe_id = "test_reloaded"

                def evaluate(self, prompt, response):
                    return self._make_result(prompt.id, passed=True, score=1.0)
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        first = importlib.import_module(module_name)
        reloaded = importlib.reload(first)
    finally:
        sys.modules.pop(module_name, None)
    new_class = reloaded.ReloadedProbe
    assert registry["test_reloaded"] is new_class
    assert new_class().evaluate(PROMPT, RESPONSE).probe_id == "test_reloaded"


def test_unknown_id_lists_the_valid_ones(registry: ProbeRegistry) -> None:
    with pytest.raises(ProbeRegistryError) as info:
        get_probe("nope")
    message = str(info.value)
    assert "'nope'" in message
    for probe_id in ("json_validity", "tool_call_name", "refusal"):
        assert probe_id in message


def test_registry_error_is_a_value_error() -> None:
    # Callers (the YAML loader) catch ValueError for every configuration mistake.
    assert issubclass(ProbeRegistryError, ValueError)


class _Fixed(BaseProbe):
    probe_id = "test_fixed_score"
    name = "Fixed"
    category = ProbeCategory.REASONING

    def __init__(self, score: float) -> None:
        self.score = score

    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        return self._make_result(
            prompt.id, passed=False, score=self.score, details="x", metadata={"k": 1}
        )


@pytest.mark.parametrize(
    ("raw", "clamped"),
    [(1.7, 1.0), (-3, 0.0), (float("nan"), 0.0), (float("inf"), 1.0), (0.42, 0.42), (1, 1.0)],
)
def test_make_result_clamps_the_score(raw: float, clamped: float) -> None:
    result = _Fixed(raw).evaluate(PROMPT, RESPONSE)
    assert result.score == clamped


def test_make_result_fills_identity_fields() -> None:
    result = _Fixed(0.5).evaluate(PROMPT, RESPONSE)
    assert result.probe_id == "test_fixed_score"
    assert result.probe_name == "Fixed"
    assert result.category is ProbeCategory.REASONING
    assert result.prompt_id == "p1"
    assert result.probe_key == "test_fixed_score"
    assert (result.details, result.metadata, result.passed) == ("x", {"k": 1}, False)


def test_calling_a_probe_is_evaluate() -> None:
    fixed = _Fixed(0.3)
    assert fixed(PROMPT, RESPONSE) == fixed.evaluate(PROMPT, RESPONSE)


def test_params_and_repr_show_public_attributes_only() -> None:
    fixed = _Fixed(0.3)
    fixed._cache = "hidden"  # type: ignore[attr-defined]
    assert fixed.params() == {"score": 0.3}
    assert repr(fixed) == "_Fixed(score=0.3)"


def test_probe_decorator_makes_a_registered_class(registry: ProbeRegistry) -> None:
    @probe("test_decorated", category=ProbeCategory.SAFETY)
    def shouts(prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        """Checks for upper case."""
        loud = response.content.isupper()
        return ProbeResult(
            probe_id="test_decorated", prompt_id=prompt.id, passed=loud, score=float(loud)
        )

    assert registry["test_decorated"] is shouts
    assert issubclass(shouts, BaseProbe)
    assert shouts.name == "Shouts"
    assert shouts.category is ProbeCategory.SAFETY
    assert shouts.description == "Checks for upper case."
    instance = shouts()
    assert instance(PROMPT, RESPONSE).passed is False
    loud = RESPONSE.model_copy(update={"content": "HELLO"})
    assert instance(PROMPT, loud).score == 1.0


def test_probe_decorator_requires_an_id() -> None:
    with pytest.raises(ValueError, match="probe_id"):
        probe("")
