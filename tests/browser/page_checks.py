"""Checks computed in a real page: every visible control inside the viewport, every visible text at 4.5:1 or more
over its effective background, nothing clipped; and a screenshot of the page kept as a test artefact."""

from pathlib import Path

ARTEFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

# Runs in the page. The background behind a text is found by walking up its ancestors and compositing their
# background colours (the canvas is white) until one is opaque; the text's own alpha and every ancestor's
# opacity dim the text. A background image cannot be measured and is reported as such.
MEASURE = (Path(__file__).parent / "page_checks.js").read_text(encoding="utf-8")
# Runs in the host's page: its boxes inside the screen, apart, holding their text, readable (host_layout.js).
HOST_LAYOUT = (Path(__file__).parent / "host_layout.js").read_text(encoding="utf-8")


def check_page(page, name: str, *, scrolls: bool = False) -> dict:
    """Screenshot the page to test-artifacts/NAME.png, then measure it; returns the measurements. With scrolls,
    the page may be taller than the viewport (it is still held to the viewport's width)."""
    ARTEFACTS.mkdir(exist_ok=True)
    page.wait_for_timeout(250)  # let the countdown bar's transition and the layout settle for the screenshot
    path = ARTEFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=scrolls)
    result = page.evaluate(f"({MEASURE})({'true' if scrolls else 'false'})")
    result["screenshot"] = str(path)
    assert result["texts"] > 0 and result["controls"] > 0, result
    assert result["problems"] == [], f"{name}: {result['problems']} (see {path})"
    texts, lowest, controls = result["texts"], result["lowest"], result["controls"]
    print(f"{name}: {texts} texts, lowest contrast {lowest:.2f}:1, {controls} controls in view, {path}")
    return result


def check_host_layout(page, name: str, *, screenshots: Path | None = None) -> dict:
    """The host screen's geometry (see host_layout.js); with `screenshots`, the page is kept there as NAME.png."""
    page.wait_for_timeout(250)
    if screenshots is not None:
        screenshots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(screenshots / f"{name}.png"))
    result = page.evaluate(f"({HOST_LAYOUT})()")
    assert result["measured"] > 3, result
    assert result["problems"] == [], f"{name}: {result['problems']}"
    print(f"{name}: bar {result['bar']} px, title {result['title']}, options {result['options']}")
    return result
