"""The sweep's chart as inline SVG, built on the server: catch rate and false-drop rate against threshold.

No script and no CDN. This module computes the coordinates; templates/review/sweep_chart.svg writes the SVG,
so every piece of text (the backend and model names) is escaped by the template engine.
"""

from typing import Any

from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

from review.thresholds.sweep import SweepResult

WIDTH, HEIGHT = 640, 320
LEFT, RIGHT, TOP, BOTTOM = 56, 150, 28, 44
CATCH_COLOUR = "#1a7f37"
FALSE_DROP_COLOUR = "#cf222e"
TEMPLATE = "review/sweep_chart.svg"


def _x(threshold: float) -> float:
    return LEFT + threshold * (WIDTH - LEFT - RIGHT)


def _y(rate: float) -> float:
    return TOP + (1.0 - rate) * (HEIGHT - TOP - BOTTOM)


def _steps(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """A rate changes just above a score, so the line jumps at each threshold, then runs flat to the next."""
    stepped: list[tuple[float, float]] = []
    for (threshold, rate), following in zip(points, [*points[1:], None], strict=True):
        stepped.append((threshold, rate))
        if following is not None and following[1] != rate:
            stepped.append((threshold, following[1]))
    return stepped


def _points(points: list[tuple[float, float]]) -> str:
    return " ".join(f"{_x(t):.1f},{_y(r):.1f}" for t, r in _steps(points))


def chart_context(result: SweepResult, *, stored_threshold: float | None = None) -> dict[str, Any]:
    """What the template draws: numbers already formatted, names as they are (the template escapes them)."""
    ticks = []
    for step in range(0, 11, 2):
        value = step / 10
        ticks.append(
            {
                "y": f"{_y(value):.1f}",
                "label_x": LEFT - 6,
                "label_y": f"{_y(value) + 4:.1f}",
                "percent": f"{value * 100:.0f}",
                "x": f"{_x(value):.1f}",
                "axis_y": HEIGHT - BOTTOM + 16,
                "value": f"{value:.1f}",
            }
        )
    lines = []
    catch = [(row.threshold, row.catch_rate) for row in result.rows if row.catch_rate is not None]
    false_drop = [(row.threshold, row.false_drop_rate) for row in result.rows if row.false_drop_rate is not None]
    if catch:
        lines.append({"css_class": "catch-rate", "points": _points(catch), "colour": CATCH_COLOUR})
    if false_drop:
        lines.append({"css_class": "false-drop-rate", "points": _points(false_drop), "colour": FALSE_DROP_COLOUR})
    markers = []
    if result.widest_safe is not None:
        markers.append((result.widest_safe.threshold, "#0969da", "widest safe"))
    if stored_threshold is not None:
        markers.append((stored_threshold, "#6e7781", "stored"))
    legend_x = WIDTH - RIGHT + 12
    legend = []
    for offset, (colour, name) in enumerate([(CATCH_COLOUR, "defects caught"), (FALSE_DROP_COLOUR, "good dropped")]):
        y = TOP + 12 + offset * 18
        legend.append(
            {"x": legend_x, "line_end": legend_x + 18, "line_y": y - 4, "colour": colour, "label_x": legend_x + 24}
            | {"y": y, "name": name}
        )
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "title": f"{result.backend} {result.model_id}".strip(),
        "frame": {"x": LEFT, "y": TOP, "width": WIDTH - LEFT - RIGHT, "height": HEIGHT - TOP - BOTTOM}
        | {"right": WIDTH - RIGHT, "bottom": HEIGHT - BOTTOM},
        "ticks": ticks,
        "axis_label": {"x": f"{(LEFT + WIDTH - RIGHT) / 2:.1f}", "y": HEIGHT - 8},
        "lines": lines,
        "markers": [
            {"x": f"{_x(value):.1f}", "label_x": f"{_x(value) + 3:.1f}", "label_y": TOP - 6}
            | {"colour": colour, "name": name, "value": f"{value:g}"}
            for value, colour, name in markers
        ],
        "legend": legend,
    }


def sweep_chart(result: SweepResult, *, stored_threshold: float | None = None) -> SafeString:
    svg = render_to_string(TEMPLATE, chart_context(result, stored_threshold=stored_threshold))
    # The template engine escaped every value it wrote; what is left to trim is the file's last newline.
    return mark_safe(svg.strip())  # noqa: S308
