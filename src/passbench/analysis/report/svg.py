"""Small inline SVG charts for the HTML report: horizontal bars and a line. No plotting library.

Each function returns one `<svg>` element as text, sized in CSS pixels, with a <title> per mark
so a hover shows the exact number. Colours come from CSS classes (report.css), so the charts
follow the page's light or dark scheme.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

_ROW = 22  # px per bar
_LABEL = 150  # px for bar labels
_VALUE = 110  # px for the value text on the right


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    low: float | None = None  # interval whiskers, same scale as value
    high: float | None = None
    note: str = ""  # shown after the value, e.g. "(420 tasks)"
    css: str = ""  # extra class for the bar


def _fmt(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def bar_chart(
    bars: Sequence[Bar],
    *,
    title: str,
    maximum: float | None = None,
    width: int = 640,
    percent: bool = True,
) -> str:
    """Horizontal bars, one per row, with optional interval whiskers."""
    if not bars:
        return ""
    top = maximum if maximum is not None else max(b.high or b.value for b in bars) or 1.0
    plot = width - _LABEL - _VALUE
    height = 28 + _ROW * len(bars) + 18
    parts = [
        f'<svg class="chart" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
        f'<text class="chart-title" x="0" y="16">{escape(title)}</text>',
    ]
    y0 = 28
    for step in range(0, 5):
        x = _LABEL + plot * step / 4
        parts.append(
            f'<line class="grid" x1="{_fmt(x)}" y1="{y0}" x2="{_fmt(x)}" '
            f'y2="{y0 + _ROW * len(bars)}"/>'
        )
        tick = top * step / 4
        text = f"{_fmt(100 * tick)}%" if percent else _fmt(tick)
        parts.append(
            f'<text class="tick" x="{_fmt(x)}" y="{y0 + _ROW * len(bars) + 14}" '
            f'text-anchor="middle">{text}</text>'
        )
    for index, bar in enumerate(bars):
        y = y0 + index * _ROW
        length = 0.0 if top <= 0 else plot * max(0.0, min(bar.value, top)) / top
        value_text = f"{100 * bar.value:.1f}%" if percent else f"{bar.value:g}"
        hover = f"{bar.label}: {value_text}"
        if bar.low is not None and bar.high is not None and percent:
            hover += f" [{100 * bar.low:.1f}%, {100 * bar.high:.1f}%]"
        parts.append(
            f'<text class="label" x="{_LABEL - 6}" y="{y + 15}" text-anchor="end">'
            f"{escape(_clip(bar.label, 22))}</text>"
        )
        parts.append(
            f'<rect class="bar {escape(bar.css)}" x="{_LABEL}" y="{y + 4}" '
            f'width="{_fmt(length)}" height="{_ROW - 8}"><title>{escape(hover)}</title></rect>'
        )
        if bar.low is not None and bar.high is not None and top > 0:
            x1 = _LABEL + plot * max(0.0, bar.low) / top
            x2 = _LABEL + plot * min(top, bar.high) / top
            middle = y + _ROW / 2
            parts.append(
                f'<path class="whisker" d="M{_fmt(x1)} {_fmt(middle)}H{_fmt(x2)}'
                f'M{_fmt(x1)} {_fmt(middle - 4)}v8M{_fmt(x2)} {_fmt(middle - 4)}v8"/>'
            )
        parts.append(
            f'<text class="value" x="{width - _VALUE + 6}" y="{y + 15}">'
            f"{escape(value_text + (' ' + bar.note if bar.note else ''))}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def line_chart(
    points: Sequence[tuple[float, float]],
    *,
    title: str,
    x_label: str,
    width: int = 640,
    height: int = 260,
) -> str:
    """A line with dots, y as a percentage from 0 to 100; x ticks at the points."""
    if not points:
        return ""
    left, right, top, bottom = 48, 16, 28, 36
    plot_w, plot_h = width - left - right, height - top - bottom
    xs = [x for x, _ in points]
    x_min, x_max = min(xs), max(xs)
    span = (x_max - x_min) or 1.0

    def sx(x: float) -> float:
        return left + plot_w * (x - x_min) / span

    def sy(y: float) -> float:
        return top + plot_h * (1 - max(0.0, min(1.0, y)))

    parts = [
        f'<svg class="chart" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
        f'<text class="chart-title" x="0" y="16">{escape(title)}</text>',
    ]
    for step in range(0, 5):
        y = sy(step / 4)
        parts.append(
            f'<line class="grid" x1="{left}" y1="{_fmt(y)}" x2="{width - right}" y2="{_fmt(y)}"/>'
        )
        parts.append(
            f'<text class="tick" x="{left - 6}" y="{_fmt(y + 4)}" '
            f'text-anchor="end">{25 * step}%</text>'
        )
    every = max(1, math.ceil(len(points) / 12))
    for index, (x, _) in enumerate(points):
        if index % every == 0 or index == len(points) - 1:
            parts.append(
                f'<text class="tick" x="{_fmt(sx(x))}" y="{height - bottom + 16}" '
                f'text-anchor="middle">{_fmt(x)}</text>'
            )
    parts.append(
        f'<text class="tick" x="{left + plot_w / 2}" y="{height - 4}" '
        f'text-anchor="middle">{escape(x_label)}</text>'
    )
    path = " ".join(
        f"{'M' if i == 0 else 'L'}{_fmt(sx(x))} {_fmt(sy(y))}" for i, (x, y) in enumerate(points)
    )
    parts.append(f'<path class="line" d="{path}"/>')
    for x, y in points:
        parts.append(
            f'<circle class="dot" cx="{_fmt(sx(x))}" cy="{_fmt(sy(y))}" r="3.5">'
            f"<title>{escape(x_label)} {_fmt(x)}: {100 * y:.1f}%</title></circle>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
