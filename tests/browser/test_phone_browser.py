"""Every page on a phone (#32): 390 × 844, touch, a phone's User-Agent. Nothing runs off the page's right edge,
no two chart titles overlap, small multiples have at most two columns, a display formula too wide for the
screen scrolls, and plotly's toolbar stays hidden until the chart is tapped. Screenshots are saved."""

from __future__ import annotations

import pytest

from tests.browser.conftest import PAGES, assert_no_exception, screenshot, wait_idle

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
  .filter(g => g.offsetParent !== null && parseFloat(getComputedStyle(g).opacity) > 0.05).length"""


@pytest.fixture(scope="module")
def phone(browser):
    ctx = browser.new_context(
        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True, user_agent=PHONE_UA
    )
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    yield page
    ctx.close()


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p or "playground")
def test_every_page_is_readable_on_a_phone(phone, app_url, path):
    phone.goto(f"{app_url}/{path}")
    wait_idle(phone, timeout=180_000)  # the real-model pages load their weights on a first visit
    assert_no_exception(phone)
    assert phone.evaluate(PAGE_OVERFLOW) <= 0
    assert phone.evaluate(OVERLAPPING_TITLES) == []
    assert phone.evaluate(MOST_COLUMNS) <= 2
    assert phone.evaluate(CUT_FORMULAS) == []
    assert phone.evaluate(SHOWN_TOOLBARS) == 0  # over the top row of numbers until the chart is tapped
    screenshot(phone, f"phone_{path or 'playground'}")


def test_a_tap_on_a_chart_shows_its_toolbar(phone, app_url):
    phone.goto(f"{app_url}/")
    wait_idle(phone, timeout=60_000)
    chart = phone.locator('[data-testid="stPlotlyChart"] .js-plotly-plot').first
    chart.scroll_into_view_if_needed()
    chart.hover()  # what a tap gives a touch screen: :hover on the tapped element
    group = chart.locator(".modebar-group").first
    phone.wait_for_function("g => parseFloat(getComputedStyle(g).opacity) > 0.9", arg=group.element_handle())
