"""The deeper pretrained page in a real browser: a click on a query's point draws its lines; a 252-token
input stays readable, on a laptop and on a projector."""

from __future__ import annotations

import re
import urllib.parse

from playwright.sync_api import expect

from lessons.reading import LONG_EXAMPLE
from tests.browser.conftest import assert_no_exception, open_page, screenshot, wait_idle
from tests.browser.test_presenter_layout_browser import CUT_GRIDS, CUT_TEXT

POINTS = '[data-testid="stPlotlyChart"] >> visible=true'  # not the hidden one of a pair (ui.charts)


def points_chart(page, n_tokens: int):
    """The queries-and-keys picture (its title names the number of keys; in a narrow chart the title is wrapped,
    its lines' text run together)."""
    title = re.compile(rf"{n_tokens} ?queries ?and ?{n_tokens} ?keys")
    return page.locator(POINTS).filter(has_text=title).first


def test_clicking_a_query_point_draws_lines_to_its_heaviest_keys(page, app_url):
    open_page(page, app_url, "pretrained_deeper")
    assert_no_exception(page)
    chart = points_chart(page, 16)
    chart.scroll_into_view_if_needed()
    traces = chart.locator(".scatterlayer .trace")
    expect(traces).to_have_count(2)  # queries and keys, no lines yet
    it = traces.first.locator("path.point").nth(10)  # trace 0 holds the queries; position 10 is 'it'
    box = it.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    wait_idle(page)
    assert_no_exception(page)
    assert "query=10" in page.url
    page.get_by_text("Query 10 · 'it'").wait_for()
    expect(points_chart(page, 16).locator(".scatterlayer .trace").nth(2)).to_be_attached()  # the lines to its keys
    labels = points_chart(page, 16).locator(".annotation-text").all_text_contents()
    assert labels and labels[0] == "0.68"  # the heaviest weight first: 'it' → 'animal' in layer 4, head 2
    screenshot(page, "pretrained_deeper")


def test_a_long_input_stays_readable_on_a_laptop_and_a_projector(page, app_url):
    query = {"text": LONG_EXAMPLE, "rows": "word", "word": "lighthouse", "query": "200"}
    open_page(page, app_url, "pretrained_deeper", urllib.parse.urlencode(query))
    assert_no_exception(page)
    page.get_by_text("252 tokens").first.wait_for()
    lines = page.locator(POINTS).filter(has_text="2 of 252 queries").nth(1)  # the heatmap, then the lines
    expect(lines.locator("text").filter(has_text="170 · lighthouse")).to_have_count(1)  # only the chosen rows named
    page.get_by_text("Query 200 · 'how'").wait_for()
    screenshot(page, "pretrained_deeper_long")
    page.set_viewport_size({"width": 1280, "height": 720})
    open_page(page, app_url, "pretrained_deeper", urllib.parse.urlencode({**query, "present": "1"}))
    assert_no_exception(page)
    assert page.evaluate(CUT_TEXT) == [] and page.evaluate(CUT_GRIDS) == []
    screenshot(page, "presenter_pretrained_deeper_long_1280x720")
