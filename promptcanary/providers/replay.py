"""A provider that answers from a recording (JSONL, see :mod:`promptcanary.core.run.recording`),
for offline runs, demos and tests.

A recorded ``error`` replays as a non-transient :class:`ProviderError`, so a replayed run errors
exactly where the recorded one did. A request for sample ``i`` gets the recorded sample ``i`` when
there is one, else the ``i % n``-th of the ``n`` recorded samples of that prompt (a single
recording can feed a run with more samples; the answers then repeat).
"""

from __future__ import annotations

from pathlib import Path

from promptcanary.core.models import CanaryPrompt, LLMResponse, ProviderConfig
from promptcanary.core.run.provider import BaseLLMProvider, ProviderError
from promptcanary.core.run.recording import ReplayFileError, read_recording, response_of

__all__ = ["ReplayFileError", "ReplayProvider"]


class ReplayProvider(BaseLLMProvider):
    """Answers every prompt with the response recorded for it.

    Args:
        path: The JSONL recording (see the module docstring); read once, here.
        model_id: The model id of the run; by default the model named in the recording (when it
            names exactly one), else ``replay:<file name>``.
    """

    def __init__(self, path: str | Path, *, model_id: str | None = None) -> None:
        self.path = Path(path)
        self._records, models = read_recording(self.path)
        if model_id is None:
            model_id = models[0] if len(models) == 1 else f"replay:{self.path.name}"
        super().__init__(ProviderConfig(model_id=model_id))

    def complete(self, prompt: CanaryPrompt, *, system_prompt: str | None = None) -> LLMResponse:
        return self._answer(prompt, 0)

    async def acomplete(
        self,
        prompt: CanaryPrompt,
        *,
        system_prompt: str | None = None,
        sample: int = 0,
        timeout: float | None = None,
    ) -> LLMResponse:
        # A dictionary lookup: no worker thread needed.
        return self._answer(prompt, sample)

    def _answer(self, prompt: CanaryPrompt, sample: int) -> LLMResponse:
        recorded = self._records.get(prompt.id)
        if not recorded:
            raise ProviderError(
                f"no recorded response for prompt {prompt.id!r} in {self.path}",
                model_id=self.config.model_id,
                transient=False,
            )
        by_sample = {int(r.get("sample") or 0): r for r in recorded}
        record = by_sample.get(sample) or recorded[sample % len(recorded)]
        if record.get("error"):
            raise ProviderError(
                str(record["error"]), model_id=self.config.model_id, transient=False
            )
        return response_of(record, prompt.id, sample, self.config.model_id)
