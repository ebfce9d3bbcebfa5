"""The sweep's chart as inline SVG, built on the server: catch rate and false-drop rate against threshold.

No script and no CDN; every piece of text goes through `escape`.
"""

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from review.sweep import SweepResult

WIDTH, HEIGHT = 640, 320
LEFT, RIGHT, TOP, BOTTOM = 56, 150, 28, 44
CATCH_COLOUR = "#1a7f37"
FALSE_DROP_COLOUR = "#cf222e"


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


def _polyline(points: list[tuple[float, float]], colour: str, css_class: str) -> str:
    coordinates = " ".join(f"{_x(t):.1f},{_y(r):.1f}" for t, r in _steps(points))
    return (
        f'<polyline class="{css_class}" points="{coordinates}" fill="none" stroke="{colour}" '
        f'stroke-width="2" stroke-linejoin="round"/>'
    )


def sweep_chart(result: SweepResult, *, stored_threshold: float | None = None) -> SafeString:
    title = f"{result.backend} {result.model_id}".strip()
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
        f'height="{HEIGHT}" role="img" class="sweep-chart" font-family="sans-serif" font-size="11">',
        f"<title>{escape(title)}: catch rate and false-drop rate by threshold</title>",
        f'<rect x="{LEFT}" y="{TOP}" width="{WIDTH - LEFT - RIGHT}" height="{HEIGHT - TOP - BOTTOM}" '
        'fill="#fff" stroke="#999"/>',
    ]
    for step in range(0, 11, 2):
        value = step / 10
        parts.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{_y(value):.1f}" y2="{_y(value):.1f}" stroke="#eee"/>'
            f'<text x="{LEFT - 6}" y="{_y(value) + 4:.1f}" text-anchor="end">{value * 100:.0f}%</text>'
            f'<text x="{_x(value):.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">{value:.1f}</text>'
        )
    parts.append(
        f'<text x="{(LEFT + WIDTH - RIGHT) / 2:.1f}" y="{HEIGHT - 8}" text-anchor="middle">'
        "threshold (a score below it is dropped)</text>"
    )
    catch = [(row.threshold, row.catch_rate) for row in result.rows if row.catch_rate is not None]
    false_drop = [(row.threshold, row.false_drop_rate) for row in result.rows if row.false_drop_rate is not None]
    if catch:
        parts.append(_polyline(catch, CATCH_COLOUR, "catch-rate"))
    if false_drop:
        parts.append(_polyline(false_drop, FALSE_DROP_COLOUR, "false-drop-rate"))
    markers = []
    if result.widest_safe is not None:
        markers.append((result.widest_safe.threshold, "#0969da", "widest safe"))
    if stored_threshold is not None:
        markers.append((stored_threshold, "#6e7781", "stored"))
    for value, colour, name in markers:
        parts.append(
            f'<line x1="{_x(value):.1f}" x2="{_x(value):.1f}" y1="{TOP}" y2="{HEIGHT - BOTTOM}" '
            f'stroke="{colour}" stroke-dasharray="4 3"/>'
        )
        parts.append(f'<text x="{_x(value) + 3:.1f}" y="{TOP - 6}" fill="{colour}">{escape(name)} {value:g}</text>')
    legend_x = WIDTH - RIGHT + 12
    for offset, (colour, name) in enumerate([(CATCH_COLOUR, "defects caught"), (FALSE_DROP_COLOUR, "good dropped")]):
        y = TOP + 12 + offset * 18
        parts.append(
            f'<line x1="{legend_x}" x2="{legend_x + 18}" y1="{y - 4}" y2="{y - 4}" stroke="{colour}" '
            f'stroke-width="2"/><text x="{legend_x + 24}" y="{y}">{escape(name)}</text>'
        )
    parts.append("</svg>")
    # Every interpolated value above is a number we formatted or a string passed through escape().
    return mark_safe("".join(parts))  # noqa: S308
