"""The report page in a real browser: opened from a file, filtered, hostile answers inert."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from promptcanary.core.models import CanaryRunResult, LLMResponse, ProviderConfig
from promptcanary.core.render.html import HtmlPair, render_html
from tests.unit.core.render.test_report import comparison, report, run

pytestmark = pytest.mark.browser

HOSTILE = (
    "</script><script>window.pwned = 1</script>"
    '<img src=x onerror="window.pwned = 2"><a id="js" href="javascript:window.pwned=3">go</a>'
)


def _errors(browser: webdriver.Chrome) -> list[str]:
    return [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def test_demo_page_renders_without_console_errors_and_filters_by_model(
    browser: webdriver.Chrome, demo_report: Path
) -> None:
    browser.get(demo_report.as_uri())
    rows = browser.find_elements(By.CSS_SELECTOR, "#comparisons tbody tr")
    models = {r.get_attribute("data-model") for r in rows}
    assert rows and models
    chosen = sorted(models)[0]
    Select(browser.find_element(By.CSS_SELECTOR, "select[data-filter=model]")).select_by_value(
        chosen
    )
    filtered = browser.find_elements(By.CSS_SELECTOR, "#comparisons tbody tr")
    assert filtered
    assert {r.get_attribute("data-model") for r in filtered} == {chosen}
    verdict = Select(browser.find_element(By.CSS_SELECTOR, "select[data-filter=verdict]"))
    verdict.select_by_value("regression")
    regressed = browser.find_elements(By.CSS_SELECTOR, "#comparisons tbody tr")
    assert 0 < len(regressed) < len(rows)
    assert {r.get_attribute("class") for r in regressed} == {"regression"}
    assert _errors(browser) == []


def test_model_filter_of_a_two_model_page_keeps_only_that_models_rows(
    browser: webdriver.Chrome, two_model_report: Path
) -> None:
    browser.get(two_model_report.as_uri())
    rows = browser.find_elements(By.CSS_SELECTOR, "#comparisons tbody tr")
    assert {r.get_attribute("data-model") for r in rows} == {"fake/a", "fake/b"}
    Select(browser.find_element(By.CSS_SELECTOR, "select[data-filter=model]")).select_by_value(
        "fake/b"
    )
    kept = browser.find_elements(By.CSS_SELECTOR, "#comparisons tbody tr")
    assert 0 < len(kept) < len(rows)
    assert {r.get_attribute("data-model") for r in kept} == {"fake/b"}
    assert (
        browser.find_element(By.ID, "row-count").text == f"{len(kept)} of {len(rows)} comparisons"
    )
    # Then the tag: the math prompts of fake/b (sum, json), not greet.
    Select(browser.find_element(By.CSS_SELECTOR, "select[data-filter=tags]")).select_by_value(
        "math"
    )
    both = browser.find_elements(By.CSS_SELECTOR, "#comparisons tbody tr")
    assert sorted(r.find_element(By.TAG_NAME, "a").text for r in both) == ["json", "sum"]
    assert _errors(browser) == []


def test_tag_filter_of_the_action_written_page_keeps_the_tagged_prompts_rows(
    browser: webdriver.Chrome, demo_report: Path
) -> None:
    browser.get(demo_report.as_uri())
    rows = browser.find_elements(By.CSS_SELECTOR, "#comparisons tbody tr")
    tag = Select(browser.find_element(By.CSS_SELECTOR, "select[data-filter=tags]"))
    tags = [o.get_attribute("value") for o in tag.options if o.get_attribute("value")]
    # examples/canary.yaml tags its prompts (json, tools, safety, …): the action carried them.
    assert "json" in tags and "tools" in tags
    tag.select_by_value("tools")
    tooled = browser.find_elements(By.CSS_SELECTOR, "#comparisons tbody tr")
    assert 0 < len(tooled) < len(rows)
    assert {r.get_attribute("data-tags") for r in tooled} == {"tools"}
    assert _errors(browser) == []


def test_regressed_prompt_shows_both_answers_side_by_side(
    browser: webdriver.Chrome, demo_report: Path
) -> None:
    browser.get(demo_report.as_uri())
    link = browser.find_element(By.CSS_SELECTOR, "#comparisons tbody tr.regression a")
    target = link.get_attribute("href").split("#", 1)[1]
    link.click()
    details = browser.find_element(By.ID, target)
    assert details.get_attribute("open") is not None
    for side in ("baseline", "today"):
        answers = details.find_elements(By.CSS_SELECTOR, f"[data-side={side}] pre")
        assert answers and answers[0].text.strip()
        assert answers[0].is_displayed()


def test_a_prompt_shows_its_pass_rate_history_as_a_drawn_line(
    browser: webdriver.Chrome, demo_report: Path
) -> None:
    # The demo promotes three pushes before the pull request: every prompt has a history.
    browser.get(demo_report.as_uri())
    spark = browser.find_element(By.CSS_SELECTOR, "details.prompt.regressed summary svg.spark")
    assert spark.is_displayed()
    assert spark.size["width"] > 50 and spark.size["height"] > 10
    title = spark.find_element(By.TAG_NAME, "title").get_attribute("textContent")
    assert title.startswith("pass rate: 100% → 100% → 100% → ")
    assert not title.endswith("→ 100% (this run last)")  # the regressed prompt fell today


def test_hostile_answer_is_visible_text_and_never_runs(
    browser: webdriver.Chrome, tmp_path: Path
) -> None:
    provider = ProviderConfig(model_id="m")
    today = CanaryRunResult(
        suite_name="s",
        provider=provider,
        llm_responses=[LLMResponse(prompt_id="p", provider_model_id="m", content=HOSTILE)],
    )
    page = tmp_path / "report.html"
    page.write_text(render_html([HtmlPair("s", "m", today)], verdict="ok"), encoding="utf-8")
    browser.get(page.as_uri())
    browser.find_element(By.CSS_SELECTOR, "details.prompt summary").click()
    shown = browser.find_element(By.CSS_SELECTOR, "[data-side=today] pre").text
    assert shown == HOSTILE
    assert browser.find_elements(By.ID, "js") == []
    assert browser.execute_script("return window.pwned === undefined")
    # Our own script did run (the marker check above is not vacuous).
    assert browser.find_element(By.ID, "row-count").text == "0 of 0 comparisons"


def test_a_closed_prompt_is_built_when_opened_and_long_tables_draw_on_request(
    browser: webdriver.Chrome, tmp_path: Path
) -> None:
    ids = [f"q{i:03d}" for i in range(600)]
    today = run(*(LLMResponse(prompt_id=p, provider_model_id="m", content=f"now {p}") for p in ids))
    before = run(
        *(LLMResponse(prompt_id=p, provider_model_id="m", content=f"was {p}") for p in ids)
    )
    drift = report(comparisons=[comparison(p, 1.0, 1.0) for p in ids])
    page = tmp_path / "report.html"
    pair = HtmlPair("s", "m", today, drift=drift, baseline=before)
    page.write_text(render_html([pair], verdict="ok"), encoding="utf-8")
    browser.get(page.as_uri())

    assert len(browser.find_elements(By.CSS_SELECTOR, "#comparisons tbody tr")) == 500
    count = browser.find_element(By.ID, "row-count")
    assert count.text == "600 of 600 comparisons (the first 500 shown)"
    more = browser.find_element(By.ID, "more-rows")
    assert more.text == "Show all 600"
    more.click()
    assert len(browser.find_elements(By.CSS_SELECTOR, "#comparisons tbody tr")) == 600
    assert count.text == "600 of 600 comparisons" and not more.is_displayed()

    last = browser.find_element(By.CSS_SELECTOR, "details.prompt:last-of-type")
    assert last.find_elements(By.CSS_SELECTOR, ".sides") == []  # nothing built while closed
    last.find_element(By.TAG_NAME, "summary").click()
    assert last.find_element(By.CSS_SELECTOR, "[data-side=baseline] pre").text == "was q599"
    assert last.find_element(By.CSS_SELECTOR, "[data-side=today] pre").text == "now q599"
    assert _errors(browser) == []
