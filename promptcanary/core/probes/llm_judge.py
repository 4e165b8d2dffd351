"""``llm_judge``: an LLM reads the answer under a rubric and says pass or fail.

Two modes:

* ``rubric`` — the judge reads the prompt (and the prompt's ``metadata.context`` when the suite
  gives one), the answer and the rubric, and returns a verdict with a short reason.
* ``pairwise`` — the judge compares today's answer with a baseline answer of the same prompt
  under the rubric, in a random order per call (recorded); ties are allowed and "today's answer
  is worse" is a failure. The run's judge service picks the baseline answer; the first run of
  a pairwise probe has none, and its results are errored (not judged), not passes.

The probe calls no model: it names one judge request per vote (``judge_samples``, each its own
seed) and the runner's answer phase asks the judge (:mod:`promptcanary.core.run.judge`). The
probe reads the verdicts: the majority decides, the score is the share of pass votes, a vote that
could not be parsed is errored (never a pass or a fail), and a run with no vote answered is an
errored result. Pass flags are what ``samples: auto``, the e-values and the suite's
false-discovery control read, so a judge's noise is sampling noise they already account for.

The judge model (``judge_model``, ``api_base``) is not part of the probe key: swapping judges
keeps the comparison, and the judge-changed rule (:mod:`promptcanary.core.verdict.judging`) makes
those comparisons inconclusive instead of calling the swap a regression.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from promptcanary.core.models import CanaryPrompt, LLMResponse, ProbeCategory, ProbeResult
from promptcanary.core.probes.served import (
    Served,
    ServedProbe,
    ServiceFailure,
    ServiceRequest,
    served_output,
)

JUDGE = "judge"
"""The answer service that asks a judge model (payload: see :func:`judge_payload`)."""
MODES = ("rubric", "pairwise")
VERDICTS = ("pass", "fail")
MAX_JUDGE_SAMPLES = 15
MAX_SHOWN = 2_000
"""Characters of a compared baseline answer kept in a pairwise result (for the report)."""


def judge_payload(
    *,
    mode: str,
    model: str,
    api_base: str | None,
    rubric: str,
    prompt: str,
    answer: str,
    context: str | None = None,
    examples: Sequence[Mapping[str, Any]] = (),
    vote: int = 0,
) -> dict[str, Any]:
    """One judge request's content: what the service sends and what its cache keys on."""
    payload: dict[str, Any] = {
        "mode": mode,
        "model": model,
        "rubric": rubric,
        "prompt": prompt,
        "answer": answer,
        "vote": vote,
    }
    if api_base:
        payload["api_base"] = api_base
    if context:
        payload["context"] = context
    if examples:
        payload["examples"] = [dict(e) for e in examples]
    return payload


def answer_text(response: LLMResponse) -> str:
    """What the judge reads of an answer: its text, then its tool calls (name and arguments)."""
    calls = [f"[tool call] {c.name}({c.arguments_raw})" for c in response.tool_calls]
    return "\n".join([response.content, *calls]) if calls else response.content


def _clip(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _checked_examples(examples: Sequence[Any] | None, mode: str) -> list[dict[str, Any]]:
    if not examples:
        return []
    if mode != "rubric":
        raise ValueError("examples are for mode: rubric (pairwise compares two answers)")
    out = []
    for n, example in enumerate(examples, 1):
        if not isinstance(example, Mapping) or not isinstance(example.get("answer"), str):
            raise ValueError(f"examples item {n} needs an 'answer' (text) and a 'verdict'")
        if example.get("verdict") not in VERDICTS:
            raise ValueError(f"examples item {n}: 'verdict' must be pass or fail")
        unknown = set(example) - {"prompt", "answer", "verdict", "reason"}
        if unknown:
            raise ValueError(
                f"examples item {n}: unknown key(s) {sorted(unknown)}; "
                "an example takes prompt, answer, verdict, reason"
            )
        out.append(dict(example))
    return out


class LLMJudgeProbe(ServedProbe):
    """An LLM judge's verdict on the answer under ``rubric`` (see module doc)."""

    probe_id: ClassVar[str] = "llm_judge"
    name: ClassVar[str] = "LLM Judge"
    category: ClassVar[ProbeCategory] = ProbeCategory.CUSTOM
    description: ClassVar[str] = "An LLM judge's pass/fail verdict under a rubric"

    def __init__(
        self,
        rubric: str,
        mode: str = "rubric",
        judge_model: str | None = None,
        api_base: str | None = None,
        examples: list[dict[str, Any]] | None = None,
        judge_samples: int = 1,
    ) -> None:
        if not isinstance(rubric, str) or not rubric.strip():
            raise ValueError("rubric must be a non-empty text: what a good answer does")
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        if not isinstance(judge_model, str) or not judge_model:
            raise ValueError(
                "judge_model is not set: give the probe a judge_model (a LiteLLM model id) "
                "or the suite a `judge: {model: ...}` block"
            )
        if (
            isinstance(judge_samples, bool)
            or not isinstance(judge_samples, int)
            or not 1 <= judge_samples <= MAX_JUDGE_SAMPLES
            or judge_samples % 2 == 0
        ):
            raise ValueError(
                f"judge_samples must be an odd number from 1 to {MAX_JUDGE_SAMPLES} (the "
                f"majority of the votes decides), got {judge_samples!r}"
            )
        self.rubric = rubric
        self.mode = mode
        self.examples = _checked_examples(examples, mode)
        self.judge_samples = judge_samples
        self._judge_model = judge_model
        self._api_base = api_base

    @property
    def judge_model(self) -> str:
        return self._judge_model

    @property
    def api_base(self) -> str | None:
        return self._api_base

    def params(self) -> dict[str, Any]:
        # The judge model stays out of the key (module doc); empty defaults stay out too, so a
        # plain rubric probe keys on its rubric alone.
        params: dict[str, Any] = {"rubric": self.rubric, "mode": self.mode}
        if self.examples:
            params["examples"] = self.examples
        if self.judge_samples != 1:
            params["judge_samples"] = self.judge_samples
        return params

    def requests_for(self, prompt: CanaryPrompt, response: LLMResponse) -> list[ServiceRequest]:
        context = prompt.metadata.get("context")
        base = judge_payload(
            mode=self.mode,
            model=self._judge_model,
            api_base=self._api_base,
            rubric=self.rubric,
            prompt=prompt.text,
            answer=answer_text(response),
            context=context if isinstance(context, str) else None,
            examples=self.examples,
        )
        if self.mode == "pairwise":
            # The service compares this sample with a baseline answer of the same prompt.
            base.update(prompt_id=prompt.id, sample=response.sample)
        return [ServiceRequest(JUDGE, {**base, "vote": n}) for n in range(self.judge_samples)]

    def evaluate_served(
        self, prompt: CanaryPrompt, response: LLMResponse, served: Served
    ) -> ProbeResult:
        outputs = [served_output(served, r) for r in self.requests_for(prompt, response)]
        votes = [o for o in outputs if not isinstance(o, ServiceFailure)]
        failures = [o for o in outputs if isinstance(o, ServiceFailure)]
        if not votes:
            reason = failures[0].reason if failures else "no judge verdict"
            return self.failed(prompt, ServiceFailure(f"Not judged: {reason}"))
        passes = sum(1 for v in votes if v.get("verdict") == "pass")
        fails = len(votes) - passes
        if passes == fails:  # an odd vote count split evenly by errored votes
            return self.failed(
                prompt,
                ServiceFailure(
                    f"Not judged: {passes} pass and {fails} fail vote(s), "
                    f"{len(failures)} errored: {failures[0].reason}"
                ),
            )
        passed = passes > fails
        deciding = next(v for v in votes if (v.get("verdict") == "pass") == passed)
        metadata: dict[str, Any] = {
            "verdicts": [v.get("verdict") for v in votes],
            "reason": deciding.get("reason", ""),
            "judge_model": deciding.get("model", self._judge_model),
        }
        if failures:
            metadata["errored_votes"] = [f.reason for f in failures]
        if self.mode == "pairwise":
            metadata["orders"] = [v.get("order") for v in votes]
            metadata["baseline_answer"] = str(deciding.get("baseline_answer", ""))[:MAX_SHOWN]
        word = "pass" if passed else "fail"
        details = f"Judge: {word} ({passes}/{len(votes)} votes): {metadata['reason']}"
        if self.mode == "pairwise":
            # The two answers compared, so a reader sees what "worse" was said of.
            today, before = _clip(answer_text(response)), _clip(metadata["baseline_answer"])
            details += f" | today: «{today}» | baseline: «{before}»"
        return self._make_result(
            prompt.id, passed=passed, score=passes / len(votes), details=details, metadata=metadata
        )
