"""The pretrained-model page in a real browser: it loads, heads can be switched and clicked, user text stays text."""

from __future__ import annotations

import urllib.parse

from playwright.sync_api import expect

from tests.browser.conftest import assert_no_exception, open_page, screenshot, wait_idle

HOSTILE = "<img src=x onerror=alert(1)>"


def choose(page, label: str, option: str) -> None:
    """Pick `option` in the selectbox labelled `label`, then wait for the rerun."""
    box = page.locator('[data-testid="stSelectbox"]').filter(has_text=label)
    box.get_by_role("combobox").click()
    page.keyboard.press("ArrowDown")  # a click only focuses the combobox; the arrow opens its list
    page.get_by_role("option", name=option, exact=True).click()
    wait_idle(page)


def whole_page_screenshot(page, name: str):
    """screenshot() of the whole app: Streamlit scrolls inside its main block, so grow the window to fit it."""
    size = page.viewport_size
    height = page.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": size["width"], "height": min(int(height) + 40, 12_000)})
    page.wait_for_timeout(800)  # let plotly redraw at the new size
    path = screenshot(page, name)
    page.set_viewport_size(size)
    return path


def chart_titles(page) -> str:
    return " ".join(page.locator('[data-testid="stPlotlyChart"] .gtitle').all_text_contents())


def test_page_loads_and_switching_heads_works(page, app_url):
    open_page(page, app_url, "pretrained")
    assert_no_exception(page)
    page.get_by_text("which positions were read and how much").first.wait_for()
    page.locator('[data-testid="stPlotlyChart"] image').first.wait_for()  # the 72 thumbnails: one image
    assert "Head A: layer 4, head 2" in chart_titles(page)
    whole_page_screenshot(page, "pretrained")

    choose(page, "Head A: layer", "1")
    choose(page, "Head A: head", "3")
    assert_no_exception(page)
    assert "Head A: layer 1, head 3" in chart_titles(page)
    assert "layer=1" in page.url and "head=3" in page.url


def test_clicking_a_thumbnail_opens_that_head(page, app_url):
    open_page(page, app_url, "pretrained")
    overview = page.locator('[data-testid="stPlotlyChart"]').first
    overview.scroll_into_view_if_needed()
    image = overview.locator("image").first.bounding_box()
    # the thumbnail of layer 6, head 12 sits in the bottom-right corner of the image
    page.mouse.click(image["x"] + image["width"] * 0.96, image["y"] + image["height"] * 0.93)
    wait_idle(page)
    assert_no_exception(page)
    assert "Head A: layer 6, head 12" in chart_titles(page)


def test_compare_hide_and_hostile_text(page, app_url):
    query = urllib.parse.urlencode({"text": HOSTILE + " and the animal was tired", "compare": "1", "hide": "1"})
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    open_page(page, app_url, "pretrained", query)
    assert_no_exception(page)
    titles = chart_titles(page)
    assert "Head A: layer 4, head 2" in titles and "Head B: layer 1, head 3" in titles
    expect(page.locator('[data-testid="stPlotlyChart"] .xtick text').filter(has_text="<").first).to_be_attached()
    expect(page.locator("img[src='x']")).to_have_count(0)  # shown as text, never made an element
    assert not dialogs
    whole_page_screenshot(page, "pretrained_compare")


def test_long_input_stays_responsive(page, app_url):
    text = " ".join(["The animal didn't cross the street because it was too tired."] * 18)  # ~250 tokens
    open_page(page, app_url, "pretrained", urllib.parse.urlencode({"text": text}))
    assert_no_exception(page)
    page.get_by_text("each thumbnail is shrunk to 48 × 48").wait_for()
    choose(page, "Head A: head", "7")
    assert "Head A: layer 4, head 7" in chart_titles(page)
    whole_page_screenshot(page, "pretrained_long")


def test_too_long_input_shows_the_models_message(page, app_url):
    open_page(page, app_url, "pretrained", urllib.parse.urlencode({"text": "the " * 300}))
    assert_no_exception(page)
    page.locator('[data-testid="stAlert"]').filter(has_text="at most 256").wait_for()
