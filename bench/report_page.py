# ruff: noqa: E402
"""The report page of a large run: its size against the documented bound, and how long
headless Chromium takes to open it from a file.

A 2,000-prompt suite on 3 models (``--prompts``, ``--models``), 3 samples per prompt, 3 probes
per prompt, a baseline for every pair (a tenth of the prompts answer differently today, so their
diff is embedded) and 20 promoted baselines of history (each prompt's pass-rate line). Answers
are ``--answer-chars`` long (default 800, several lines), tagged prompts. The page is what the
action writes (``report_dir.html_report`` of a ``StepOutcome`` built by ``build_outcome``).

Then the same run with every answer at the cap (``ANSWER_LIMIT``) and ten distinct answers per
side: the largest page answers can make, against the page's bound (``PAGE_ANSWER_BUDGET``).

Chromium (Debian's, through chromedriver as the browser tests drive it; ``scripts/
install_browser.sh``) opens each page from ``file://`` ``--repeat`` times (default 3) in one
browser, after ``about:blank``; the figures are the medians of the page's own Navigation Timing
(``domContentLoadedEventEnd``: parsed and our script has drawn the table; ``loadEventEnd``) and
the wall time of ``driver.get``, and the time one model filter takes to redraw the table.
Target (issue #32): under 3 s to open, on this machine. Printed, never asserted.

    .venv/bin/python bench/report_page.py [--prompts 2000] [--models 3] [--repeat 3] [--quick]
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import argparse
import shutil
import tempfile
import time
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from bench._common import machine_note, median, print_table
from promptcanary.core.comparator import compare
from promptcanary.core.models import (
    BaselineSnapshot,
    CanaryRunResult,
    LLMResponse,
    ProbeResult,
    ProviderConfig,
)
from promptcanary.core.render.html import ANSWER_LIMIT, MAX_GROUPS, PAGE_ANSWER_BUDGET
from promptcanary_action.baselines.history import history_record
from promptcanary_action.outcome import PairOutcome, build_outcome
from promptcanary_action.report_dir import html_report
from promptcanary_action.settings import Settings

PROBES = ("response_length", "keyword_presence", "verbosity")
DOCUMENTED_MB = 16
"""README, "Size bound": a 2,000-prompt, 3-model run with 3 probes a prompt stays under it."""
TAGS = ("json", "tools", "safety", "factual", "style")
T0 = datetime(2026, 1, 1, tzinfo=UTC)
TEXTS = 5_000
"""Distinct answer texts in all (a prompt's own answers stay distinct from each other)."""
WORDS = ("the", "model", "answers", "with", "a", "short", "paragraph", "about", "billing")


@cache
def _text(seed: int, chars: int) -> str:
    """``chars`` characters of prose in lines of about 80, distinct per ``seed`` (cached: the
    worst case reuses :data:`TEXTS` texts, so the runs stay small in memory)."""
    words, n = [], seed
    while sum(len(w) + 1 for w in words) < chars:
        n = (n * 1103515245 + 12345) % 2**31
        words.append(WORDS[n % len(WORDS)])
    text = " ".join(words)[:chars]
    return "\n".join(text[i : i + 80] for i in range(0, len(text), 80))


def _run(model: str, prompts: int, *, day: int, chars: int, distinct: int) -> CanaryRunResult:
    """Three samples a prompt; ``distinct`` texts among them (1: all alike); a tenth of the
    prompts answer otherwise on ``day`` 1 and fail a probe there."""
    responses, results = [], []
    samples = max(3, distinct)
    for p in range(prompts):
        pid = f"prompt-{p:05d}-{p * 2654435761 % 2**32:08x}"
        changed = day == 1 and p % 10 == 0
        for s in range(samples):
            seed = (p * 7919 + (s % distinct) + (100_003 if changed else 0)) % TEXTS
            content = _text(seed, chars)
            responses.append(
                LLMResponse(
                    prompt_id=pid,
                    provider_model_id=model,
                    content=content,
                    sample=s,
                    latency_ms=400 + p % 300,
                )
            )
            for k, probe in enumerate(PROBES):
                passed = not (changed and k == 0)
                results.append(
                    ProbeResult(
                        probe_id=probe,
                        prompt_id=pid,
                        sample=s,
                        passed=passed,
                        score=float(passed),
                    )
                )
    return CanaryRunResult(
        suite_name="bench-report",
        provider=ProviderConfig(model_id=model),
        llm_responses=responses,
        probe_results=results,
        started_at=T0 + timedelta(days=day),
        finished_at=T0 + timedelta(days=day, minutes=5),
    )


def build_page(prompts: int, models: int, chars: int, distinct: int) -> tuple[str, float]:
    """The action's page of the run, and the seconds (CPU) ``html_report`` took."""
    pairs = []
    for m in range(models):
        model = f"provider/model-{m}"
        base = _run(model, prompts, day=0, chars=chars, distinct=distinct)
        today = _run(model, prompts, day=1, chars=chars, distinct=distinct)
        snapshot = BaselineSnapshot.of_run(base)
        history = [
            history_record(snapshot, sha=f"{i:07x}" + "0" * 33, ref="main", now=T0 + timedelta(i))
            for i in range(20)
        ]
        tags = {pid: [TAGS[i % len(TAGS)]] for i, pid in enumerate(today.prompt_ids)}
        pairs.append(
            PairOutcome(
                suite_name="bench-report",
                suite_file="canary.yaml",
                model=model,
                run=today,
                drift=compare(snapshot, today),
                baseline_run=base,
                prompt_tags=tags,
                history=history,
            )
        )
    outcome = build_outcome(pairs, Settings(), warnings=[])
    start = time.process_time()
    page = html_report(outcome, "https://github.com/o/r/actions/runs/1")
    return page, time.process_time() - start


def open_in_chromium(path: Path, repeat: int) -> dict[str, float]:
    """Median Navigation Timing figures (ms) of ``repeat`` loads, and one filter's redraw."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "chromium"
    profile = tempfile.mkdtemp(prefix="bench-chromium-")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", f"--user-data-dir={profile}"):  # fmt: skip
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(shutil.which("chromedriver")))
    figures: dict[str, list[float]] = {"get": [], "dcl": [], "load": [], "filter": []}
    try:
        for _ in range(repeat):
            driver.get("about:blank")
            start = time.perf_counter()
            driver.get(path.as_uri())
            figures["get"].append((time.perf_counter() - start) * 1000)
            nav: dict[str, Any] = driver.execute_script(
                "return performance.getEntriesByType('navigation')[0].toJSON()"
            )
            figures["dcl"].append(nav["domContentLoadedEventEnd"])
            figures["load"].append(nav["loadEventEnd"])
            figures["filter"].append(
                driver.execute_script(
                    "const s = document.querySelector('select[data-filter=model]');"
                    "s.value = s.options[1].value; const t = performance.now();"
                    "s.dispatchEvent(new Event('change')); return performance.now() - t;"
                )
            )
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
    return {k: median(v) for k, v in figures.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=2000)
    parser.add_argument("--models", type=int, default=3)
    parser.add_argument("--answer-chars", type=int, default=800)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="200 prompts, 1 load")
    args = parser.parse_args()
    if args.quick:
        args.prompts, args.repeat = 200, 1
    print(f"report_page: {args.prompts} prompts x {args.models} models; {machine_note()}")
    cases = (
        (f"{args.answer_chars}-char answers, 2 distinct per side", args.answer_chars, 2),
        (f"answers at the cap ({ANSWER_LIMIT:,}), {MAX_GROUPS} distinct", ANSWER_LIMIT, MAX_GROUPS),
    )
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for name, chars, distinct in cases:
            page, cpu = build_page(args.prompts, args.models, chars, distinct)
            path = Path(scratch) / "report.html"
            path.write_text(page, encoding="utf-8")
            size = path.stat().st_size
            timing = open_in_chromium(path, args.repeat)
            seconds = [timing[k] / 1000 for k in ("get", "dcl", "load")]
            rows.append([name, size / 1e6, DOCUMENTED_MB, cpu, *seconds, timing["filter"]])
    print_table(
        f"report.html (page answer budget {PAGE_ANSWER_BUDGET:,} bytes; medians of "
        f"{args.repeat} loads)",
        [
            "page",
            "MB",
            "bound MB",
            "render CPU s",
            "open s (get)",
            "DOMContentLoaded s",
            "load s",
            "filter ms",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
