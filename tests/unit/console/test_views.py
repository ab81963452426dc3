"""The console's pure helpers: exact JSON, pages newest first."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from bot.console.views import page, plain


def test_plain_keeps_money_exact() -> None:
    value = {
        "amount": Decimal("0.000000012"),
        "big": Decimal("1E+3"),
        "at": datetime(2026, 1, 2, tzinfo=UTC),
        "list": (Decimal("1.50"), None, True, 3),
    }
    assert plain(value) == {
        "amount": "0.000000012",
        "big": "1000",
        "at": "2026-01-02T00:00:00+00:00",
        "list": ["1.5", None, True, 3],
    }


def test_pages_newest_first_by_cursor() -> None:
    rows = list(range(1, 8))
    first = page(rows, lambda r: r, cursor=None, limit=3)
    assert first.items == [7, 6, 5] and first.total == 7 and first.next_cursor == "5"
    second = page(rows, lambda r: r, cursor=int(first.next_cursor or 0), limit=3)
    assert second.items == [4, 3, 2] and second.next_cursor == "2"
    last = page(rows, lambda r: r, cursor=2, limit=3)
    assert last.items == [1] and last.next_cursor is None
    exact = page(rows, lambda r: r, cursor=4, limit=3)
    assert exact.items == [3, 2, 1] and exact.next_cursor is None
    assert page([], lambda r: r, cursor=None, limit=3).items == []
