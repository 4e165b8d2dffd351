"""ProbeRegistry as an object: explicit registries, the active one, clashes and lookups."""

from __future__ import annotations

import pytest

from promptcanary.core.config.schema import SuiteConfigError, suite_from_text
from promptcanary.core.models import CanaryPrompt, LLMResponse, ProbeResult
from promptcanary.core.probes import JsonValidityProbe
from promptcanary.core.probes.base import BaseProbe, get_probe, probe
from promptcanary.core.probes.registry import (
    DEFAULT_REGISTRY,
    ProbeRegistry,
    ProbeRegistryError,
    active_registry,
)

SUITE = "name: s\nprobes: [{type: %s}]\nprompts: [{id: p, text: t}]\n"


class _Passing(BaseProbe):
    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        return self._make_result(prompt.id, passed=True, score=1.0)


def test_a_class_keyword_registers_in_the_given_registry_only() -> None:
    own = ProbeRegistry()

    class Mine(_Passing, registry=own):
        probe_id = "test_registry_keyword"

    assert own.get("test_registry_keyword") is Mine
    assert own.names == ["test_registry_keyword"]
    assert "test_registry_keyword" not in DEFAULT_REGISTRY


def test_the_decorator_takes_a_registry() -> None:
    own = ProbeRegistry()

    @probe("test_registry_decorated", registry=own)
    def decorated(prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        return ProbeResult(probe_id="test_registry_decorated", prompt_id=prompt.id, passed=True)

    assert own.get("test_registry_decorated") is decorated
    assert "test_registry_decorated" not in DEFAULT_REGISTRY


def test_an_active_registry_collects_definitions_and_answers_lookups() -> None:
    own = DEFAULT_REGISTRY.copy()
    with own.active():
        assert active_registry() is own

        class Scoped(_Passing):
            probe_id = "test_registry_scoped"

        assert get_probe("test_registry_scoped") is Scoped
    assert active_registry() is DEFAULT_REGISTRY
    assert "test_registry_scoped" in own and "test_registry_scoped" not in DEFAULT_REGISTRY


def test_the_loader_resolves_types_in_the_registry_it_is_given() -> None:
    own = ProbeRegistry([JsonValidityProbe])
    suite = suite_from_text(SUITE % "json_validity", registry=own)
    assert isinstance(suite.probes[0], JsonValidityProbe)
    with pytest.raises(SuiteConfigError) as info:
        suite_from_text(SUITE % "refusal", registry=own)
    assert "unknown probe type 'refusal'" in str(info.value)
    assert "Valid types: json_validity" in str(info.value)


def test_a_clash_names_both_classes() -> None:
    own = ProbeRegistry()

    class First(_Passing, registry=own):
        probe_id = "test_registry_clash"

    class Second(_Passing):  # registered nowhere yet: no probe_id
        pass

    Second.probe_id = "test_registry_clash"
    with pytest.raises(ProbeRegistryError) as info:
        own.register(Second)
    assert "First" in str(info.value) and "Second" in str(info.value)
    assert own.get("test_registry_clash") is First


def test_an_unknown_id_lists_the_valid_ones() -> None:
    with pytest.raises(ProbeRegistryError, match=r"valid probe types are: json_validity$"):
        ProbeRegistry([JsonValidityProbe]).get("nope")


def test_a_copy_is_independent() -> None:
    original = ProbeRegistry([JsonValidityProbe])
    copy = original.copy()

    class Extra(_Passing, registry=copy):
        probe_id = "test_registry_copy"

    assert "test_registry_copy" in copy and "test_registry_copy" not in original
    assert len(original) == 1 and list(original) == ["json_validity"]
