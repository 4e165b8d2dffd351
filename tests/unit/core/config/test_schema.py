"""The suite YAML format: loading, line numbers, identities, rendering back, and every error kind."""

from __future__ import annotations

import time
from pathlib import Path
from textwrap import dedent

import pytest

from promptcanary.core.config.schema import (
    MAX_FILE_BYTES,
    PROMPT_KEYS,
    SUITE_KEYS,
    SuiteConfigError,
    load_suite,
    suite_from_dict,
    suite_from_text,
    suite_to_yaml,
    valid_keys,
)
from promptcanary.core.models import CanaryPrompt, LLMResponse, ProbeResult, default_prompt_id
from promptcanary.core.probes import BaseProbe, get_probe_registry
from promptcanary.core.probes.llm_judge import LLMJudgeProbe
from promptcanary.core.spec import ModelSpec, RunDefaults, SuiteSpec
from promptcanary.core.suite import CanarySuite
from tests.suite_texts import SPEC_YAML, yaml_bomb


class _RangeProbe(BaseProbe):
    """A custom probe (registered like a user's) whose constructor validates its value."""

    probe_id = "config_test_range"

    def __init__(self, threshold: float = 0.5, label: str = "") -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be between 0 and 1, got {threshold!r}")
        self.threshold = threshold
        self.label = label

    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        return self._make_result(prompt.id, passed=True, score=1.0)


def write(tmp_path: Path, text: str, name: str = "canary.yaml") -> Path:
    path = tmp_path / name
    path.write_text(dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def load_error(tmp_path: Path, text: str) -> SuiteConfigError:
    path = write(tmp_path, text)
    with pytest.raises(SuiteConfigError) as info:
        load_suite(path)
    assert info.value.file == str(path)
    return info.value


# A leading blank line: the line numbers asserted below count it.
SPEC_EXAMPLE = "\n" + SPEC_YAML

FULL = """
name: support-bot
description: Everything the format offers.
tags: [prod]
system_prompt: You are a support bot.
models:
  - openai/gpt-4o-mini
  - model: openai/local
    api_base: http://127.0.0.1:9999/v1
    temperature: 0.2
    max_tokens: 300
    seed: 7
defaults:
  temperature: 0.0
  max_tokens: 512
  seed: 42
  samples: 3
probes:
  - type: json_validity
  - type: response_length
    id: short-answer
    max_chars: 400
    apply_to:
      tags: [short]
prompts:
  - id: refund
    text: Can I get a refund?
    tags: [short]
    metadata: {owner: billing, added: 2024-05-01}
  - text: Look up order 42.
    system_prompt: Use the tools.
    tools:
      - type: function
        function:
          name: lookup_order
          parameters: {type: object, properties: {order_id: {type: string}}}
    response_format: {type: json_object}
    probes:
      - type: tool_call_name
        expected_name: lookup_order
      - type: keyword_presence
        required_keywords: [order]
      - type: keyword_presence
        required_keywords: [shipped]
"""


# ── loading ──────────────────────────────────────────────────────────────────


def test_spec_example_loads_with_its_probes_and_lines(tmp_path: Path) -> None:
    path = write(tmp_path, SPEC_EXAMPLE)
    suite = CanarySuite.from_yaml(path)

    assert suite.name == "my-suite"
    assert suite.description == "Tests production agent behaviour."
    [prompt] = suite.prompts
    assert prompt.text == "What is the capital of France?"
    assert prompt.expected_keywords == ["Paris"]
    assert prompt.description == "Basic geography canary"
    assert prompt.id == default_prompt_id("What is the capital of France?")
    assert [b.probe.probe_id for b in suite.bindings] == [
        "json_validity",
        "step_by_step",
        "keyword_presence",
    ]
    assert suite.bindings[1].probe.params()["expect_steps"] is False
    assert suite.bindings[2].probe.params()["required_keywords"] == ["Paris"]
    assert [b.line for b in suite.bindings] == [4, 5, 7]
    assert suite.prompt_lines == {prompt.id: 10}
    assert suite.source_file == str(path)
    assert [p.probe_id for p in suite.probes] == [
        "json_validity",
        "step_by_step",
        "keyword_presence",
    ]


def test_every_extension_key_is_read(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path, FULL))

    assert suite.tags == ["prod"]
    assert suite.default_system_prompt == "You are a support bot."
    assert suite.models == [
        ModelSpec("openai/gpt-4o-mini"),
        ModelSpec(
            "openai/local",
            {
                "api_base": "http://127.0.0.1:9999/v1",
                "temperature": 0.2,
                "max_tokens": 300,
                "seed": 7,
            },
        ),
    ]
    assert suite.defaults == RunDefaults(temperature=0.0, max_tokens=512, seed=42, samples=3)
    refund, lookup = suite.prompts
    assert refund.id == "refund"
    assert refund.tags == ["short"]
    assert refund.metadata == {"owner": "billing", "added": "2024-05-01"}
    assert lookup.id == default_prompt_id("Look up order 42.", "Use the tools.")
    assert lookup.system_prompt == "Use the tools."
    assert suite.system_prompt_for(refund) == "You are a support bot."
    assert lookup.tools is not None and lookup.tools[0]["function"]["name"] == "lookup_order"
    assert lookup.response_format == {"type": "json_object"}


def test_bindings_apply_to_the_right_prompts(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path, FULL))
    refund, lookup = suite.prompts

    refund_keys = [b.key for b in suite.bindings_for(refund)]
    lookup_keys = [b.key for b in suite.bindings_for(lookup)]

    assert refund_keys == ["json_validity", "short-answer"]  # tagged `short`: gets the length probe
    assert lookup_keys[0] == "json_validity"
    assert [b.probe.probe_id for b in suite.bindings_for(lookup)[1:]] == [
        "tool_call_name",
        "keyword_presence",
        "keyword_presence",
    ]
    assert all(b.prompt_id == lookup.id for b in suite.bindings_for(lookup)[1:])
    assert suite.bindings[1].apply_to_tags == ("short",)
    # suite.probes (the spec's attribute) holds only probes that run on every response
    assert [p.probe_id for p in suite.probes] == ["json_validity"]


def test_line_numbers_of_prompts_and_probe_entries(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path, FULL))
    lookup = suite.prompts[1]

    assert suite.prompt_lines == {"refund": 25, lookup.id: 29}
    lines = {(b.prompt_id, b.key): b.line for b in suite.bindings}
    assert lines[(None, "json_validity")] == 18
    assert lines[(None, "short-answer")] == 19
    per_prompt = [b.line for b in suite.bindings if b.prompt_id == lookup.id]
    assert per_prompt == [38, 40, 42]
    assert suite.line_for(lookup.id, suite.bindings[3].key) == 40
    assert suite.line_for("refund", "short-answer") == 25  # suite-wide entry: points at the prompt


def test_loading_twice_gives_the_same_identities(tmp_path: Path) -> None:
    path = write(tmp_path, FULL)
    first, second = load_suite(path), load_suite(path)

    assert [p.id for p in first.prompts] == [p.id for p in second.prompts]
    assert [b.key for b in first.bindings] == [b.key for b in second.bindings]
    assert first.suite_hash == second.suite_hash
    assert first.probe_config_hash == second.probe_config_hash


def test_two_keyword_probes_on_one_prompt_have_two_keys(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path, FULL))
    keys = [b.key for b in suite.bindings if b.probe.probe_id == "keyword_presence"]

    assert len(keys) == 2
    assert keys[0] != keys[1]
    assert all(k.startswith("keyword_presence-") for k in keys)


def test_editing_a_probe_parameter_changes_its_key_and_the_config_hash(tmp_path: Path) -> None:
    before = load_suite(write(tmp_path, SPEC_EXAMPLE, "a.yaml"))
    after = load_suite(write(tmp_path, SPEC_EXAMPLE.replace('["Paris"]', '["Lyon"]', 1), "b.yaml"))

    assert before.bindings[2].key != after.bindings[2].key
    assert before.probe_config_hash != after.probe_config_hash
    assert [p.id for p in before.prompts] == [p.id for p in after.prompts]


def test_custom_registered_probe_type_loads() -> None:
    suite = suite_from_text(
        "name: s\nprobes: [{type: config_test_range, threshold: 0.25}]\nprompts: [{text: hi}]\n",
        suite_class=CanarySuite,
    )
    assert isinstance(suite.bindings[0].probe, _RangeProbe)
    assert suite.bindings[0].probe.params() == {"threshold": 0.25, "label": ""}


def test_anchors_are_expanded_into_each_use() -> None:
    text = dedent(
        """
        name: s
        tags: &shared [alpha, beta]
        probes: [{type: json_validity, apply_to: {tags: *shared}}]
        prompts: [{text: hi, tags: *shared}]
        """
    )
    suite = suite_from_text(text, suite_class=CanarySuite)
    assert suite.tags == ["alpha", "beta"]
    assert suite.prompts[0].tags == ["alpha", "beta"]
    assert suite.bindings[0].apply_to_tags == ("alpha", "beta")


def test_merge_key_explicit_values_win() -> None:
    text = dedent(
        """
        name: s
        prompts:
          - &base {text: hi, description: base, tags: [a]}
          - <<: *base
            id: second
            description: overridden
        probes: [{type: json_validity}]
        """
    )
    suite = suite_from_text(text, suite_class=CanarySuite)
    first, second = suite.prompts
    assert second.id == "second"
    assert second.text == "hi"
    assert second.tags == ["a"]
    assert second.description == "overridden"
    assert first.description == "base"


# ── rendering back ───────────────────────────────────────────────────────────


@pytest.mark.parametrize("text", [SPEC_EXAMPLE, FULL], ids=["spec", "full"])
def test_rendered_yaml_loads_into_an_equivalent_suite(tmp_path: Path, text: str) -> None:
    original = load_suite(write(tmp_path, text))
    rendered = suite_to_yaml(original)
    reloaded = load_suite(write(tmp_path, rendered, "rendered.yaml"))

    assert [p.id for p in reloaded.prompts] == [p.id for p in original.prompts]
    assert [(b.prompt_id, b.key) for b in reloaded.bindings] == [
        (b.prompt_id, b.key) for b in original.bindings
    ]
    assert reloaded.suite_hash == original.suite_hash
    assert reloaded.probe_config_hash == original.probe_config_hash
    assert reloaded.models == original.models
    assert reloaded.defaults == original.defaults


JUDGED = """
name: judged
judge: {model: openai/judge, api_base: "http://127.0.0.1:9/v1", judge_samples: 3,
        max_requests: 40, tolerance: 0.25, check_votes: 4, structured: json_object}
judge_checks:
  - {prompt: Greet., answer: Hello!, expected: pass, rubric: Polite.}
  - {prompt: Greet., answer: Go away., expected: fail, rubric: Polite., context: A shop.}
probes:
  - {type: llm_judge, rubric: Correct.}
  - {type: llm_judge, rubric: Kind., id: own, judge_model: openai/other, api_base: null,
     judge_samples: 1}
prompts:
  - text: Say hi
    probes:
      - {type: llm_judge, rubric: Short., mode: pairwise, judge_samples: 5}
"""


def _judge_state(suite: SuiteSpec) -> list[tuple[object, ...]]:
    return [
        (b.key, b.probe.judge_model, b.probe.api_base, b.probe.judge_samples, b.probe.params())
        for b in suite.bindings
        if isinstance(b.probe, LLMJudgeProbe)
    ]


def test_a_judged_suite_renders_and_reloads_with_its_judge(tmp_path: Path) -> None:
    original = load_suite(write(tmp_path, JUDGED))
    reloaded = load_suite(write(tmp_path, suite_to_yaml(original), "rendered.yaml"))

    assert reloaded.judge == original.judge  # the block and its canaries
    assert original.judge is not None and len(original.judge.checks) == 2
    # Each probe keeps its own judge, or the block's: the keys params() leaves out survive.
    assert _judge_state(reloaded) == _judge_state(original)
    assert [s[1:4] for s in _judge_state(original)] == [
        ("openai/judge", "http://127.0.0.1:9/v1", 3),
        ("openai/other", None, 1),
        ("openai/judge", "http://127.0.0.1:9/v1", 5),
    ]
    assert reloaded.probe_config_hash == original.probe_config_hash


def test_a_judge_probe_without_a_judge_block_keeps_its_model(tmp_path: Path) -> None:
    text = "name: j\nprobes:\n  - {type: llm_judge, rubric: Ok., judge_model: a/b}\nprompts: [{text: hi}]\n"
    original = load_suite(write(tmp_path, text))
    reloaded = load_suite(write(tmp_path, suite_to_yaml(original), "rendered.yaml"))

    assert reloaded.judge is None
    assert _judge_state(reloaded) == _judge_state(original)


def test_a_suite_built_in_python_renders_and_reloads() -> None:
    prompts = [
        CanaryPrompt(id="greet", text="Say hi\non two lines", system_prompt="Be terse."),
        CanaryPrompt(text="List tools", tools=[], metadata={"n": 1}),
    ]
    suite = CanarySuite("py", prompts, [_RangeProbe(threshold=0.75, label="x")], tags=["t"])

    reloaded = suite_from_text(suite.to_yaml_template(), suite_class=CanarySuite)

    assert [p.id for p in reloaded.prompts] == ["greet", prompts[1].id]
    assert [b.key for b in reloaded.bindings] == [b.key for b in suite.bindings]
    assert reloaded.suite_hash == suite.suite_hash
    assert reloaded.bindings[0].probe.params() == {"threshold": 0.75, "label": "x"}


def test_template_has_the_spec_keys() -> None:
    suite = suite_from_text(SPEC_EXAMPLE, suite_class=CanarySuite)
    template = suite.to_yaml_template()
    lines = template.splitlines()
    for key in ("name:", "description:", "tags:", "probes:", "prompts:"):
        assert key in lines or any(line.startswith(key) for line in lines), key
    assert "- type: keyword_presence" in template


def test_valid_keys_lists_every_part() -> None:
    keys = valid_keys()
    assert keys["suite"] == SUITE_KEYS
    assert "prompts" in SUITE_KEYS and "models" in SUITE_KEYS
    assert {"id", "text", "tools", "response_format", "probes"} <= set(PROMPT_KEYS)
    assert keys["probe entry"] == ("type", "id", "apply_to")


# ── errors: one test per kind, with the exact position ───────────────────────


def test_error_renders_file_line_column_and_hint() -> None:
    error = SuiteConfigError("boom", file="canary.yaml", line=12, column=5, hint="fix it")
    assert str(error) == "canary.yaml:12:5: boom (fix it)"
    assert isinstance(error, ValueError)
    assert str(SuiteConfigError("boom", file="<dict>")) == "<dict>: boom"


def test_unknown_top_level_key_suggests_the_nearest(tmp_path: Path) -> None:
    error = load_error(tmp_path, SPEC_EXAMPLE.replace("prompts:", "promtps:"))
    assert (error.line, error.column) == (9, 1)
    assert error.message == "unknown key 'promtps' in the suite; did you mean 'prompts'?"
    assert error.hint is not None and "valid keys: name, description" in error.hint
    assert str(error).startswith(f"{error.file}:9:1: unknown key 'promtps'")


def test_unknown_prompt_key(tmp_path: Path) -> None:
    error = load_error(tmp_path, SPEC_EXAMPLE.replace('description: "Basic', 'descripton: "Basic'))
    assert (error.line, error.column) == (12, 5)
    assert error.message == "unknown key 'descripton' in prompt 1; did you mean 'description'?"


def test_unknown_probe_type_lists_the_valid_ones(tmp_path: Path) -> None:
    error = load_error(tmp_path, SPEC_EXAMPLE.replace("type: json_validity", "type: json_valid"))
    assert (error.line, error.column) == (4, 5)
    assert error.message.startswith(
        "unknown probe type 'json_valid'; did you mean 'json_validity'? Valid types: "
    )
    listed = error.message.split("Valid types: ")[1].split(", ")
    assert listed == sorted(get_probe_registry())


def test_bad_probe_parameter_value(tmp_path: Path) -> None:
    text = SPEC_EXAMPLE.replace(
        "  - type: json_validity\n",
        "  - type: json_validity\n  - type: config_test_range\n    threshold: 7\n",
    )
    error = load_error(tmp_path, text)
    assert (error.line, error.column) == (5, 5)
    assert error.message == (
        "bad parameter 'threshold' for probe 'config_test_range': "
        "threshold must be between 0 and 1, got 7"
    )


def test_unknown_probe_parameter_lists_the_valid_ones(tmp_path: Path) -> None:
    error = load_error(tmp_path, SPEC_EXAMPLE.replace("required_keywords:", "required_keyword:"))
    assert (error.line, error.column) == (8, 5)
    assert error.message == (
        "unknown parameter 'required_keyword' for probe 'keyword_presence'; "
        "did you mean 'required_keywords'?"
    )
    assert error.hint == ("valid parameters: required_keywords, forbidden_keywords, case_sensitive")


def test_parameter_on_a_probe_without_parameters(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        SPEC_EXAMPLE.replace("- type: json_validity", "- {type: json_validity, strict: true}"),
    )
    assert (error.line, error.column) == (4, 27)
    assert error.hint == "valid parameters: none: it takes no parameters"


def test_duplicate_prompt_id(tmp_path: Path) -> None:
    text = SPEC_EXAMPLE + "  - id: geo\n    text: again\n  - id: geo\n    text: and again\n"
    error = load_error(tmp_path, text)
    assert (error.line, error.column) == (15, 5)
    assert error.message == "duplicate prompt id 'geo' (first defined at line 13)"


def test_duplicate_probe_key(tmp_path: Path) -> None:
    text = SPEC_EXAMPLE + "    probes:\n      - type: json_validity\n"
    error = load_error(tmp_path, text)
    assert (error.line, error.column) == (14, 9)
    assert error.message == (
        "duplicate probe key 'json_validity' on prompt "
        f"'{default_prompt_id('What is the capital of France?')}' (lines 4 and 14): "
        "give one entry an explicit id:"
    )


def test_explicit_id_resolves_a_duplicate_probe_key(tmp_path: Path) -> None:
    text = SPEC_EXAMPLE + "    probes:\n      - type: json_validity\n        id: strict-json\n"
    suite = load_suite(write(tmp_path, text))
    assert [b.key for b in suite.bindings_for(suite.prompts[0])][-1] == "strict-json"


def test_empty_suite_without_prompts(tmp_path: Path) -> None:
    error = load_error(tmp_path, "name: s\nprobes: [{type: json_validity}]\nprompts: []\n")
    assert (error.line, error.column) == (3, 1)
    assert error.message == "empty suite: no prompts"


def test_empty_suite_without_probes(tmp_path: Path) -> None:
    error = load_error(tmp_path, "name: s\nprompts:\n  - text: hi\n")
    assert error.line == 1
    assert error.message == "empty suite: no probes in the suite or any prompt"


def test_empty_file(tmp_path: Path) -> None:
    error = load_error(tmp_path, "# nothing yet\n")
    assert error.message == "empty suite: the file has no content"


def test_wrong_value_type(tmp_path: Path) -> None:
    error = load_error(tmp_path, SPEC_EXAMPLE + "defaults:\n  temperature: hot\n")
    assert (error.line, error.column) == (14, 16)
    assert error.message == "'temperature' must be a number, got 'hot'"


def test_wrong_type_in_a_list(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        SPEC_EXAMPLE.replace('expected_keywords: ["Paris"]', 'expected_keywords: ["Paris", 3]'),
    )
    assert (error.line, error.column) == (11, 34)
    assert error.message == "'expected_keywords' item 2 must be a string, got 3"
    assert error.hint == 'quote it: "3"'


def test_top_level_must_be_a_mapping(tmp_path: Path) -> None:
    error = load_error(tmp_path, "- text: hi\n")
    assert (error.line, error.column) == (1, 1)
    assert error.message.startswith("the top level of a suite must be a mapping")
    assert error.message.endswith("got a list")


def test_prompt_without_text(tmp_path: Path) -> None:
    error = load_error(tmp_path, SPEC_EXAMPLE + "  - description: no text here\n")
    assert (error.line, error.column) == (13, 5)
    assert error.message == "missing required key 'text' (the prompt sent to the model) in prompt 2"


def test_duplicate_mapping_key(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        SPEC_EXAMPLE.replace(
            "    expect_steps: false\n", "    expect_steps: false\n    expect_steps: true\n"
        ),
    )
    assert (error.line, error.column) == (7, 5)
    assert error.message == "duplicate key 'expect_steps' (first at line 6, again at line 7)"


def test_tab_indented_file(tmp_path: Path) -> None:
    error = load_error(tmp_path, "name: s\nprompts:\n\t- text: hi\n")
    assert (error.line, error.column) == (3, 1)
    assert error.message.startswith("invalid YAML:")
    assert error.hint == "indent with spaces, not tabs"


def test_syntax_error_position(tmp_path: Path) -> None:
    error = load_error(tmp_path, "name: s\nprompts: [{text: hi}\nprobes: []\n")
    assert error.line == 3
    assert error.message.startswith("invalid YAML:")
    # The bracket left open is on line 2: the message says so, not only where parsing gave up.
    assert "started at line 2, column 10" in error.message


def test_billion_laughs_fails_fast(tmp_path: Path) -> None:
    path = write(tmp_path, yaml_bomb(9))

    started = time.monotonic()
    with pytest.raises(SuiteConfigError) as info:
        load_suite(path)
    assert time.monotonic() - started < 5
    assert "YAML bomb" in info.value.message
    assert info.value.line is not None


def test_recursive_alias(tmp_path: Path) -> None:
    error = load_error(tmp_path, "name: &n [*n]\n")
    assert (error.line, error.column) == (1, 7)  # the anchored node that contains itself
    assert error.message == "recursive alias: a node contains itself"


def test_deep_nesting_is_refused(tmp_path: Path) -> None:
    error = load_error(tmp_path, "name: " + "[" * 5000 + "]" * 5000 + "\n")
    assert error.line == 1
    assert "nested more than" in error.message


def test_oversized_file_is_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    path.write_bytes(b"name: [" + b"x, " * (MAX_FILE_BYTES // 3) + b"]\n")
    size = path.stat().st_size
    with pytest.raises(SuiteConfigError) as info:
        load_suite(path)
    assert info.value.file == str(path)
    assert info.value.message == (
        f"suite file is too large: {size:,} bytes, the limit is {MAX_FILE_BYTES:,} bytes"
    )


def test_missing_file_is_a_file_not_found_error(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    with pytest.raises(FileNotFoundError) as info:
        load_suite(path)
    assert isinstance(info.value, SuiteConfigError)
    assert str(path) in str(info.value)


def test_unsupported_tag_is_refused(tmp_path: Path) -> None:
    error = load_error(tmp_path, "name: !!python/object:os.system ls\n")
    assert (error.line, error.column) == (1, 7)
    assert "python/object" in error.message


def test_apply_to_on_a_prompt_probe(tmp_path: Path) -> None:
    text = (
        SPEC_EXAMPLE
        + "    probes:\n      - type: json_validity\n        id: x\n        apply_to: {tags: [a]}\n"
    )
    error = load_error(tmp_path, text)
    assert (error.line, error.column) == (16, 9)
    assert error.message == "'apply_to' is only allowed on suite-wide probes"


def test_apply_to_needs_tags(tmp_path: Path) -> None:
    text = SPEC_EXAMPLE.replace(
        "  - type: json_validity\n", "  - type: json_validity\n    apply_to: {tag: [a]}\n"
    )
    error = load_error(tmp_path, text)
    assert (error.line, error.column) == (5, 16)
    assert error.message == (
        "unknown key 'tag' in 'apply_to' of probe entry 1; did you mean 'tags'?"
    )


def test_bad_model_entry(tmp_path: Path) -> None:
    error = load_error(tmp_path, SPEC_EXAMPLE + "models:\n  - api_base: http://x\n")
    assert (error.line, error.column) == (14, 5)
    assert error.message.startswith("model entry 1 must be a LiteLLM model id or a mapping")


def test_dict_source_has_no_line() -> None:
    with pytest.raises(SuiteConfigError) as info:
        suite_from_dict({"name": "s", "prompts": [{"text": "hi"}], "probes": [{"type": "zzz"}]})
    assert info.value.line is None
    assert str(info.value).startswith("<dict>: unknown probe type 'zzz'. Valid types: ")
    with pytest.raises(SuiteConfigError, match="top level of a suite must be a mapping"):
        suite_from_dict(["not", "a", "mapping"])


def test_defaults_samples_above_the_cap_name_the_field_and_the_cap(tmp_path: Path) -> None:
    error = load_error(tmp_path, SPEC_EXAMPLE + "defaults:\n  samples: 1000000\n")
    assert error.line == 14
    assert "≥ 1 and ≤ 1000, got 1000000" in error.message


def test_unknown_probe_type_points_to_probe_module_and_probe_modules(tmp_path: Path) -> None:
    error = load_error(tmp_path, SPEC_EXAMPLE.replace("type: json_validity", "type: my_probe"))
    assert "--probe-module" in str(error)
    assert "probe-modules" in str(error)


def test_a_misspelt_text_key_gets_did_you_mean_text_with_its_line(tmp_path: Path) -> None:
    # The prompt's `id:` comes first: the missing 'text' would be reported on the id's line.
    error = load_error(
        tmp_path,
        """
        name: typo
        prompts:
          - id: greet
            txt: Say hello.
            probes: [{type: json_validity}]
        """,
    )
    assert (error.line, error.column) == (4, 5)
    assert error.message == "unknown key 'txt' in prompt 1; did you mean 'text'?"


def test_a_missing_text_without_a_misspelling_is_still_named(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        """
        name: typo
        prompts:
          - id: greet
            probes: [{type: json_validity}]
        """,
    )
    assert error.message.startswith("missing required key 'text'")


def test_max_tokens_above_the_cap_is_refused_in_defaults_naming_the_field(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        """
        name: big
        defaults: {max_tokens: 99999999999999999999999}
        prompts:
          - {id: a, text: Hi., probes: [{type: json_validity}]}
        """,
    )
    assert error.line == 2
    assert error.message == "'max_tokens' must be at most 1000000, got 99999999999999999999999"
