"""Tests for escaping untrusted text into GitHub-flavoured markdown."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptcanary.core.render.markdown import (
    ZWSP,
    code_block,
    code_span,
    escape_cell,
    escape_html,
    escape_md,
    escape_plain,
    sanitize,
    truncate,
)

LIVE_MENTION = re.compile(r"(?<![\w`])@[A-Za-z0-9]")
TAG = re.compile(r"<[A-Za-z/!?]")
IMAGE = re.compile(r"(?<!\\)!\[")
HIDDEN = "\x00\x01\x1b\x7f\x85\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f"

# Text biased towards the characters that matter, plus anything at all.
markdownish = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("@#!<>[]()`~|*_\\&\n\r GH-1a/:.w") + list(HIDDEN)),
        st.characters(),
    ),
    max_size=200,
)


@pytest.mark.parametrize(
    "text",
    ["@octocat", "hi @octocat!", "@org/team", "(@octocat)", "`x`@octocat", "\\@octocat"],
)
def test_mentions_are_broken_with_a_zero_width_space(text: str) -> None:
    out = escape_md(text)
    assert not LIVE_MENTION.search(out)
    assert "@" + ZWSP in out


@pytest.mark.parametrize(
    ("text", "fragment"),
    [("#1", "#" + ZWSP + "1"), ("owner/repo#12", "#" + ZWSP + "12"), ("GH-7", "GH" + ZWSP)],
)
def test_issue_references_are_not_auto_linked(text: str, fragment: str) -> None:
    assert fragment in escape_md(text)


def test_html_images_links_and_tables_are_neutralised() -> None:
    out = escape_md("<img src=x> ![x](http://e) [a](b) | c | & &#64;")
    assert "<img" not in out and "&lt;img src\\=x&gt;" in out
    assert "\\!\\[x\\]\\(http:" + ZWSP + "//e\\)" in out
    assert "\\[a\\]\\(b\\)" in out
    assert "\\| c \\|" in out
    assert "&amp;&amp;\\#" in out.replace(" ", "")


def test_bare_urls_do_not_autolink() -> None:
    out = escape_md("see https://evil.example and www.evil.example")
    assert "https://" not in out and "www." not in out


def test_control_and_bidi_characters_become_visible() -> None:
    out = escape_md("a" + HIDDEN + "b\tc")
    assert out == "a" + "\ufffd" * len(HIDDEN) + "b\tc"


def test_cell_flattens_newlines_and_escapes_pipes() -> None:
    assert escape_cell("a|b\r\nc\rd") == "a\\|b<br>c<br>d"


def test_html_escaping_for_summary_elements() -> None:
    assert escape_html('<b>"x"\n@y #2') == "&lt;b&gt;&quot;x&quot; @" + ZWSP + "y #" + ZWSP + "2"


def test_plain_text_keeps_punctuation_but_breaks_mentions() -> None:
    assert escape_plain("x_y *z* @a #3\x00") == "x_y *z* @" + ZWSP + "a #" + ZWSP + "3\ufffd"


def test_sanitize_normalises_newlines() -> None:
    assert sanitize("a\r\nb\rc\x00") == "a\nb\nc\ufffd"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("abc", "`abc`"), ("a`b", "``a`b``"), ("`x`", "`` `x` ``"), ("a\nb", "`a b`")],
)
def test_code_span_uses_a_longer_backtick_run(text: str, expected: str) -> None:
    assert code_span(text) == expected


def test_code_span_in_a_cell_escapes_pipes() -> None:
    assert code_span("a|b", cell=True) == "`a\\|b`"
    assert code_span("a|b") == "`a|b`"


def test_code_block_fence_outgrows_any_backtick_run_in_the_text() -> None:
    out = code_block("x\n`````\ny", "py")
    assert out.startswith("``````py\n") and out.endswith("\n``````")


def test_code_block_sanitises_its_info_string_and_breaks_mentions() -> None:
    out = code_block("@octocat", "json onload=x")
    assert out.splitlines()[0] == "```jsononloadx"
    assert "@" + ZWSP + "octocat" in out
    assert code_block("@x", neutralize=False) == "```\n@x\n```"


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("short", 10, "short"),
        ("a" * 100, 30, "a" * 7 + "… (93 more characters)"),
        ("a" * 100, 5, "aaaaa"),
    ],
)
def test_truncate_marks_what_it_cut_and_respects_the_limit(
    text: str, limit: int, expected: str
) -> None:
    out = truncate(text, limit)
    assert out == expected
    assert len(out) <= limit


def test_truncate_rejects_a_negative_limit() -> None:
    with pytest.raises(ValueError, match="limit"):
        truncate("x", -1)


def test_one_megabyte_is_escaped_whole() -> None:
    # Size, not speed (that is bench territory): every mention in 1 MB is broken, none dropped.
    text = ("@octocat <b>#1</b> GH-2 https://x www.y `code` | *a* \n" * 20_000)[:1_000_000]
    for fn in (escape_md, escape_cell, escape_html, escape_plain, code_block):
        out = fn(text)
        assert "@octocat" not in out, fn.__name__
        assert out.count("octocat") == text.count("octocat"), fn.__name__


@settings(max_examples=400, deadline=None)
@given(markdownish)
def test_escape_md_output_is_inert_for_any_text(text: str) -> None:
    # ``<br>`` is the one tag escape_cell writes itself (a newline inside a table cell).
    for out in (escape_md(text), escape_cell(text).replace("<br>", "\n")):
        assert not LIVE_MENTION.search(out)
        assert not TAG.search(out)
        assert not IMAGE.search(out)
        assert not any(ch in out for ch in HIDDEN)
        assert "\r" not in out
    assert "\n" not in escape_cell(text)


@settings(max_examples=400, deadline=None)
@given(markdownish, st.sampled_from(["", "diff", "json"]))
def test_code_block_content_cannot_close_the_fence_early(text: str, lang: str) -> None:
    out = code_block(text, lang)
    lines = out.split("\n")
    fence = re.match(r"`+", lines[0])
    assert fence is not None and len(fence.group()) >= 3
    closing = re.compile(r"^ {0,3}`{" + str(len(fence.group())) + r",}\s*$")
    inner = lines[1:-1]
    assert not any(closing.match(line) for line in inner)
    assert lines[-1] == fence.group()
    assert not LIVE_MENTION.search("\n".join(inner).replace("`", ""))
