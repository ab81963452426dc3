"""`bot.svg_chart`: round axis values, escaped text, broken lines, bars from zero."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from html.parser import HTMLParser

from bot.svg_chart import Line, bar_chart, line_chart, nice_ticks

T0 = datetime(2026, 5, 1, tzinfo=UTC)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(svg: str) -> _Tags:
    parsed = _Tags()
    parsed.feed(svg)
    parsed.close()
    return parsed


def test_nice_ticks_are_round_and_cover_the_range() -> None:
    assert nice_ticks(Decimal("0.3"), Decimal("9.6")) == [Decimal(v) for v in range(0, 12, 2)]
    # 25.26 / 5 = 5.05 a step: 10 (1, 2, 5, 10 times a power of ten, at least that).
    assert nice_ticks(Decimal("-5.04"), Decimal("20.22")) == [
        Decimal(v) for v in (-10, 0, 10, 20, 30)
    ]
    flat = nice_ticks(Decimal(5), Decimal(5))
    assert flat[0] < 5 < flat[-1]
    assert nice_ticks(Decimal(0), Decimal(0))[0] < 0


def test_text_is_escaped_and_a_none_breaks_the_line() -> None:
    points = [(T0 + timedelta(hours=h), v) for h, v in enumerate([1, 2, None, 3, 4])]
    svg = line_chart(
        "<b>title</b>",
        "A&B",
        [Line('<i>"x"</i>', "#000", [(t, None if v is None else Decimal(v)) for t, v in points])],
    )
    assert "<b>" not in svg and "<i>" not in svg and "&lt;b&gt;title&lt;/b&gt;" in svg
    parsed = parse(svg)
    assert [tag for tag, _ in parsed.tags].count("polyline") == 2  # 1-2 and 3-4
    assert "<b>title</b>" in parsed.text and '<i>"x"</i>' in parsed.text
    assert "values in A&B" in parsed.text


def test_a_long_line_is_thinned() -> None:
    points = [(T0 + timedelta(minutes=m), Decimal(m)) for m in range(5000)]
    (polyline,) = [a for t, a in parse(line_chart("t", "", [Line("l", "#000", points)])).tags
                   if t == "polyline"]  # fmt: skip
    assert len(str(polyline["points"]).split()) == 1200


def test_bars_grow_from_zero_in_their_colours() -> None:
    svg = bar_chart("P&L", "USD", [("a", Decimal("2")), ("b", Decimal("-1")), ("c", None)])
    rects = [a for t, a in parse(svg).tags if t == "rect"]
    assert [r["fill"] for r in rects] == ["#1a7f37", "#cf222e"]  # none for a missing value
    up, down = rects
    # Twice as tall (pixels to one decimal place).
    assert abs(Decimal(str(up["height"])) - 2 * Decimal(str(down["height"]))) <= Decimal("0.2")
    assert Decimal(str(up["y"])) + Decimal(str(up["height"])) == Decimal(str(down["y"]))


def test_no_data_says_so() -> None:
    assert "no data in the window" in line_chart("t", "", [Line("l", "#000", [])])
    assert "no data in the window" in bar_chart("t", "", [("a", None)])
