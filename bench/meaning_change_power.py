"""How often the real-model meaning test holds: its design, replayed many times on real answers.

``tests/real_model/test_meaning_change.py`` builds a pool of Gemma 3 270M's sales answers over a
few promoted pushes, changes the deployed system prompt behind the suite, and asserts that a pull
request calls at least one prompt *changed* and none *same*. One run of that test is one draw;
this bench measures the chance the draw comes out right, so the test's design is chosen on a
figure and not on the runs that happened to pass.

1. **Recording** (the slow part, one request at a time): ``--answers`` answers per prompt from the
   local llama.cpp server under the suite's system prompt, and as many under the changed one, each
   embedded by all-MiniLM-L6-v2 beside it. Both through the real ``LiteLLMProvider`` and the
   suite's own ``semantic_drift:`` service (``CanarySuite.arun`` with a fixed ``samples``).
2. **Replay** (about half a second each): ``--replays`` histories, each drawing answers without
   replacement from the recordings in its own seeded order (a prompt that has drawn all its answers
   starts a new shuffle; the count of such histories is printed). ``BASELINE_PUSHES`` push runs
   (``baseline-samples``, promoted) under the first system prompt, then the pull request's run
   under the changed one with the test's ``min-samples``/``max-samples``, through the real runner,
   ``promote`` and ``compare``. Answers replay their recorded vectors (an embedding is a function
   of the text).

Prints the shift of each prompt over all recorded answers, each prompt's verdicts over the
replays, and the share of replays in which the test's assertion holds. Replays share one finite
recording, so they estimate the chance for answers like these. A fresh server walks the same seed
chain, so the same ``--server-seed`` records the same answers: an independent estimate needs
another seed. Replays of one recording still differ between executions: the meaning comparison
pairs answers in an order seeded by the newest pooled run's id, a random UUID.
Needs the optional model set (``make model-install``); skipped with that instruction without it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import machine_note, positive, print_table
from promptcanary.core.comparator import compare
from promptcanary.core.models import (
    BaselineSnapshot,
    CanaryPrompt,
    LLMResponse,
    ProviderConfig,
)
from promptcanary.core.run.embedder import EmbeddingService
from promptcanary.core.run.meaning import embedded_text
from promptcanary.core.run.options import RunOptions
from promptcanary.core.run.runner import run_suite
from promptcanary.core.sampling.pool import promote
from promptcanary.core.sampling.semantic import shift
from promptcanary.core.suite import CanarySuite
from promptcanary.core.vectors import decode
from promptcanary.providers.litellm import LiteLLMProvider
from scripts import local_model
from tests.fakes.embedder_fake import FakeEmbedder, hashed_vector
from tests.fakes.in_loop import InLoopProvider
from tests.real_model import test_meaning_change as design
from tests.real_model.conftest import MODEL, semantic_drift

SEED = 20261207
ANSWERS = 300
"""Recorded per prompt and side by default."""
NEEDED = max(
    design.BASELINE_PUSHES * int(design.BUILD_SAMPLES), int(design.CHANGED_INPUTS["max-samples"])
)
"""The fewest answers of one side a replay draws for a prompt (pushes sampled against the pool
may ask more than ``baseline-samples``)."""
Recording = dict[str, list[LLMResponse]]
"""Prompt id → its recorded answers, each with its vector."""


def _suite_text(system: str, embedding: local_model.LocalServer) -> str:
    """The test's suite; ``system`` in place of its system prompt (what the test's proxy does)."""
    text = design.SUITE.replace(design.SYSTEM, system)
    return text + semantic_drift(embedding, "sales", design.MIN_SHIFT)


def _load_suite(text: str) -> CanarySuite:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "canary.yaml"
        path.write_text(text, encoding="utf-8")
        return CanarySuite.from_yaml(path)


async def record(answers: int, seed: int) -> tuple[str, Recording, Recording]:
    """``answers`` answers a prompt under each system prompt, from the real servers (the chat
    server's seed chain starting at ``seed``); the suite's text is the changed one's (the replay
    answers every run from the recordings)."""
    with local_model.start(seed=seed) as chat, local_model.start(embedding=True) as embedding:
        provider = LiteLLMProvider(MODEL, api_base=chat.api_base)
        recordings = []
        for system in (design.SYSTEM, design.CHANGED_SYSTEM):
            text = _suite_text(system, embedding)
            run = await _load_suite(text).arun(
                provider, samples=answers, concurrency=1, timeout=300, max_retries=1,
                show_progress=False,
            )  # fmt: skip
            recordings.append(_by_prompt(run.llm_responses))
    return text, recordings[0], recordings[1]


def save(path: Path, text: str, before: Recording, after: Recording) -> None:
    document = {
        "suite": text,
        **{side: [r.model_dump(mode="json") for rs in recording.values() for r in rs]
           for side, recording in (("before", before), ("after", after))},
    }  # fmt: skip
    path.write_text(json.dumps(document), encoding="utf-8")


def load(path: Path) -> tuple[str, Recording, Recording]:
    """A saved recording, and its suite with the test module's ``min_shift`` of today: the answers
    stay valid while the suite's prompts and system prompts do, whatever the design asks of them."""
    document = json.loads(path.read_text(encoding="utf-8"))
    text = document["suite"]
    if not text.startswith(design.SUITE.replace(design.SYSTEM, design.CHANGED_SYSTEM)):
        raise SystemExit(f"{path} was recorded for another suite: record it again")
    text = re.sub(r"(?m)^(\s*min_shift:).*$", rf"\g<1> {design.MIN_SHIFT}", text)
    runs = [
        _by_prompt([LLMResponse.model_validate(r) for r in document[side]])
        for side in ("before", "after")
    ]
    return text, runs[0], runs[1]


def obtain(path: Path | None, answers: int, seed: int) -> tuple[str, Recording, Recording] | None:
    """The saved recording at ``path`` when it exists; else a fresh one from the servers (saved
    to ``path`` when given); ``None`` when there is neither a file nor the local model."""
    if path is not None and path.exists():
        print(f"replaying {path}")
        return load(path)
    if not local_model.is_installed():
        return None
    text, before, after = asyncio.run(record(answers, seed))
    if path is not None:
        save(path, text, before, after)
    return text, before, after


def _by_prompt(responses: Sequence[LLMResponse]) -> Recording:
    out: Recording = {}
    for response in responses:
        if response.errored or response.embedding is None:
            raise SystemExit(f"recording: an answer of {response.prompt_id} has no vector")
        out.setdefault(response.prompt_id, []).append(response)
    return out


class Replay(InLoopProvider):
    """Answers each prompt from its recorded answers, drawn without replacement in a seeded order;
    a prompt that has drawn them all starts a new shuffle (``reused`` counts it)."""

    def __init__(self, recording: Recording, rng: random.Random) -> None:
        super().__init__(ProviderConfig(model_id=MODEL, seed=None))
        self.texts = {pid: [r.content for r in rs] for pid, rs in recording.items()}
        self.rng = rng
        self.stacks: dict[str, list[str]] = {pid: [] for pid in self.texts}
        self.reused = 0
        for pid in self.texts:
            self._shuffle(pid)

    def _shuffle(self, pid: str) -> None:
        stack = list(self.texts[pid])
        self.rng.shuffle(stack)
        self.stacks[pid] = stack

    def complete(self, prompt: CanaryPrompt, *, system_prompt: str | None = None) -> LLMResponse:
        if not self.stacks[prompt.id]:
            self.reused += 1
            self._shuffle(prompt.id)
        return LLMResponse(
            prompt_id=prompt.id, provider_model_id=MODEL, content=self.stacks[prompt.id].pop(),
            total_tokens=10,
        )  # fmt: skip


def _options(inputs: Mapping[str, str], **more: object) -> RunOptions:
    counts = {k.replace("-", "_"): int(v) for k, v in inputs.items() if k.endswith("samples")}
    return RunOptions(samples="auto", show_progress=False, **counts, **more)  # type: ignore[arg-type]


async def replay(
    suite: CanarySuite, before: Recording, after: Recording, replays: int
) -> tuple[list[dict[str, str]], int]:
    """The verdict of each prompt's meaning comparison, one mapping per replayed history, and
    how many histories drew some prompt's recorded answers more than once."""
    vectors = {
        embedded_text(r): decode(r.embedding or "")
        for recording in (before, after)
        for responses in recording.values()
        for r in responses
    }
    embedder = FakeEmbedder(
        vector_of=lambda text: vectors.get(text) or hashed_vector(text, 384), dimension=384
    )
    services = [EmbeddingService(embedder)]
    build = _options({"baseline-samples": design.BUILD_SAMPLES}, top_up=True)
    changed = _options(design.CHANGED_INPUTS)
    verdicts, reused = [], 0
    for index in range(replays):
        rng = random.Random(SEED * 1000 + index)
        pushes, pull = Replay(before, rng), Replay(after, rng)
        snapshot: BaselineSnapshot | None = None
        for _ in range(design.BASELINE_PUSHES):
            run = await run_suite(suite, pushes, build, baseline=snapshot, services=services)
            snapshot = promote(run, snapshot)
        assert snapshot is not None
        run = await run_suite(suite, pull, changed, baseline=snapshot, services=services)
        report = compare(snapshot, run)
        verdicts.append({c.prompt_id: c.verdict for c in report.comparisons
                         if c.probe_key == "semantic"})  # fmt: skip
        reused += bool(pushes.reused or pull.reused)
    return verdicts, reused


def holds(verdicts: Mapping[str, str]) -> bool:
    """The test's assertion: some prompt *changed*, none *same*."""
    return "changed" in verdicts.values() and "same" not in verdicts.values()


def shift_rows(before: Recording, after: Recording) -> list[list[object]]:
    rows: list[list[object]] = []
    for pid in sorted(before):
        old = [decode(r.embedding or "") for r in before[pid]]
        new = [decode(r.embedding or "") for r in after[pid]]
        empty = sum(not r.content.strip() for r in after[pid]) / len(after[pid])
        rows.append([pid, len(old), len(new), f"{shift(old, new).estimate:.3f}", empty])
    return rows


def verdict_rows(verdicts: Sequence[Mapping[str, str]]) -> list[list[object]]:
    rows: list[list[object]] = []
    for pid in sorted({pid for v in verdicts for pid in v}):
        counts = Counter(v.get(pid, "missing") for v in verdicts)
        shares = [f"{counts[k] / len(verdicts):.1%}" for k in ("changed", "inconclusive", "same")]
        rows.append([pid, *shares])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--answers", type=positive, default=ANSWERS, help="recorded per prompt and side"
    )
    parser.add_argument("--replays", type=positive, default=1000)
    parser.add_argument(
        "--recording",
        type=Path,
        help="save the recording here; when the file exists, replay it without the servers",
    )
    parser.add_argument(
        "--server-seed",
        type=int,
        default=local_model.DEFAULT_SEED,
        help="the chat server's seed: a fresh server with the same seed records the same answers",
    )
    args = parser.parse_args()
    if args.answers < NEEDED:
        parser.error(f"--answers {args.answers}: one replay draws at least {NEEDED}")
    started = time.monotonic()
    print(machine_note())
    obtained = obtain(args.recording, args.answers, args.server_seed)
    if obtained is None:
        print("meaning_change_power: skipped, the local model is not installed: make model-install")
        return
    text, before, after = obtained
    answers = min(len(rs) for recording in (before, after) for rs in recording.values())
    if answers < NEEDED:
        raise SystemExit(f"{args.recording}: {answers} answers a prompt; a replay draws {NEEDED}+")
    recorded = time.monotonic() - started
    verdicts, reused = asyncio.run(replay(_load_suite(text), before, after, args.replays))
    print(f"\n{answers} answers a prompt and side in {recorded:.0f} s; "
          f"{args.replays} replays in {time.monotonic() - started - recorded:.0f} s")  # fmt: skip
    print_table(
        "shift over every recorded answer (½‖μ_after − μ_before‖², unbiased)",
        ["prompt", "answers before", "answers after", "shift", "empty after"],
        shift_rows(before, after),
    )
    print_table(
        f"meaning verdicts over {args.replays} replays of the test's design "
        f"({design.BASELINE_PUSHES} pushes × {design.BUILD_SAMPLES}, "
        f"max-samples {design.CHANGED_INPUTS['max-samples']}, min_shift {design.MIN_SHIFT})",
        ["prompt", "changed", "inconclusive", "same"],
        verdict_rows(verdicts),
    )
    held = sum(holds(v) for v in verdicts)
    print(f"\nthe test's assertion holds in {held / len(verdicts):.1%} of replays ({held} of "
          f"{len(verdicts)}); {reused} drew some prompt's answers more than once")  # fmt: skip


if __name__ == "__main__":
    main()
