"""Presenter mode on a projector-sized window (#18): every page at 1280 × 720 and 1920 × 1080, nothing cut,
and the Playground's heatmap first and large. Screenshots are saved for a person to look at."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import PAGES, WAIT_MS, assert_no_exception, open_page, screenshot, wait_idle

SIZES = [(1280, 720), (1920, 1080)]

# Text that CSS cut with an ellipsis or a hidden overflow: the box is narrower than what it holds.
CUT_TEXT = """() => Array.from(document.querySelectorAll(
    '[data-testid="stWidgetLabel"] *, [data-testid="stMarkdownContainer"] *, button *, label *'))
  .filter(e => e.offsetParent !== null && e.children.length === 0 && e.textContent.trim())
  .filter(e => { const s = getComputedStyle(e);
                 return (s.textOverflow === 'ellipsis' || s.overflowX === 'hidden' || s.overflow === 'hidden')
                        && e.scrollWidth > e.clientWidth + 1; })
  .map(e => `${e.tagName}.${e.className}: ${JSON.stringify(e.textContent.slice(0, 60))}`)"""
# Grids whose columns run past their frame (a scroll bar hides some of them).
CUT_GRIDS = """() => Array.from(document.querySelectorAll('[data-testid="stDataFrame"] .dvn-scroller'))
  .filter(e => e.offsetParent !== null && e.scrollWidth > e.clientWidth + 1)
  .map(e => `${e.scrollWidth} px of columns in a ${e.clientWidth} px frame, at y = ${e.getBoundingClientRect().y}`)"""


@pytest.fixture
def projector(browser, request):
    width, height = request.param
    ctx = browser.new_context(viewport={"width": width, "height": height})
    page = ctx.new_page()
    page.set_default_timeout(WAIT_MS)
    yield page, width, height
    ctx.close()


@pytest.mark.parametrize("projector", SIZES, indirect=True, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("path", PAGES, ids=lambda p: p or "playground")
def test_nothing_is_cut_in_presenter_mode(projector, app_url, path):
    page, width, height = projector
    open_page(page, app_url, path, "present=1")
    assert_no_exception(page)
    assert page.evaluate(CUT_TEXT) == []
    assert page.evaluate(CUT_GRIDS) == []
    screenshot(page, f"presenter_{path or 'playground'}_{width}x{height}")


@pytest.mark.parametrize("projector", SIZES, indirect=True, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_playground_heatmap_comes_first_and_large(projector, app_url):
    page, width, height = projector
    open_page(page, app_url, "", "present=1")
    plot = page.locator('[data-testid="stPlotlyChart"] .js-plotly-plot').first
    area = plot.locator(".nsewdrag").first.bounding_box()
    assert area["y"] < 0.2 * height  # the heatmap starts near the top: the first thing on the screen
    assert area["width"] >= 0.6 * height  # and is large: most of the window's height (it is square)
    # its key labels and its colour bar are on the first screen too (#32: they were below it at 1280 x 720)
    bottoms = plot.evaluate(
        "el => Array.from(el.querySelectorAll('.xtick text, .colorbar')).map(e => e.getBoundingClientRect().bottom)"
    )
    assert bottoms and max(bottoms) <= height
    sizes = plot.evaluate(
        "el => Array.from(el.querySelectorAll('g.heatmap-label text'))"
        ".map(t => parseFloat(getComputedStyle(t).fontSize))"
    )
    assert sizes and min(sizes) >= 20  # cell numbers readable from the back of the room


@pytest.mark.parametrize("projector", SIZES, indirect=True, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_pretrained_head_up_close_reads_from_the_back_of_the_room(projector, app_url):
    page, width, height = projector
    page.goto(f"{app_url}/pretrained?present=1")
    wait_idle(page, timeout=180_000)
    # the toggle's label whole inside its column (it read "Compare with a se…")
    label = page.get_by_text("Compare with a second head", exact=True)
    column = label.locator("xpath=ancestor::*[@data-testid='stColumn'][1]")
    assert label.bounding_box()["x"] + label.evaluate("e => e.scrollWidth") <= column.bounding_box()["x"] + (
        column.bounding_box()["width"] + 1
    )
    # the lines figure's column titles inside the chart (they read "tending (query)" and "attended to (ke")
    lines = page.locator('[data-testid="stPlotlyChart"]:has(.js-plotly-plot)').filter(has_text="attending (query)")
    svg = lines.locator(".main-svg").first.bounding_box()
    for title in ("attending (query)", "attended to (key)"):
        box = lines.locator("g.annotation text", has_text=title).bounding_box()
        assert svg["x"] <= box["x"] and box["x"] + box["width"] <= svg["x"] + svg["width"], title
    # the link to the deeper page whole (it was cut at the right edge)
    link = page.locator('[data-testid="stPageLink"]').filter(has_text="Read deeper")
    assert link.evaluate("e => e.scrollWidth <= e.clientWidth + 1")
    # the numbers in the 16 x 16 heatmap large enough to read
    sizes = page.locator('[data-testid="stPlotlyChart"] .js-plotly-plot').evaluate_all(
        "els => els.flatMap(el => Array.from(el.querySelectorAll('g.heatmap-label text')))"
        ".map(t => parseFloat(getComputedStyle(t).fontSize))"
    )
    assert sizes and min(sizes) >= 16


@pytest.mark.parametrize("projector", [SIZES[0]], indirect=True, ids=lambda s: f"{s[0]}x{s[1]}")
def test_arrow_keys_walk_the_class_through_the_seven_steps(projector, app_url):
    page, _, _ = projector
    open_page(page, app_url, "", "present=1")
    seen = []
    page.mouse.click(5, 300)  # focus the page, not a widget
    for key in ["ArrowLeft"] * 5 + ["ArrowRight"] * 6:
        page.keyboard.press(key)
        wait_idle(page)
        seen.append(
            page.locator('[data-testid="stMain"] [data-testid="stRadio"] input:checked').first.evaluate("e => e.value")
        )
    steps = [int(v) + 1 for v in seen]  # the radio's values count from 0
    assert steps == [5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7]
    assert "step=7" in page.url  # the step is part of the link too
    open_page(page, app_url, "", "present=1&step=3")
    expect(page.get_by_text("Step 3 of 7").or_(page.locator("text=Q K")).first).to_be_attached()


@pytest.mark.parametrize("projector", [SIZES[0]], indirect=True, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_editor_is_one_click_away_and_fits(projector, app_url):
    page, _, _ = projector
    open_page(page, app_url, "", "present=1")
    page.get_by_text("Edit Q, K and V", exact=False).first.click()
    wait_idle(page)
    expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible()
    assert page.evaluate(CUT_GRIDS) == []  # with d_v = 4, v4 is inside the frame
    screenshot(page, "presenter_playground_editor_open")
