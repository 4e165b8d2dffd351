"""`make docs`: the demo's pull-request comment, rendered as GitHub shows it, as docs/comment.png,
and the demo's explorable page (promptcanary-report/report.html) as docs/report.png.

1. ``scripts/demo.py`` writes promptcanary-report/comment.md (into a scratch folder).
2. The markdown becomes HTML with markdown-it-py (CommonMark plus GitHub's tables and
   strikethrough; raw HTML kept, as GitHub keeps ``<details>`` and ``<sub>``), ```` ```mermaid ````
   fences become Mermaid diagrams, styled by docs/github.css.
3. Mermaid's browser bundle comes from the npm registry (``npm pack`` of a pinned version,
   checked against its pinned integrity) into a cache folder.
4. Debian's Chromium, headless, loads the page twice: once to measure the rendered height, once
   to take the screenshot at that height.
5. report.html is self-contained: Chromium opens it from its file (through chromedriver), shows
   only its regressions in the comparisons table and screenshots it.

Needs chromium (``scripts/install_docs_tools.sh``) and npm. Not part of the tests or `.ci/run`.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CACHE = ROOT / ".cache" / "docs"
MERMAID_VERSION = "11.12.0"
MERMAID_INTEGRITY = (
    "sha512-"
    "ZudVx73BwrMJfCFmSSJT84y6u5brEoV8DOItdHomNLz32uBjNrelm7mg95X7g+C6UoQH/W6mBLGDEDv73JdxBg=="
)
WIDTH = 1000
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
    "--virtual-time-budget=15000",
)
_HEIGHT_RE = re.compile(r'data-height="(\d+)"')

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>comment</title>
<style>{css}</style></head>
<body><div class="comment"><div class="comment-header"><b>github-actions</b> <span>bot</span>
commented</div><div class="markdown-body">{body}</div></div>
<script src="mermaid.min.js"></script>
<script>
mermaid.initialize({{startOnLoad: false, theme: "default"}});
mermaid.run({{querySelector: "pre.mermaid"}}).finally(() => {{
  document.body.setAttribute("data-height", String(document.documentElement.scrollHeight));
}});
</script></body></html>
"""


def markdown_to_html(text: str) -> str:
    """GitHub-flavoured enough for our comment: tables, strikethrough, raw HTML, Mermaid."""
    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    default_fence = md.renderer.rules["fence"]

    def fence(renderer, tokens, idx, options, env):  # type: ignore[no-untyped-def]
        token = tokens[idx]
        if token.info.strip() == "mermaid":
            return f'<pre class="mermaid">{html.escape(token.content)}</pre>\n'
        return default_fence(tokens, idx, options, env)

    md.add_render_rule("fence", fence)
    return md.render(text)


def mermaid_bundle() -> Path:
    """The pinned Mermaid browser bundle, fetched once with ``npm pack`` and verified."""
    bundle = CACHE / f"mermaid-{MERMAID_VERSION}.min.js"
    if not bundle.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(
                ["npm", "pack", f"mermaid@{MERMAID_VERSION}", "--pack-destination", tmp],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            tarball = Path(tmp) / f"mermaid-{MERMAID_VERSION}.tgz"
            digest = base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
            if f"sha512-{digest}" != MERMAID_INTEGRITY:
                raise SystemExit(f"mermaid {MERMAID_VERSION}: integrity mismatch (got {digest})")
            subprocess.run(
                ["tar", "-xzf", str(tarball), "-C", tmp, "package/dist/mermaid.min.js"],
                check=True,
            )
            shutil.copyfile(Path(tmp) / "package/dist/mermaid.min.js", bundle)
    return bundle


def chromium(*args: str, profile: Path) -> str:
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        raise SystemExit("chromium not found: run scripts/install_docs_tools.sh first")
    proc = subprocess.run(
        [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
        check=True,
        capture_output=True,
        text=True,
        timeout=180,
    )
    return proc.stdout


def screenshot(page: Path, png: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        # Each run gets a new, empty profile: nothing carried over, nothing written elsewhere.
        dom = chromium(
            f"--window-size={WIDTH},800", "--dump-dom", page.as_uri(), profile=Path(tmp, "a")
        )
        match = _HEIGHT_RE.search(dom)
        if match is None:
            raise SystemExit("the page did not finish rendering Mermaid in time")
        height = int(match.group(1)) + 16
        chromium(
            f"--window-size={WIDTH},{height}",
            f"--screenshot={png}",
            page.as_uri(),
            profile=Path(tmp, "b"),
        )


def screenshot_report(page: Path, png: Path, height: int = 3000) -> None:
    """The explorable page as the demo wrote it, filtered to its regressions (so the shot
    reaches the charts and a regressed prompt's answers side by side, which its own script
    builds), driven through chromedriver as the browser tests drive it."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    with tempfile.TemporaryDirectory() as tmp:
        options = webdriver.ChromeOptions()
        options.binary_location = shutil.which("chromium") or "chromium"
        for flag in (
            *CHROMIUM_FLAGS[:-1],
            f"--user-data-dir={tmp}",
            f"--window-size={WIDTH},{height}",
        ):
            options.add_argument(flag)
        driver = webdriver.Chrome(options=options, service=Service(shutil.which("chromedriver")))
        try:
            driver.get(page.as_uri())
            verdict = driver.find_element(By.CSS_SELECTOR, "select[data-filter=verdict]")
            Select(verdict).select_by_value("regression")
            driver.save_screenshot(str(png))
        finally:
            driver.quit()


def demo_comment(scratch: Path) -> str:
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "demo.py"), str(scratch)],
        check=True,
        stdout=subprocess.DEVNULL,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    return (scratch / "promptcanary-report" / "comment.md").read_text(encoding="utf-8")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="promptcanary-docs-") as tmp:
        scratch = Path(tmp)
        comment = demo_comment(scratch)
        page = scratch / "comment.html"
        page.write_text(
            PAGE.format(
                css=(DOCS / "github.css").read_text(encoding="utf-8"),
                body=markdown_to_html(comment),
            ),
            encoding="utf-8",
        )
        shutil.copyfile(mermaid_bundle(), scratch / "mermaid.min.js")
        png = DOCS / "comment.png"
        screenshot(page, png)
        report_png = DOCS / "report.png"
        screenshot_report(scratch / "promptcanary-report" / "report.html", report_png)
    for written in (png, report_png):
        size = json.dumps(written.stat().st_size)
        print(f"make docs: wrote {written.relative_to(ROOT)} ({size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
