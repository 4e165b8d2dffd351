"""Code written for the published PromptCanary 0.2.2 package, run unchanged on this engine.

The scripts below use that package's public API the way its documentation and typical scripts do:
build a suite, run it with a custom provider (a ``BaseLLMProvider`` subclass), save a baseline,
compare, gate on ``has_drift``, read ``overall_score_delta``, catch validation errors. The files in
``data/promptcanary_022`` were written by the real 0.2.2 package (``produce.py`` there says how);
``facts.json`` holds what 0.2.2 itself concluded from them.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

import promptcanary
from promptcanary import (
    CanaryPrompt,
    CanaryRunResult,
    CanarySuite,
    DriftReport,
    DriftReporter,
    FileBaselineStore,
    LLMResponse,
    ProbeCategory,
    ProbeResult,
    ProviderConfig,
    Reporter,
    compare,
)
from promptcanary.core.probes import (
    ExpectedKeywordsProbe,
    JsonSchemaProbe,
    JsonValidityProbe,
    KeywordPresenceProbe,
    ResponseLengthProbe,
    get_probe,
    probe,
)
from promptcanary.providers import BaseLLMProvider

DATA = Path(__file__).parent / "data" / "promptcanary_022"
ROOT = Path(__file__).resolve().parents[2]
FACTS = json.loads((DATA / "facts.json").read_text(encoding="utf-8"))

# The top-level names of PromptCanary 0.2.2 (its promptcanary.__all__).
NAMES_022 = [
    "CanarySuite",
    "LiteLLMProvider",
    "FileBaselineStore",
    "compare",
    "Reporter",
    "DriftReporter",
    "CanaryPrompt",
    "CanaryRunResult",
    "BaselineSnapshot",
    "DriftReport",
    "DriftSeverity",
    "LLMResponse",
    "ProbeCategory",
    "ProbeComparison",
    "ProbeResult",
    "ProviderConfig",
    "ReportFormat",
    "BaseProbe",
    "probe",
    "get_probe",
    "get_probe_registry",
    "JsonValidityProbe",
    "JsonSchemaProbe",
    "JsonKeyOrderProbe",
    "ResponseLengthProbe",
    "MarkdownHeaderProbe",
    "KeywordPresenceProbe",
    "ExpectedKeywordsProbe",
    "StepByStepProbe",
    "VerbosityProbe",
    "ConfidenceLanguageProbe",
    "DirectAnswerProbe",
    "RefusalProbe",
    "SafetyLanguageProbe",
    "FactualConsistencyProbe",
    "SentimentProbe",
    "ToolCallPresenceProbe",
    "ToolCallNameProbe",
    "ToolCallArgsProbe",
    "ToolCallSchemaProbe",
]


class DictProvider(BaseLLMProvider):
    """A custom provider as 0.2.2's docs show one: subclass, call super().__init__, complete()."""

    def __init__(self, model_id: str, answers: dict[str, str]) -> None:
        super().__init__(ProviderConfig(model_id=model_id))
        self.answers = answers

    def complete(self, prompt: CanaryPrompt, *, system_prompt: str | None = None) -> LLMResponse:
        return LLMResponse(
            prompt_id=prompt.id,
            provider_model_id=self.config.model_id,
            content=self.answers[prompt.id],
        )


PROMPTS = [
    CanaryPrompt(id="capital", text="What is the capital of France?", expected_keywords=["Paris"]),
    CanaryPrompt(id="user", text="Return JSON with keys name and age for Ada, 36."),
]
GOOD = {"capital": "Paris.", "user": '{"name": "Ada", "age": 36}'}
DRIFTED = {"capital": "As an AI, I believe it is Lyon.", "user": "name: Ada, age: 36"}


def make_suite() -> CanarySuite:
    return CanarySuite(
        name="compat-script",
        prompts=PROMPTS,
        probes=[
            JsonValidityProbe(),
            JsonSchemaProbe(required_keys=["name", "age"]),
            KeywordPresenceProbe(forbidden_keywords=["As an AI"]),
            ExpectedKeywordsProbe(),
            ResponseLengthProbe(max_chars=500),
        ],
    )


def mean_score(run: CanaryRunResult) -> float:
    return sum(r.score for r in run.probe_results) / len(run.probe_results)


# ── a typical script: run, save, compare, gate ──────────────────────────────────────────────────


def test_the_quick_start_script_runs_saves_compares_and_gates(tmp_path: Path) -> None:
    suite = make_suite()
    baseline_run = suite.run(DictProvider("openai/gpt-4o", GOOD), show_progress=False)
    store = FileBaselineStore(tmp_path / "baselines")
    store.save(baseline_run, note="first")
    baseline = store.load_latest("compat-script", "openai/gpt-4o")
    assert baseline.note == "first"

    same = compare(baseline, suite.run(DictProvider("openai/gpt-4o", GOOD), show_progress=False))
    assert same.has_drift is False
    assert same.overall_score_delta == 0.0
    assert same.stable == same.comparisons

    current = suite.run(DictProvider("openai/gpt-4o", DRIFTED), show_progress=False)
    report = compare(baseline, current)
    assert report.has_drift is True  # `sys.exit(1 if report.has_drift else 0)`
    assert report.regressions
    # Every prompt and probe is compared on both sides, so the delta is the difference of means.
    expected_delta = mean_score(current) - mean_score(baseline_run)
    assert report.overall_score_delta == pytest.approx(expected_delta)
    assert report.overall_current_score - report.overall_baseline_score == pytest.approx(
        expected_delta
    )
    assert all(c.absolute_delta == abs(c.score_delta) for c in report.comparisons)
    assert report.generated_at == report.created_at
    assert report.report_id == compare(baseline, current).report_id  # deterministic


def test_reporters_write_markdown_and_json_and_refuse_html(tmp_path: Path) -> None:
    suite = make_suite()
    run = suite.run(DictProvider("openai/gpt-4o", GOOD), show_progress=False)
    drift = compare(
        FileBaselineStore(tmp_path).save(run),
        suite.run(DictProvider("openai/gpt-4o", DRIFTED), show_progress=False),
    )

    Reporter(run).to_markdown(tmp_path / "run.md")
    assert "compat\\-script" in (tmp_path / "run.md").read_text(encoding="utf-8")
    assert CanaryRunResult.model_validate_json(Reporter(run).to_json()) == run
    assert DriftReport.model_validate_json(DriftReporter(drift).to_json()).has_drift
    console = io.StringIO()
    DriftReporter(drift).print_terminal(console)
    assert "regression" in console.getvalue()
    with pytest.raises(NotImplementedError, match="to_markdown"):
        DriftReporter(drift).to_html(tmp_path / "drift.html")
    assert not (tmp_path / "drift.html").exists()


# ── validation rules ───────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("kwargs", "field", "rule"),
    [
        ({"model_id": ""}, "model_id", "must not be empty"),
        ({"model_id": "   "}, "model_id", "must not be empty"),
        ({"model_id": "m", "temperature": 2.01}, "temperature", "[0, 2]"),
        ({"model_id": "m", "temperature": -0.1}, "temperature", "[0, 2]"),
        ({"model_id": "m", "max_tokens": 0}, "max_tokens", ">= 1"),
        ({"model_id": "m", "max_tokens": -5}, "max_tokens", ">= 1"),
    ],
)
def test_provider_config_refuses_what_022_refused_naming_field_and_range(
    kwargs: dict[str, object], field: str, rule: str
) -> None:
    with pytest.raises(ValidationError) as info:
        ProviderConfig(**kwargs)  # type: ignore[arg-type]
    message = str(info.value)
    assert field in message and rule in message


def test_provider_config_accepts_the_edges_and_strips_the_model_id() -> None:
    config = ProviderConfig(model_id="  openai/gpt-4o  ", temperature=2.0, max_tokens=1)
    assert config.model_id == "openai/gpt-4o"
    assert ProviderConfig(model_id="m", temperature=0.0).temperature == 0.0


def test_run_overrides_are_validated_like_the_config() -> None:
    with pytest.raises(ValidationError, match="temperature"):
        make_suite().run(DictProvider("m", GOOD), temperature=5.0, show_progress=False)


@pytest.mark.parametrize("text", ["", "  \n"])
def test_empty_prompt_text_is_refused(text: str) -> None:
    with pytest.raises(ValidationError, match="text must not be empty"):
        CanaryPrompt(text=text)


# ── probes: results scripts read ─────────────────────────────────────────────────────────────


def _evaluate(probe_obj: object, content: str, prompt: CanaryPrompt = PROMPTS[0]) -> ProbeResult:
    response = LLMResponse(prompt_id=prompt.id, provider_model_id="m", content=content)
    return probe_obj(prompt, response)  # type: ignore[operator]


def test_keyword_presence_without_lists_passes_as_skipped() -> None:
    result = _evaluate(KeywordPresenceProbe(), "whatever")
    assert (result.passed, result.score) == (True, 1.0)
    assert "skipped" in result.details


def test_response_length_reports_char_count() -> None:
    content = "Paris is the capital of France."
    assert _evaluate(ResponseLengthProbe(), content).metadata["char_count"] == len(content)


def test_details_use_the_words_scripts_match() -> None:
    assert "parse error" in _evaluate(JsonValidityProbe(), "{not json").details
    no_keywords = CanaryPrompt(id="bare", text="Hi")
    assert "skipped" in _evaluate(ExpectedKeywordsProbe(), "Hello", no_keywords).details

    @probe("compat_022_exploding", name="Exploding")
    def exploding(prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        raise RuntimeError("boom")

    suite = CanarySuite(name="explode", prompts=PROMPTS[:1], probes=[exploding()])
    (result,) = suite.run(DictProvider("m", GOOD), show_progress=False).probe_results
    assert not result.passed
    assert "exception" in result.details and "boom" in result.details


def test_registry_behaves_as_in_022() -> None:
    with pytest.raises(KeyError):
        get_probe("no_such_probe_022")
    assert get_probe("json_validity") is JsonValidityProbe

    class StricterJson(JsonValidityProbe):  # a variant that keeps the built-in's id
        pass

    assert get_probe("json_validity") is JsonValidityProbe
    assert _evaluate(StricterJson(), "{}").probe_id == "json_validity"


def test_the_022_import_paths_resolve() -> None:
    for name in NAMES_022:
        assert getattr(promptcanary, name).__module__.startswith("promptcanary.")
    from promptcanary.core import CanarySuite as CoreSuite
    from promptcanary.core.probes.safety import FactualConsistencyProbe, SentimentProbe
    from promptcanary.core.reporter import score_to_emoji
    from promptcanary.providers import LiteLLMProvider, ProviderError
    from promptcanary.storage import FileBaselineStore as Store

    assert CoreSuite is CanarySuite and Store is FileBaselineStore
    assert FactualConsistencyProbe.category is ProbeCategory.FACTUAL
    assert SentimentProbe.probe_id == "sentiment"
    assert issubclass(LiteLLMProvider, BaseLLMProvider) and issubclass(ProviderError, Exception)
    assert score_to_emoji(1.0) != score_to_emoji(0.0)


# ── files written by the real 0.2.2 ─────────────────────────────────────────────────────────


@pytest.fixture
def store(tmp_path: Path) -> FileBaselineStore:
    shutil.copytree(DATA / "baselines", tmp_path / "baselines")
    return FileBaselineStore(tmp_path / "baselines")


def test_022_baselines_load_by_suite_and_model(store: FileBaselineStore) -> None:
    snapshot = store.load_latest("compat-suite", "fake/table-model")
    assert snapshot.note == "made by promptcanary 0.2.2"
    assert snapshot.run_result.overall_score == pytest.approx(FACTS["baseline_overall_score"])
    # 0.2.2 kept case and dots in its file names; those files are found too.
    legacy = store.load_latest("Legacy Suite", "openai/gpt-4.1-mini")
    assert (legacy.suite_name, legacy.provider.model_id) == ("Legacy Suite", "openai/gpt-4.1-mini")
    listed = {(e["suite_name"], e["model_id"]) for e in store.list_baselines()}
    assert listed == {("compat-suite", "fake/table-model"), ("Legacy Suite", "openai/gpt-4.1-mini")}


def test_022_files_compare_to_the_verdict_022_reached(store: FileBaselineStore) -> None:
    raw = json.loads((DATA / "current_run.json").read_text(encoding="utf-8"))
    current = CanaryRunResult.model_validate(raw)
    # 0.2.2 called the response time "timestamp"; it is kept, not replaced by the load time.
    first = current.llm_responses[0]
    assert first.timestamp.isoformat().startswith(raw["llm_responses"][0]["timestamp"][:19])

    report = compare(store.load_latest("compat-suite", "fake/table-model"), current)
    assert report.has_drift is FACTS["has_drift"]
    assert report.overall_score_delta == pytest.approx(FACTS["overall_score_delta"])
    assert report.overall_baseline_score == pytest.approx(FACTS["overall_baseline_score"])
    assert sorted([c.probe_id, c.prompt_id] for c in report.regressions) == FACTS["regressions"]


def test_022_drift_report_file_loads() -> None:
    raw = json.loads((DATA / "drift.json").read_text(encoding="utf-8"))
    report = DriftReport.model_validate(raw)
    assert report.has_drift is FACTS["has_drift"]
    assert report.overall_score_delta == pytest.approx(FACTS["overall_score_delta"])
    assert report.generated_at.isoformat().startswith(raw["generated_at"][:19])


# ── the command line with 0.2.2's flags ───────────────────────────────────────────────────────


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "promptcanary", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=60,
    )


def test_cli_compare_and_report_with_022_flags(store: FileBaselineStore, tmp_path: Path) -> None:
    (baseline_file,) = store.directory.glob("compat-suite__*.json")
    current = str(DATA / "current_run.json")
    gated = cli(
        "compare", "-b", str(baseline_file), "--current", current, "--fail-on-drift", cwd=tmp_path
    )
    assert gated.returncode == (1 if FACTS["has_drift"] else 0), gated.stderr

    listed = cli("baselines", "--dir", str(store.directory), "-s", "Legacy Suite", cwd=tmp_path)
    assert listed.returncode == 0 and "openai/gpt-4.1-mini" in listed.stdout
    assert "fake/table-model" not in listed.stdout

    out = tmp_path / "drift.out.json"
    rendered = cli("report", str(DATA / "drift.json"), "-f", "json", "-o", str(out), cwd=tmp_path)
    assert rendered.returncode == 0, rendered.stderr
    assert (
        DriftReport.model_validate_json(out.read_text(encoding="utf-8")).has_drift
        is FACTS["has_drift"]
    )
    run_md = cli("report", current, "--format", "markdown", cwd=tmp_path)
    assert run_md.returncode == 0 and "compat\\-suite" in run_md.stdout

    version = cli("version", cwd=tmp_path)
    assert version.returncode == 0 and promptcanary.__version__ in version.stdout


@pytest.mark.parametrize(
    ("args", "pointer"),
    [
        (
            ["run", "-c", "canary.yaml", "-p", "openai/gpt-4o", "--output-html", "r.html"],
            "--output-md",
        ),
        (["compare", "-p", "openai/gpt-4o"], "--current run.json"),
        (["report", "drift.json", "--open"], "--format html"),
        (["run", "-t", "2.5"], "--temperature must be a number ≥ 0 and ≤ 2"),
    ],
)
def test_cli_022_flags_without_a_counterpart_say_what_to_use(
    args: list[str], pointer: str, tmp_path: Path
) -> None:
    result = cli(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert pointer in result.stderr
    assert "Traceback" not in result.stderr


# ── where this engine deliberately differs (see the README) ────────────────────────────────────


def test_prompt_ids_are_deterministic_not_random() -> None:
    assert CanaryPrompt(text="Say hello.").id == CanaryPrompt(text="Say hello.").id
    assert FACTS["random_prompt_id"] != CanaryPrompt(text="Say hello.").id


def test_two_probes_of_one_type_keep_separate_results() -> None:
    suite = CanarySuite(
        name="two-keyword-probes",
        prompts=PROMPTS[:1],
        probes=[
            KeywordPresenceProbe(required_keywords=["Paris"]),
            KeywordPresenceProbe(forbidden_keywords=["Lyon"]),
        ],
    )
    run = suite.run(DictProvider("m", {"capital": "Lyon"}), show_progress=False)
    keys = {r.probe_key for r in run.probe_results}
    assert len(keys) == 2 and {r.probe_id for r in run.probe_results} == {"keyword_presence"}
