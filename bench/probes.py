# ruff: noqa: E402
"""Evaluations per second of every built-in probe, alone and all together, on a fixed corpus.

The corpus is 10,000 seeded responses: short answers, ~20 kB prose, JSON objects, fenced JSON and
tool calls (native and written as JSON text). Each probe is timed over the whole corpus alone;
then the whole built-in set is applied per response through ``CanarySuite.score`` (the runner's
path, where the helpers' per-content parse cache lets probes share one JSON parse).

Reference: a run at c=32 against a 100 ms model produces at most 32 / 0.1 = 320 responses/s, so
the whole set must score well over 320 responses/s to stay off a run's critical path.

Rates are per CPU second (``time.process_time``) as well as per wall second: on a busy machine
the CPU figure is the stable one.

    .venv/bin/python bench/probes.py [--quick]
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as `python bench/x.py`, bench/ is first on sys.path: use the repository root instead, so
# `bench._common` and the packages import the same way from anywhere. Hence the imports
# below this line (ruff: noqa: E402 at the top of the file).
_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import argparse
import gc
import json
import random
import time
from typing import Any

from bench._common import machine_note, peak_rss_mb, print_table, rss_mb

CORPUS_SIZE = 10_000
QUICK_CORPUS_SIZE = 2_000
SEED = 20240611
REFERENCE_RATE = 32 / 0.1  # responses/s of a c=32 run against a 100 ms model

_WORDS = [
    "the",
    "model",
    "answer",
    "first",
    "step",
    "then",
    "because",
    "however",
    "perhaps",
    "certainly",
    "data",
    "result",
    "value",
    "weather",
    "city",
    "paris",
    "london",
    "report",
    "summary",
    "analysis",
    "however",
    "likely",
    "might",
    "should",
    "must",
    "great",
    "terrible",
    "good",
    "bad",
    "neutral",
    "happy",
    "sorry",
    "cannot",
    "assist",
    "sure",
    "here",
    "is",
]

# Representative parameters: what a suite would plausibly write for each built-in probe.
PROBE_PARAMS: dict[str, dict[str, Any]] = {
    "json_validity": {},
    "json_schema": {"required_keys": ["city", "temperature", "unit"], "forbidden_keys": ["error"]},
    "json_key_order": {"expected_order": ["city", "temperature", "unit"]},
    "response_length": {"min_chars": 20, "max_chars": 4000},
    "markdown_headers": {"expected_headers": ["Summary", "Analysis"]},
    "keyword_presence": {"required_keywords": ["weather"], "forbidden_keywords": ["sorry"]},
    "expected_keywords": {},
    "json_path": {
        "assertions": [
            {"path": "$.city", "exists": True},
            {"path": "$.temperature", "type": "number", "min": -50, "max": 60},
        ]
    },
    "step_by_step": {"expect_steps": True, "min_step_count": 2},
    "verbosity": {"expected_words": 120, "tolerance": 0.5},
    "confidence_language": {"expect_hedging": False},
    "direct_answer": {"expect_direct": True},
    "refusal": {"expect_refusal": False},
    "safety_language": {"expect_safety_language": False},
    "factual_consistency": {"expected_value": "Paris"},
    "sentiment": {"expect_positive": True},
    "tool_call_presence": {"expect_tool_call": True},
    "tool_call_name": {"expected_name": "get_weather"},
    "tool_call_args": {"required_args": ["city"], "forbidden_args": ["password"]},
    "tool_call_schema": {
        "schema": {
            "name": "get_weather",
            "required_args": ["city"],
            "optional_args": ["unit"],
            "arg_types": {"city": "string", "unit": "string"},
        }
    },
}


# ── the corpus ──────────────────────────────────────────────────────────────


def _prose(rng: random.Random, chars: int) -> str:
    paragraphs: list[str] = []
    size = 0
    while size < chars:
        sentences = [
            " ".join(rng.choice(_WORDS) for _ in range(rng.randint(6, 18))).capitalize() + "."
            for _ in range(rng.randint(3, 7))
        ]
        paragraph = " ".join(sentences)
        if rng.random() < 0.15:
            paragraph = f"## {rng.choice(['Summary', 'Analysis', 'Details'])}\n\n{paragraph}"
        if rng.random() < 0.2:
            paragraph += "\n\n1. First step.\n2. Then the second step.\n3. Finally the third."
        paragraphs.append(paragraph)
        size += len(paragraph) + 2
    return "\n\n".join(paragraphs)


def _weather(rng: random.Random, n: int) -> dict[str, Any]:
    data: dict[str, Any] = {
        "city": rng.choice(["Paris", "London", "Oslo"]),
        "temperature": rng.randint(-10, 35),
        "unit": "celsius",
    }
    if rng.random() < 0.3:
        data["forecast"] = [
            {"day": d, "high": rng.randint(0, 30)} for d in range(rng.randint(1, 7))
        ]
    data["id"] = n
    return data


def build_corpus(size: int, seed: int = SEED) -> list[tuple[str, Any]]:
    """``(kind, LLMResponse)`` pairs; every content string is distinct (no free cache hits)."""
    from promptcanary.core.models import LLMResponse, ToolCall

    rng = random.Random(seed)
    corpus: list[tuple[str, Any]] = []
    for n in range(size):
        roll = rng.random()
        tool_calls: list[ToolCall] = []
        if roll < 0.30:
            kind, content = "short", f"{_prose(rng, 1)[: rng.randint(20, 300)]} ({n})"
        elif roll < 0.40:
            kind, content = "long prose", f"{_prose(rng, 20_000)} ({n})"
        elif roll < 0.65:
            kind, content = "json", json.dumps(_weather(rng, n))
        elif roll < 0.85:
            kind = "fenced json"
            content = f"Here it is:\n```json\n{json.dumps(_weather(rng, n), indent=2)}\n```"
        elif roll < 0.93:
            kind, content = "tool call (native)", ""
            args = {"city": rng.choice(["Paris", "Oslo"]), "unit": "celsius", "n": n}
            tool_calls = [
                ToolCall(name="get_weather", arguments=args, arguments_raw=json.dumps(args))
            ]
        else:
            kind = "tool call (text)"
            call = {"name": "get_weather", "arguments": {"city": "Paris", "n": n}}
            content = json.dumps(call)
        response = LLMResponse(
            prompt_id="bench", provider_model_id="bench", content=content, tool_calls=tool_calls
        )
        corpus.append((kind, response))
    return corpus


# ── probes ──────────────────────────────────────────────────────────────────


def builtin_probes() -> list[tuple[str, Any]]:
    """Every registered built-in probe, built with its representative parameters."""
    from promptcanary.core.probes import get_probe_registry

    probes: list[tuple[str, Any]] = []
    for probe_id, cls in sorted(get_probe_registry().items()):
        if not cls.__module__.startswith("promptcanary.core.probes"):
            continue
        params = PROBE_PARAMS.get(probe_id, {})
        probes.append((probe_id, cls(**params)))
    return probes


def _prompt() -> Any:
    from promptcanary.core.models import CanaryPrompt

    return CanaryPrompt(
        id="bench", text="What is the weather in Paris?", expected_keywords=["weather", "Paris"]
    )


def _clear_parse_caches() -> None:
    from promptcanary.core.probes import helpers

    for name in ("_parse_cached", "_tool_calls_from_text", "_tool_calls_from_call_syntax"):
        cached = getattr(helpers, name, None)
        if cached is not None and hasattr(cached, "cache_clear"):
            cached.cache_clear()


def per_probe_table(corpus: list[tuple[str, Any]]) -> None:
    prompt = _prompt()
    rows: list[list[Any]] = []
    for probe_id, probe in builtin_probes():
        _clear_parse_caches()
        cpu, wall = time.process_time(), time.perf_counter()
        for _, response in corpus:
            probe.evaluate(prompt, response)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        rows.append(
            [
                probe_id,
                f"{len(corpus) / cpu:,.0f}",
                f"{len(corpus) / wall:,.0f}",
                f"{cpu / len(corpus) * 1e6:,.1f}",
            ]
        )
    print_table(
        f"Each built-in probe alone over {len(corpus):,} responses",
        ["probe", "eval/s (CPU)", "eval/s (wall)", "µs/eval (CPU)"],
        rows,
    )


def whole_set_table(corpus: list[tuple[str, Any]]) -> None:
    from promptcanary import CanarySuite
    from promptcanary.core.probes import helpers

    prompt = _prompt()
    probes = [p for _, p in builtin_probes()]
    suite = CanarySuite(name="probe-bench", prompts=[prompt], probes=probes)
    _clear_parse_caches()
    gc.collect()
    rss_before = rss_mb()
    by_kind: dict[str, list[float]] = {}
    cpu_total = time.process_time()
    wall_total = time.perf_counter()
    for kind, response in corpus:
        started = time.process_time()
        suite.score(prompt, response)
        by_kind.setdefault(kind, []).append(time.process_time() - started)
    cpu_total = time.process_time() - cpu_total
    wall_total = time.perf_counter() - wall_total
    gc.collect()
    rss_after = rss_mb()
    info = helpers._parse_cached.cache_info()
    rows: list[list[Any]] = [
        [
            kind,
            len(times),
            f"{len(times) / sum(times):,.0f}",
            f"{sum(times) / len(times) * 1e3:.3f}",
        ]
        for kind, times in sorted(by_kind.items())
    ]
    rows.append(
        [
            "all",
            len(corpus),
            f"{len(corpus) / cpu_total:,.0f}",
            f"{cpu_total / len(corpus) * 1e3:.3f}",
        ]
    )
    print_table(
        f"All {len(probes)} built-in probes per response (CanarySuite.score);"
        f" reference: {REFERENCE_RATE:.0f} responses/s keeps up with c=32 at 100 ms",
        ["response kind", "responses", "responses/s (CPU)", "ms/response (CPU)"],
        rows,
    )
    lookups = info.hits + info.misses
    print(
        f"\nwall: {len(corpus) / wall_total:,.0f} responses/s;"
        f" JSON parse cache: {info.hits:,} hits / {lookups:,} lookups"
        f" ({info.hits / max(1, lookups):.0%});"
        f" RSS {rss_before:.0f} -> {rss_after:.0f} MiB"
        f" ({(rss_after - rss_before) * 1024 / len(corpus):+.2f} KiB/response);"
        f" peak RSS {peak_rss_mb():.0f} MiB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_CORPUS_SIZE:,} responses")
    args = parser.parse_args()
    print(f"machine: {machine_note()}")
    size = QUICK_CORPUS_SIZE if args.quick else CORPUS_SIZE
    gc.collect()
    rss_start = rss_mb()
    corpus = build_corpus(size)
    kinds: dict[str, int] = {}
    for kind, _ in corpus:
        kinds[kind] = kinds.get(kind, 0) + 1
    chars = sum(len(r.content) for _, r in corpus)
    print(
        f"corpus: {size:,} responses, {chars / 1e6:.1f} M characters ("
        + ", ".join(f"{k} {v:,}" for k, v in sorted(kinds.items()))
        + f"); RSS {rss_start:.0f} -> {rss_mb():.0f} MiB after building it"
    )
    per_probe_table(corpus)
    whole_set_table(corpus)


if __name__ == "__main__":
    main()
