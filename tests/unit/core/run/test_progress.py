"""Run progress: a live bar on a terminal, throttled plain lines in CI logs."""

from __future__ import annotations

import io

from promptcanary.core.run.progress import RunProgress


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_log_mode_prints_a_line_per_tenth_and_a_final_line() -> None:
    stream = io.StringIO()
    progress = RunProgress(200, stream=stream, is_tty=False, clock=Clock())
    for i in range(200):
        progress.advance(errored=i < 3, retries=1 if i < 5 else 0)
    progress.finish()

    lines = stream.getvalue().splitlines()
    assert len(lines) == 10  # 9 intermediate tenths + the final line
    assert lines[3] == "promptcanary: 80/200 responses (3 errored, 5 retries)"
    assert lines[-1].startswith("promptcanary: 200/200 responses (3 errored, 5 retries) in ")
    assert "\r" not in stream.getvalue()


def test_log_mode_also_prints_after_the_interval() -> None:
    stream = io.StringIO()
    clock = Clock()
    progress = RunProgress(1000, stream=stream, is_tty=False, clock=clock, interval=10.0)
    progress.advance()
    assert stream.getvalue() == ""
    clock.now = 10.5
    progress.advance()
    assert stream.getvalue() == "promptcanary: 2/1000 responses (0 errored, 0 retries)\n"


def test_terminal_mode_redraws_one_line() -> None:
    stream = io.StringIO()
    progress = RunProgress(4, stream=stream, is_tty=True, clock=Clock())
    for _ in range(4):
        progress.advance()
    progress.finish()
    out = stream.getvalue()
    assert out.count("\r") >= 4
    assert "[##########----------] promptcanary: 2/4" in out
    assert out.endswith("promptcanary: 4/4 responses (0 errored, 0 retries) in 0.0 s\n")


def test_disabled_progress_writes_nothing() -> None:
    stream = io.StringIO()
    progress = RunProgress(3, stream=stream, enabled=False)
    progress.advance()
    progress.finish()
    assert stream.getvalue() == ""


def test_a_closed_stream_does_not_break_the_run() -> None:
    stream = io.StringIO()
    stream.close()
    progress = RunProgress(2, stream=stream, is_tty=False, clock=Clock())
    progress.advance()
    progress.advance()
    progress.finish()
    assert progress.done == 2
