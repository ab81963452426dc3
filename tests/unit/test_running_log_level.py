"""The running bot's log level: one output format at a time."""

from __future__ import annotations

import pytest

from bot.logging import running_log_level


@pytest.mark.parametrize(
    ("fmt", "level", "expected"),
    [
        ("console", "info", "warning"),  # the reporter's lines say what info would
        ("console", "warning", "warning"),
        ("console", "error", "error"),
        ("console", "debug", "debug"),  # asked for everything: everything
        ("json", "info", "info"),  # JSON only: the log is the whole output
        ("json", "debug", "debug"),
        ("json", "error", "error"),
    ],
)
def test_console_logs_only_problems_unless_debugging(fmt: str, level: str, expected: str) -> None:
    assert running_log_level(fmt, level) == expected
