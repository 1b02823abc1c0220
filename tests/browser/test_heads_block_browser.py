"""Browser: the multi-head attention and transformer block pages in Chromium, at 8 heads and 12 blocks."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.conftest import assert_no_exception, open_page, screenshot, wait_idle

CHART = '[data-testid="stPlotlyChart"] >> visible=true'  # not the hidden one of a pair (ui.charts)


def test_heads_page_at_8_heads(page, app_url):
    open_page(page, app_url, "heads", "n_heads=8")
    assert_no_exception(page)
    page.get_by_text("Every head attends on its own").wait_for()
    expect(page.locator('[data-testid="stAlertContentError"]')).to_have_count(0)
    page.locator(CHART).nth(3).scroll_into_view_if_needed()  # the grid of heads
    expect(page.locator(CHART).nth(7)).to_be_attached()  # at least 8 charts
    assert "n_heads=8" in page.url
    # one subplot title per head: "head 8 · ..." is drawn by plotly in the grid
    expect(page.locator(f"{CHART} >> text=/head 8 ·/").first).to_be_attached()
    screenshot(page, "heads")


def test_heads_page_shows_a_message_for_heads_that_do_not_divide(page, app_url):
    open_page(page, app_url, "heads", "n_heads=8&d_model=12")
    assert_no_exception(page)
    error = page.locator('[data-testid="stAlertContentError"]')
    expect(error).to_have_count(1)
    expect(error).to_contain_text("cannot be split into 8 heads")


def test_block_page_at_12_blocks_and_8_heads(page, app_url):
    open_page(page, app_url, "block", "blocks=12&n_heads=8")
    assert_no_exception(page)
    page.get_by_text("Blocks stack: 12 blocks").wait_for()
    expect(page.locator('[data-testid="stAlertContentError"]')).to_have_count(0)
    expect(page.locator(f"{CHART} >> text=/^block\\s*12$/").first).to_be_attached()  # the stack figure's last block
    selector = page.locator('[data-testid="stSelectbox"]', has_text="Block to look inside")
    selector.scroll_into_view_if_needed()
    selector.click()  # open the block selector and pick the last block
    page.get_by_role("option", name="block 12 of 12").click()
    wait_idle(page)
    assert_no_exception(page)
    expect(page.locator(f"{CHART} >> text=/block 12, head 8/").first).to_be_attached()
    assert "inspect=12" in page.url
    screenshot(page, "block")
