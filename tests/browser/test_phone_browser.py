"""Every page in a narrow window (#32): on a phone (390 × 844, touch, a phone's User-Agent) and in a desktop
browser's window 390 and 600 px wide (no phone in its User-Agent: the layout must follow the width, not the
browser's name). Nothing runs off the page's right edge, no two chart titles overlap, no x tick label runs
into a title (the next row's, in a grid of subplots), and a display formula too wide for the screen scrolls.
390 px wide, small multiples have at most two columns; on a touch screen plotly's toolbar stays hidden until
the chart is tapped. Screenshots are saved.

Each window reads the app in another language (issue #48): the phone in Simplified Chinese, the 390 px desktop
window in Spanish (its sentences are the longest), the 600 px one in English; in Chinese and Spanish no English
sentence of ours is left on the page (tests/i18n_helpers.py)."""

from __future__ import annotations

import pytest

from tests.browser.conftest import PAGES, WAIT_MS, assert_no_exception, screenshot, wait_idle
from tests.i18n_helpers import english_left

PHONE_UA = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Mobile Safari/537.36"
)

# How far the page itself scrolls sideways (a formula or a grid that scrolls inside its own box is fine).
PAGE_OVERFLOW = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  return Math.max(document.documentElement.scrollWidth - document.documentElement.clientWidth,
                  main ? main.scrollWidth - main.clientWidth : 0);
}"""
# Pairs of chart titles (the figure's .gtitle, subplot titles as annotations) whose boxes overlap.
OVERLAPPING_TITLES = """() => {
  const out = [];
  for (const plot of document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot')) {
    const boxes = Array.from(plot.querySelectorAll('.gtitle, g.annotation text'))
      .filter(t => t.textContent.trim())
      .map(t => ({text: t.textContent.slice(0, 40), r: t.getBoundingClientRect()}))
      .filter(b => b.r.width > 0 && b.r.height > 0);
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i].r, b = boxes[j].r;
      if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1)
        out.push(`${boxes[i].text} | ${boxes[j].text}`);
    }
  }
  return out;
}"""
# The most subplots side by side in any chart: distinct left edges of its plot areas (each subplot's drag
# area) at one height.
MOST_COLUMNS = """() => Math.max(0, ...Array.from(
  document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot')).map(plot => {
    const rows = new Map();
    for (const area of plot.querySelectorAll('.nsewdrag')) {
      const r = area.getBoundingClientRect();
      if (r.width === 0) continue;
      const key = Math.round(r.top);
      rows.set(key, (rows.get(key) || new Set()).add(Math.round(r.left)));
    }
    return Math.max(0, ...Array.from(rows.values()).map(s => s.size));
  }))"""
# Display formulas wider than their box that cannot scroll (cut at the edge).
CUT_FORMULAS = """() => Array.from(document.querySelectorAll('.katex-display'))
  .filter(e => e.offsetParent !== null && e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'auto')
  .map(e => e.textContent.slice(0, 40))"""
SHOWN_TOOLBARS = """() => Array.from(document.querySelectorAll('.js-plotly-plot .modebar-group'))
  .filter(g => g.offsetParent !== null && parseFloat(getComputedStyle(g).opacity) > 0.05)
  .map(g => g.closest('[data-testid="stPlotlyChart"]').className)"""
# X tick labels that run into a title (the figure's, a subplot's) of the same chart.
TICKS_INTO_TITLES = """() => {
  const out = [];
  for (const plot of document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot')) {
    const box = e => ({text: e.textContent.slice(0, 40), r: e.getBoundingClientRect()});
    const shown = b => b.text.trim() && b.r.width > 0 && b.r.height > 0;
    const titles = Array.from(plot.querySelectorAll('.gtitle, g.annotation text')).map(box).filter(shown);
    const ticks = Array.from(plot.querySelectorAll('.xtick text')).map(box).filter(shown);
    for (const t of ticks) for (const a of titles) {
      if (t.r.left < a.r.right - 1 && a.r.left < t.r.right - 1 && t.r.top < a.r.bottom - 1 && a.r.top < t.r.bottom - 1)
        out.push(`${t.text} | ${a.text}`);
    }
  }
  return out;
}"""
# Every chart shown (not the hidden one of a pair drawn for two widths) has been drawn by plotly.
CHARTS_DRAWN = """() => Array.from(document.querySelectorAll('[data-testid="stPlotlyChart"]'))
  .filter(e => e.offsetParent !== null).every(e => e.querySelector('.js-plotly-plot .main-svg'))"""

WINDOWS = {  # name: browser context options
    "phone": dict(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True, user_agent=PHONE_UA),
    "desktop390": dict(viewport={"width": 390, "height": 844}),
    "desktop600": dict(viewport={"width": 600, "height": 844}),
}
LANGUAGES = {"phone": "zh_Hans", "desktop390": "es", "desktop600": "en"}  # the language each window reads


def holds(page, check: str, ok: str, what: str) -> None:
    """Wait until `check` (a JavaScript function) returns a value `v` that `ok` (a JavaScript expression of
    `v`) accepts; if it never does, fail showing what it returned last."""
    try:
        page.wait_for_function(f"() => {{ const v = ({check})(); return {ok}; }}", timeout=WAIT_MS)
    except Exception:  # noqa: BLE001 - playwright's TimeoutError: report what was wrong instead
        raise AssertionError(f"{what}: {page.evaluate(check)}") from None


def new_window(browser, name: str):
    page = browser.new_context(**WINDOWS[name]).new_page()
    page.set_default_timeout(60_000)
    return page


@pytest.fixture(scope="module", params=list(WINDOWS))
def window(request, browser):
    page = new_window(browser, request.param)
    yield request.param, page
    page.context.close()


@pytest.fixture(scope="module")
def phone(browser):
    page = new_window(browser, "phone")
    yield page
    page.context.close()


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p or "playground")
def test_every_page_is_readable_in_a_narrow_window(window, app_url, path):
    name, page = window
    lang = LANGUAGES[name]
    page.goto(f"{app_url}/{path}" + ("" if lang == "en" else f"?lang={lang}"))
    wait_idle(page, timeout=180_000)  # the real-model pages load their weights on a first visit
    assert_no_exception(page)
    page.wait_for_function(CHARTS_DRAWN, timeout=WAIT_MS)
    holds(page, PAGE_OVERFLOW, "v <= 0", "the page scrolls sideways by (px)")
    holds(page, OVERLAPPING_TITLES, "v.length === 0", "overlapping chart titles")
    holds(page, TICKS_INTO_TITLES, "v.length === 0", "x tick labels over a title")
    holds(page, CUT_FORMULAS, "v.length === 0", "display formulas cut at the edge")
    if page.viewport_size["width"] <= 390:
        holds(page, MOST_COLUMNS, "v <= 2", "the most subplots side by side")
    if name == "phone":  # over the top row of numbers until the chart is tapped
        holds(page, SHOWN_TOOLBARS, "v.length === 0", "toolbars shown untapped")
    if lang != "en":
        assert english_left(page.locator("body").inner_text(), lang) == []
    screenshot(page, f"{name}_{lang}_{path or 'playground'}")


def test_a_tap_on_a_chart_shows_its_toolbar(phone, app_url):
    phone.goto(f"{app_url}/")
    wait_idle(phone, timeout=60_000)
    chart = phone.locator('[data-testid="stPlotlyChart"] .js-plotly-plot').first
    chart.scroll_into_view_if_needed()
    chart.hover()  # what a tap gives a touch screen: :hover on the tapped element
    group = chart.locator(".modebar-group").first
    phone.wait_for_function("g => parseFloat(getComputedStyle(g).opacity) > 0.9", arg=group.element_handle())


# The Playground grid's toolbar (Streamlit's, drawn above the grid's top right while it has focus) and the
# sentence above the grid: how many px they overlap, or -1 while the toolbar is not shown yet.
TOOLBAR_OVER_SENTENCE = """() => {
  const grid = document.querySelector('[data-testid="stDataFrame"]').closest('[data-testid="stElementContainer"]');
  const bar = grid.querySelector('[data-testid="stElementToolbar"]');
  if (!bar || bar.getBoundingClientRect().height === 0 || parseFloat(getComputedStyle(bar).opacity) < 0.9) return -1;
  let above = grid.previousElementSibling;
  while (above && !above.innerText.trim()) above = above.previousElementSibling;  // past the spacer
  return Math.max(0, above.getBoundingClientRect().bottom - bar.getBoundingClientRect().top);
}"""


def test_the_grid_toolbar_leaves_the_sentence_above_it_readable(phone, app_url):
    phone.goto(f"{app_url}/")
    wait_idle(phone, timeout=60_000)
    grid = phone.locator('[data-testid="stDataFrame"]').first
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    phone.mouse.click(box["x"] + 80, box["y"] + 50)  # a cell: the grid has focus and shows its toolbar
    holds(phone, TOOLBAR_OVER_SENTENCE, "v === 0", "px of the sentence under the grid's toolbar")


@pytest.mark.parametrize("name", ["phone", "desktop600"])
def test_the_step_buttons_name_their_keys_only_where_there_is_a_keyboard(browser, app_url, name):
    """A lesson's Previous and Next step say "PageUp" and "PageDown" (the keys a presentation clicker sends) on a
    screen with a pointer that hovers, not on a phone's touch screen, which has no such keys."""
    from playwright.sync_api import expect

    page = new_window(browser, name)
    try:
        page.goto(f"{app_url}/class")
        page.get_by_role("button", name="Open the lesson").click()
        next_step = page.locator(".st-key-lesson_alone_next")
        expect(next_step.get_by_role("button")).to_be_visible()
        hint = next_step.locator("kbd")
        expect(hint).to_have_text("PageDown")  # Streamlit draws it on every screen
        if name == "phone":
            expect(hint).to_be_hidden()
        else:
            expect(hint).to_be_visible()
    finally:
        page.context.close()
