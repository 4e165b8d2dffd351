"""Escaping of untrusted text (model output, suite text, PR content) for GitHub-flavoured markdown.

GitHub links @mentions, ``#123`` / ``GH-123`` / ``owner/repo#123`` references and bare URLs in a
*post-processing* pass over the rendered text, so a markdown backslash escape does not stop them
(``\\@octocat`` still notifies octocat; see github/markup#1168, github/cmark-gfm#181). What does
stop them is an invisible character that breaks the pattern: a zero-width space (U+200B) after
``@``, after ``#`` and between ``GH`` and ``-``. Everything else with a markdown meaning is
backslash-escaped, and ``&``/``<``/``>`` become entities, so no HTML, image, link, table cell or
emphasis can be injected. Control characters (NUL …) and bidi controls (the "Trojan Source" trick)
are replaced by a visible U+FFFD.

All functions are pure and linear in the input (``str.translate`` and a few compiled regexes), so
a 1 MB model answer is escaped in milliseconds.
"""

from __future__ import annotations

import re

ZWSP = "\u200b"
REPLACEMENT = "\ufffd"

# C0 controls except tab and newline, DEL, C1 controls, and the bidi embedding/override/isolate
# controls plus the implicit marks: none of them belongs in a report, all of them can hide text.
_UNSAFE_CODEPOINTS = (
    [c for c in range(0x00, 0x20) if c not in (0x09, 0x0A)]
    + list(range(0x7F, 0xA0))
    + list(range(0x202A, 0x202F))
    + list(range(0x2066, 0x206A))
    + [0x200E, 0x200F, 0x061C]
)
_SANITIZE_TABLE: dict[int, str] = {c: REPLACEMENT for c in _UNSAFE_CODEPOINTS}

# Every ASCII punctuation character that can start or end a markdown construct, GitHub math
# (``$``) and strikethrough (``~``) included. CommonMark allows a backslash before any of them.
_MD_SPECIALS = "\\`*_{}[]()#+-.!|~=$"
_MD_TABLE: dict[int, str] = {
    **_SANITIZE_TABLE,
    **{ord(ch): "\\" + ch for ch in _MD_SPECIALS},
    ord("&"): "&amp;",
    ord("<"): "&lt;",
    ord(">"): "&gt;",
    ord("@"): "@" + ZWSP,
    # ``\#`` still renders as "#", which GitHub's reference filter links: break the pattern too.
    ord("#"): "\\#" + ZWSP,
}
_CELL_TABLE: dict[int, str] = {**_MD_TABLE, ord("\n"): "<br>", ord("\t"): " "}
# Inside raw HTML (``<summary>``) markdown is not parsed, so backslash escapes would show.
_HTML_TABLE: dict[int, str] = {
    **_SANITIZE_TABLE,
    ord("&"): "&amp;",
    ord("<"): "&lt;",
    ord(">"): "&gt;",
    ord('"'): "&quot;",
    ord("'"): "&#x27;",
    ord("@"): "@" + ZWSP,
    ord("#"): "#" + ZWSP,
    ord("\n"): " ",
}
_PLAIN_TABLE: dict[int, str] = {**_SANITIZE_TABLE, ord("@"): "@" + ZWSP, ord("#"): "#" + ZWSP}

_NEWLINES_RE = re.compile(r"\r\n?")
# Autolinks that survive backslash escapes: ``GH-123`` references, URL schemes and ``www.``.
_GH_REF_RE = re.compile(r"(?<![A-Za-z0-9])(GH)(?=-\d)", re.IGNORECASE)
_SCHEME_RE = re.compile(r"(?<=[A-Za-z]):(?=//)")
_WWW_RE = re.compile(r"(?<![A-Za-z0-9])(www)(?=\.)", re.IGNORECASE)
_BACKTICK_RUN_RE = re.compile(r"`+")
# ``#123`` and ``owner/repo#123``: the issue references a code block must still break.
_ISSUE_REF_RE = re.compile(r"#(?=\d)")
_LANG_RE = re.compile(r"[^A-Za-z0-9_+.#-]")


def sanitize(text: str) -> str:
    """Normalise newlines and make control and bidi characters visible (U+FFFD)."""
    if "\r" in text:
        text = _NEWLINES_RE.sub("\n", text)
    return text.translate(_SANITIZE_TABLE)


def _break_autolinks(text: str) -> str:
    # Only the regex passes cost a scan each; skip them when the trigger cannot occur.
    lowered = text.lower()
    if "gh-" in lowered:
        text = _GH_REF_RE.sub(r"\1" + ZWSP, text)
    if "://" in text:
        text = _SCHEME_RE.sub(":" + ZWSP, text)
    if "www." in lowered:
        text = _WWW_RE.sub(r"\1" + ZWSP, text)
    return text


def escape_md(text: str) -> str:
    """Untrusted text made inert as inline markdown (newlines kept; see :func:`escape_cell`)."""
    if "\r" in text:
        text = _NEWLINES_RE.sub("\n", text)
    return _break_autolinks(text).translate(_MD_TABLE)


def escape_cell(text: str) -> str:
    """Untrusted text made inert inside one table cell: like :func:`escape_md`, on one line."""
    if "\r" in text:
        text = _NEWLINES_RE.sub("\n", text)
    return _break_autolinks(text).translate(_CELL_TABLE)


def escape_html(text: str) -> str:
    """Untrusted text inside an inline HTML element such as ``<summary>``, on one line."""
    if "\r" in text:
        text = _NEWLINES_RE.sub("\n", text)
    return _break_autolinks(text).translate(_HTML_TABLE)


def escape_plain(text: str) -> str:
    """Untrusted text for plain-text sinks (check-run annotations, titles): no controls, no bidi,
    no live mention or issue reference even if a client renders it as markdown later."""
    if "\r" in text:
        text = _NEWLINES_RE.sub("\n", text)
    return _break_autolinks(text).translate(_PLAIN_TABLE)


def code_span(text: str, *, cell: bool = False) -> str:
    """Untrusted text as one inline code span, on one line.

    ``cell=True`` escapes ``|`` for use inside a table row (GFM splits cells before code spans
    and drops the backslash there; outside a table the backslash would show).
    """
    body = sanitize(text).replace("\n", " ").replace("@", "@" + ZWSP)
    if cell:
        body = body.replace("|", "\\|")
    longest = max((len(m) for m in _BACKTICK_RUN_RE.findall(body)), default=0)
    ticks = "`" * (longest + 1)
    # A leading/trailing backtick or space would merge with the delimiters: pad with one space.
    pad = " " if body[:1] in ("`", " ") or body[-1:] in ("`", " ") else ""
    return f"{ticks}{pad}{body}{pad}{ticks}"


def code_block(text: str, lang: str = "", *, neutralize: bool = True) -> str:
    """Untrusted text as a fenced code block that nothing inside can close early.

    The fence is one backtick longer than the longest backtick run in the text, so no line of the
    text can be a closing fence. GitHub does not link mentions inside code, but notification
    e-mails quote comments as plain text, so ``neutralize`` still breaks ``@name`` and ``#1``.
    """
    body = sanitize(text)
    if neutralize:
        body = body.replace("@", "@" + ZWSP)
        if "#" in body:
            body = _ISSUE_REF_RE.sub("#" + ZWSP, body)
        if "gh-" in body.lower():
            body = _GH_REF_RE.sub(r"\1" + ZWSP, body)
    longest = max((len(m) for m in _BACKTICK_RUN_RE.findall(body)), default=0)
    fence = "`" * max(3, longest + 1)
    info = _LANG_RE.sub("", lang)[:32]
    if body and not body.endswith("\n"):
        body += "\n"
    return f"{fence}{info}\n{body}{fence}"


def truncate(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, ending with "… (N more characters)" if cut.

    The marker counts towards the limit, so callers can budget with the returned length; a limit
    too small for the marker gets a plain cut.
    """
    if limit < 0:
        raise ValueError(f"limit must be ≥ 0, got {limit}")
    if len(text) <= limit:
        return text
    # The number in the marker is at most len(text): its width bounds the marker's length.
    widest = _marker(len(text))
    keep = max(0, limit - len(widest))
    if keep == 0:
        return text[:limit]
    return text[:keep] + _marker(len(text) - keep)


def _marker(omitted: int) -> str:
    return f"… ({omitted} more characters)"
