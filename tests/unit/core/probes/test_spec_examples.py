"""The PromptCanary documentation's probe examples, run as written (custom probes must work)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

# The import paths the documentation uses, exactly.
from promptcanary.core.models import CanaryPrompt, LLMResponse, ProbeCategory, ProbeResult
from promptcanary.core.probes import JsonValidityProbe, get_probe, get_probe_registry
from promptcanary.core.probes.base import BaseProbe, probe
from promptcanary.core.probes.registry import DEFAULT_REGISTRY, ProbeRegistry
from promptcanary.core.suite import CanarySuite

# ── the documentation's examples, verbatim ───────────────────────────────────


@probe("contains_code_fence", name="Contains Code Fence", category=ProbeCategory.FORMAT)
def check_code_fence(prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
    has_fence = "```" in response.content
    return ProbeResult(
        probe_id="contains_code_fence",
        probe_name="Contains Code Fence",
        category=ProbeCategory.FORMAT,
        prompt_id=prompt.id,
        passed=has_fence,
        score=1.0 if has_fence else 0.0,
        details="Code fence found." if has_fence else "No code fence in response.",
    )


class SentenceCountProbe(BaseProbe):
    """Checks that the response has approximately the expected sentence count.

    Score: 1.0 within tolerance, degrades linearly outside it.
    """

    probe_id = "sentence_count"
    name = "Sentence Count"
    category = ProbeCategory.REASONING

    def __init__(self, expected: int, tolerance: float = 0.5) -> None:
        self.expected = expected
        self.tolerance = tolerance

    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse):
        import re

        sentences = [s for s in re.split(r"[.!?]+", response.content) if s.strip()]
        count = len(sentences)
        ratio = count / max(self.expected, 1)
        deviation = abs(ratio - 1.0)
        score = max(0.0, 1.0 - deviation) if deviation > self.tolerance else 1.0 - deviation * 0.2
        return self._make_result(
            prompt.id,
            passed=deviation <= self.tolerance,
            score=score,
            details=f"{count} sentence(s) vs expected ~{self.expected}.",
            metadata={"sentence_count": count},
        )


def test_my_probe() -> None:
    probe = SentenceCountProbe(expected=2, tolerance=0.5)
    prompt = CanaryPrompt(id="p1", text="test")
    response = LLMResponse(prompt_id="p1", provider_model_id="m", content="One. Two.")
    result = probe(prompt, response)
    assert result.passed
    assert result.score >= 0.8


# ── what the documentation promises about them ───────────────────────────────

BUILTIN_IDS = {
    "json_validity",
    "json_schema",
    "json_key_order",
    "response_length",
    "markdown_headers",
    "keyword_presence",
    "expected_keywords",
    "json_path",
    "step_by_step",
    "verbosity",
    "confidence_language",
    "direct_answer",
    "refusal",
    "safety_language",
    "factual_consistency",
    "sentiment",
    "tool_call_presence",
    "tool_call_name",
    "tool_call_args",
    "tool_call_schema",
}

PROMPT = CanaryPrompt(id="p1", text="Write a sorting function.")


def answer(content: str) -> LLMResponse:
    return LLMResponse(prompt_id="p1", provider_model_id="m", content=content)


@pytest.fixture
def registry() -> Iterator[ProbeRegistry]:
    """A copy of the default registry, active for the test: test-only probes never leak."""
    with DEFAULT_REGISTRY.copy().active() as own:
        yield own


def test_sentence_count_scores_partially_outside_tolerance() -> None:
    result = SentenceCountProbe(expected=2)(PROMPT, answer("One. Two. Three. Four. Five."))
    # ratio 2.5, deviation 1.5 > 0.5 → max(0, 1 − 1.5) = 0.
    assert (result.passed, result.score) == (False, 0.0)
    assert result.metadata == {"sentence_count": 5}
    assert result.probe_name == "Sentence Count"


def test_custom_probes_are_registered_and_usable_from_yaml_names() -> None:
    registry = get_probe_registry()
    assert registry["sentence_count"] is SentenceCountProbe
    assert registry["contains_code_fence"] is check_code_fence


def test_decorated_probe_in_a_suite() -> None:
    suite = CanarySuite(name="x", prompts=[PROMPT], probes=[check_code_fence()])
    fenced, plain = (
        suite.score(PROMPT, answer("```python\nsorted(xs)\n```")),
        suite.score(PROMPT, answer("Use sorted().")),
    )
    assert [(r.probe_key, r.passed, r.score) for r in fenced] == [
        ("contains_code_fence", True, 1.0)
    ]
    assert plain[0].details == "No code fence in response."
    assert plain[0].category is ProbeCategory.FORMAT


def test_get_probe_builds_a_builtin() -> None:
    instance = get_probe("json_validity")()
    assert isinstance(instance, JsonValidityProbe)
    assert instance.probe_id == "json_validity"


def test_registry_holds_every_builtin_probe() -> None:
    missing = BUILTIN_IDS - set(get_probe_registry())
    assert not missing, f"built-in probes not registered: {sorted(missing)}"


def test_builtin_probes_have_the_documented_contract() -> None:
    registry = get_probe_registry()
    for probe_id in BUILTIN_IDS:
        cls = registry[probe_id]
        assert cls.probe_id == probe_id
        assert cls.name, probe_id
        assert cls.category is not ProbeCategory.CUSTOM, probe_id
        assert cls.__module__.startswith("promptcanary.core.probes."), probe_id


def test_suite_score_keys_each_probe_entry() -> None:
    suite = CanarySuite(
        name="x",
        prompts=[PROMPT],
        probes=[check_code_fence(), SentenceCountProbe(expected=1), SentenceCountProbe(expected=3)],
    )
    results = suite.score(PROMPT, answer("One. Two. Three."))
    keys = [r.probe_key for r in results]
    assert keys[0] == "contains_code_fence"
    assert keys[1].startswith("sentence_count-") and keys[2].startswith("sentence_count-")
    assert len(set(keys)) == 3, "two parameterisations of one probe must be two rows"
    assert [r.passed for r in results] == [False, False, True]


def test_a_custom_probe_that_raises_becomes_a_failed_result(registry: ProbeRegistry) -> None:
    class ExplodingProbe(BaseProbe):
        probe_id = "test_exploding"

        def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
            raise KeyError("missing_field")

    suite = CanarySuite(name="x", prompts=[PROMPT], probes=[ExplodingProbe(), check_code_fence()])
    exploded, fence = suite.score(PROMPT, answer("```x```"))
    assert (exploded.passed, exploded.score, exploded.errored) == (False, 0.0, False)
    assert "KeyError" in exploded.details and "missing_field" in exploded.details
    assert exploded.probe_id == "test_exploding"
    assert fence.passed, "one failing probe must not stop the others"
