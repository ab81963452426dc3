"""Small inline SVG charts: lines over time and labelled bars, as text for an HTML page.

No JavaScript, no fonts or files to fetch, no drawing library: a chart is one `<svg>`
element the page embeds, readable by any browser and by `html.parser`. Every text in it
(title, legend, labels) is HTML-escaped here. Coordinates are computed with `Decimal`
and written to one decimal place (pixels); the values drawn are not changed — the
figures a page shows in its tables stay the exact ones.

A long series is thinned to `MAX_POINTS` evenly spaced points (its last kept); a point
without a value (None) breaks its line.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal
from typing import Final

from bot.clock import from_micros, to_micros

__all__ = ["MAX_POINTS", "Line", "bar_chart", "line_chart", "nice_ticks"]

MAX_POINTS: Final = 1200
"""Points drawn per line at most (evenly spaced; the last always)."""
WIDTH: Final = 900
HEIGHT: Final = 300
LEFT, RIGHT, TOP, BOTTOM = 80, 20, 40, 40
"""Margins (pixels) around the plotting area: axis labels left and below, legend above."""
TICKS: Final = 5
CHAR_WIDTH: Final = 7
"""About how wide a character of the 12-pixel labels is (pixels)."""
"""About this many labelled values per axis."""
INK, GRID, MUTED = "#1f2328", "#d1d9e0", "#59636e"
GAIN, LOSS = "#1a7f37", "#cf222e"
_PIXEL = Decimal("0.1")


@dataclass(frozen=True)
class Line:
    """One line of a chart: its legend label, colour and (time, value) points."""

    label: str
    color: str
    points: Sequence[tuple[datetime, Decimal | None]]
    dashed: bool = False


def _px(value: Decimal) -> str:
    """A coordinate as written: one decimal place."""
    return str(value.quantize(_PIXEL, rounding=ROUND_HALF_EVEN))


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def nice_ticks(low: Decimal, high: Decimal, count: int = TICKS) -> list[Decimal]:
    """Round values from at most `low` to at least `high`, about `count` steps apart.

    The step is 1, 2 or 5 times a power of ten; a flat range is widened around its value.
    """
    if high < low:
        low, high = high, low
    if high == low:
        pad = abs(low) / 10 if low else Decimal(1)
        low, high = low - pad, high + pad
    raw = (high - low) / count
    magnitude = Decimal(1).scaleb(raw.adjusted())
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    first = (low / step).to_integral_value(ROUND_FLOOR) * step
    last = (high / step).to_integral_value(ROUND_CEILING) * step
    ticks = []
    value = first
    while value <= last:
        ticks.append(value.normalize() if value else Decimal(0))
        value += step
    return ticks


def _tick_text(value: Decimal) -> str:
    """A value as an axis writes it: exact, thousands separated, no trailing zeros."""
    text = f"{value:,f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _thin(
    points: Sequence[tuple[datetime, Decimal | None]], limit: int
) -> list[tuple[datetime, Decimal | None]]:
    if len(points) <= limit:
        return list(points)
    last = len(points) - 1
    picks = sorted({round(i * last / (limit - 1)) for i in range(limit)})
    return [points[i] for i in picks]


def _frame(title: str, legend: Sequence[tuple[str, str, bool]], width: int, height: int) -> str:
    """The `<svg>` opening, its title and legend (label, colour, dashed)."""
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" font-family="system-ui, sans-serif" '
        f'font-size="12" aria-label="{_esc(title)}">',
        f"<title>{_esc(title)}</title>",
        f'<text x="{LEFT}" y="16" font-size="14" font-weight="600" fill="{INK}">'
        f"{_esc(title)}</text>",
    ]
    x = LEFT
    for label, color, dashed in legend:
        dash = ' stroke-dasharray="6 4"' if dashed else ""
        parts.append(
            f'<line x1="{x}" y1="30" x2="{x + 18}" y2="30" stroke="{color}" stroke-width="2"'
            f"{dash}/>"
        )
        parts.append(f'<text x="{x + 22}" y="34" fill="{INK}">{_esc(label)}</text>')
        x += 40 + CHAR_WIDTH * len(label)
    return "\n".join(parts)


def _y_axis(ticks: list[Decimal], scale_y: _Scale, width: int, unit: str) -> list[str]:
    parts = []
    for tick in ticks:
        y = _px(scale_y(tick))
        parts.append(f'<line x1="{LEFT}" y1="{y}" x2="{width - RIGHT}" y2="{y}" stroke="{GRID}"/>')
        parts.append(
            f'<text x="{LEFT - 6}" y="{y}" dy="4" text-anchor="end" fill="{MUTED}">'
            f"{_esc(_tick_text(tick))}</text>"
        )
    if unit:
        parts.append(
            f'<text x="{width - RIGHT}" y="16" text-anchor="end" fill="{MUTED}">'
            f"values in {_esc(unit)}</text>"
        )
    return parts


class _Scale:
    """A linear map of values onto pixels."""

    def __init__(self, low: Decimal, high: Decimal, start: Decimal, end: Decimal) -> None:
        self.low, self.start = low, start
        self.factor = (end - start) / (high - low) if high != low else Decimal(0)

    def __call__(self, value: Decimal) -> Decimal:
        return self.start + (value - self.low) * self.factor


def line_chart(
    title: str,
    unit: str,
    lines: Sequence[Line],
    *,
    width: int = WIDTH,
    height: int = HEIGHT,
    max_points: int = MAX_POINTS,
) -> str:
    """Lines over time as one `<svg>` (`unit`: the values' unit, named top right)."""
    drawn = [(line, _thin(line.points, max_points)) for line in lines]
    values = [v for _, pts in drawn for _, v in pts if v is not None]
    times = [to_micros(t) for _, pts in drawn for t, _ in pts]
    legend = [(line.label, line.color, line.dashed) for line in lines]
    parts = [_frame(title, legend, width, height)]
    if not values or not times:
        parts.append(
            f'<text x="{LEFT}" y="{height // 2}" fill="{MUTED}">no data in the window</text>'
        )
        return "\n".join([*parts, "</svg>"])
    ticks = nice_ticks(min(values), max(values))
    scale_y = _Scale(ticks[0], ticks[-1], Decimal(height - BOTTOM), Decimal(TOP))
    first, last = min(times), max(times)
    if first == last:
        first, last = first - 3_600_000_000, last + 3_600_000_000
    scale_x = _Scale(Decimal(first), Decimal(last), Decimal(LEFT), Decimal(width - RIGHT))
    parts += _y_axis(ticks, scale_y, width, unit)
    parts += _time_axis(first, last, scale_x, height)
    for line, points in drawn:
        dash = ' stroke-dasharray="6 4"' if line.dashed else ""
        for segment in _segments(points):
            coords = " ".join(
                f"{_px(scale_x(Decimal(to_micros(t))))},{_px(scale_y(v))}" for t, v in segment
            )
            if len(segment) == 1:
                x, y = coords.split(",")
                parts.append(f'<circle cx="{x}" cy="{y}" r="2.5" fill="{line.color}"/>')
            else:
                parts.append(
                    f'<polyline fill="none" stroke="{line.color}" stroke-width="1.8"{dash} '
                    f'points="{coords}"/>'
                )
    return "\n".join([*parts, "</svg>"])


def _segments(
    points: Sequence[tuple[datetime, Decimal | None]],
) -> list[list[tuple[datetime, Decimal]]]:
    """The runs of points with a value (a None breaks the line)."""
    runs: list[list[tuple[datetime, Decimal]]] = [[]]
    for moment, value in points:
        if value is None:
            if runs[-1]:
                runs.append([])
            continue
        runs[-1].append((moment, value))
    return [run for run in runs if run]


def _time_axis(first: int, last: int, scale_x: _Scale, height: int) -> list[str]:
    """Dates under the plotting area (with the hour in a window under 10 days)."""
    span = timedelta(microseconds=last - first)
    fmt = "%m-%d %H:%M" if span < timedelta(days=TICKS * 2) else "%Y-%m-%d"
    parts = [
        f'<line x1="{LEFT}" y1="{height - BOTTOM}" x2="{_px(scale_x(Decimal(last)))}" '
        f'y2="{height - BOTTOM}" stroke="{MUTED}"/>'
    ]
    for i in range(TICKS + 1):
        moment = first + (last - first) * i // TICKS
        x = _px(scale_x(Decimal(moment)))
        anchor = "start" if i == 0 else "end" if i == TICKS else "middle"
        parts.append(
            f'<text x="{x}" y="{height - BOTTOM + 16}" text-anchor="{anchor}" fill="{MUTED}">'
            f"{_esc(from_micros(moment).strftime(fmt))}</text>"
        )
    return parts


def bar_chart(
    title: str,
    unit: str,
    bars: Sequence[tuple[str, Decimal | None]],
    *,
    width: int = WIDTH,
    height: int = HEIGHT,
) -> str:
    """Labelled bars from zero as one `<svg>`: gains green, losses red, None left empty."""
    parts = [_frame(title, [], width, height)]
    values = [v for _, v in bars if v is not None]
    if not values:
        parts.append(
            f'<text x="{LEFT}" y="{height // 2}" fill="{MUTED}">no data in the window</text>'
        )
        return "\n".join([*parts, "</svg>"])
    ticks = nice_ticks(min([*values, Decimal(0)]), max([*values, Decimal(0)]))
    scale_y = _Scale(ticks[0], ticks[-1], Decimal(height - BOTTOM), Decimal(TOP))
    parts += _y_axis(ticks, scale_y, width, unit)
    slot = Decimal(width - LEFT - RIGHT) / len(bars)
    zero = scale_y(Decimal(0))
    widest = max(len(label) for label, _ in bars) * CHAR_WIDTH + 12
    every = max(1, -(-widest // max(1, int(slot))))  # labels far enough apart not to touch
    for index, (label, value) in enumerate(bars):
        left = Decimal(LEFT) + slot * index
        if value is not None:
            top = min(zero, scale_y(value))
            tall = abs(scale_y(value) - zero)
            parts.append(
                f'<rect x="{_px(left + slot / 10)}" y="{_px(top)}" width="{_px(slot * 8 / 10)}" '
                f'height="{_px(tall)}" fill="{GAIN if value >= 0 else LOSS}">'
                f"<title>{_esc(label)}: {_esc(_tick_text(value))} {_esc(unit)}</title></rect>"
            )
        if index % every == 0:
            parts.append(
                f'<text x="{_px(left + slot / 2)}" y="{height - BOTTOM + 16}" '
                f'text-anchor="middle" fill="{MUTED}">{_esc(label)}</text>'
            )
    parts.append(
        f'<line x1="{LEFT}" y1="{_px(zero)}" x2="{width - RIGHT}" y2="{_px(zero)}" '
        f'stroke="{MUTED}"/>'
    )
    return "\n".join([*parts, "</svg>"])
