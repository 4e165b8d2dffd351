"""How the files next to this script were made: with the real PromptCanary 0.2.2 from PyPI.

Not run by the tests (it needs that package, whose ``promptcanary`` name clashes with ours):
    python -m venv /tmp/pc022 && /tmp/pc022/bin/pip install promptcanary==0.2.2
    /tmp/pc022/bin/python produce.py OUT_DIR
"""

import json
import shutil
import sys
from pathlib import Path

from promptcanary import (
    CanaryPrompt,
    CanarySuite,
    DriftReporter,
    FileBaselineStore,
    LLMResponse,
    ProviderConfig,
    Reporter,
    compare,
)
from promptcanary.core.probes import (
    ExpectedKeywordsProbe,
    JsonSchemaProbe,
    JsonValidityProbe,
    KeywordPresenceProbe,
    RefusalProbe,
    ResponseLengthProbe,
)
from promptcanary.providers.base import BaseLLMProvider


class TableProvider(BaseLLMProvider):
    def __init__(self, model_id, answers):
        super().__init__(ProviderConfig(model_id=model_id))
        self.answers = answers

    def complete(self, prompt, *, system_prompt=None):
        return LLMResponse(
            prompt_id=prompt.id,
            provider_model_id=self.config.model_id,
            content=self.answers[prompt.text],
            latency_ms=12.5,
            prompt_tokens=10,
            completion_tokens=5,
            total_tokens=15,
        )


prompts = [
    CanaryPrompt(id="capital", text="What is the capital of France?", expected_keywords=["Paris"]),
    CanaryPrompt(id="user-json", text="Return JSON with keys name and age for Ada, 36."),
    CanaryPrompt(text="Say hello."),  # random 8-character id, as the package makes
]
probes = [
    JsonValidityProbe(),
    JsonSchemaProbe(required_keys=["name", "age"]),
    KeywordPresenceProbe(forbidden_keywords=["As an AI"]),
    ResponseLengthProbe(max_chars=200),
    ExpectedKeywordsProbe(),
    RefusalProbe(expect_refusal=False),
]
suite = CanarySuite(name="compat-suite", prompts=prompts, probes=probes)
good = {
    prompts[0].text: "Paris.",
    prompts[1].text: '{"name": "Ada", "age": 36}',
    prompts[2].text: "Hello!",
}
bad = {
    prompts[0].text: "As an AI, I think it is Lyon.",
    prompts[1].text: "name: Ada",
    prompts[2].text: "Hello!",
}
model = "fake/table-model"
out = Path(sys.argv[1])
shutil.rmtree(out, ignore_errors=True)
out.mkdir(parents=True)
base_run = suite.run(TableProvider(model, good), show_progress=False)
store = FileBaselineStore(out / "baselines")
snap = store.save(base_run, note="made by promptcanary 0.2.2")
cur_run = suite.run(TableProvider(model, bad), show_progress=False)
Reporter(cur_run).to_json(out / "current_run.json")
Reporter(base_run).to_json(out / "baseline_run.json")
drift = compare(snap, cur_run)
DriftReporter(drift).to_json(out / "drift.json")
facts = {
    "has_drift": drift.has_drift,
    "overall_score_delta": drift.overall_score_delta,
    "overall_baseline_score": drift.overall_baseline_score,
    "overall_current_score": drift.overall_current_score,
    "severity": drift.severity.value,
    "regressions": sorted([c.probe_id, c.prompt_id] for c in drift.regressions),
    "baseline_overall_score": base_run.overall_score,
    "current_overall_score": cur_run.overall_score,
    "random_prompt_id": prompts[2].id,
}
(out / "facts.json").write_text(json.dumps(facts, indent=2, sort_keys=True) + "\n")
print(json.dumps(facts, indent=1))
# A second suite and model whose names the 0.2.2 file naming keeps in mixed case with dots.
legacy = CanarySuite(name="Legacy Suite", prompts=prompts[:2], probes=probes[:2])
legacy_snap = store.save(
    legacy.run(TableProvider("openai/gpt-4.1-mini", good), show_progress=False)
)
print(legacy_snap.snapshot_id)
