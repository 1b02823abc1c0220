"""Presenter mode, the share link and chart export in a real browser."""

from playwright.sync_api import expect

from tests.browser.conftest import assert_no_exception, open_page, wait_idle

HEATMAP = '[data-testid="stPlotlyChart"] .js-plotly-plot'


def cell_font_size(page) -> float:
    return page.locator(HEATMAP).first.evaluate("el => el._fullData[0].textfont.size")


def test_presenter_mode_from_the_link_collapses_the_sidebar_and_enlarges_text(page, app_url):
    open_page(page, app_url, "", "present=1")
    assert_no_exception(page)
    root_px = page.evaluate("() => parseFloat(getComputedStyle(document.documentElement).fontSize)")
    assert root_px >= 20  # Streamlit's default is 16 px
    assert cell_font_size(page) >= 20
    box = page.locator('[data-testid="stSidebar"]').bounding_box()
    assert box is None or box["x"] + box["width"] <= 5  # collapsed: nothing of it on screen
    assert "present=1" in page.url


CUT_NAMES = """() => Array.from(document.querySelectorAll(
  '[data-testid="stSidebarNav"] .stMarkdownEllipsis, [data-testid="stNavSectionHeader"]'))
  .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)"""


def test_the_sidebar_shows_every_page_name_whole_in_presenter_mode(page, app_url):
    """With presenter mode's larger text, the sidebar cut "Watch an induction head form" to "Watch an induct…" and
    nine more names: a teacher looking for a page on the projector reads each whole."""
    open_page(page, app_url, "causal", "present=1")
    page.get_by_test_id("stExpandSidebarButton").click()
    expect(page.locator('[data-testid="stSidebarNav"]').get_by_text("Watch an induction head form")).to_be_visible()
    page.wait_for_function(f"() => ({CUT_NAMES})().length === 0")


MAIN_FRAME = """() => getComputedStyle(document.querySelector('[data-testid="stMain"]'), '::before').boxShadow"""


def test_a_clickers_page_down_draws_no_frame_around_the_projected_page(page, app_url):
    """Streamlit frames the page's scrolling area once a key has moved it (for a keyboard user on a laptop); on the
    projector, after the clicker's Page Down, that frame was a grey box around everything. Outside presenter mode it
    stays."""
    for query, framed in (("present=1", False), ("", True)):
        open_page(page, app_url, "class", query)
        page.mouse.click(page.viewport_size["width"] - 20, 400)  # the page's background: the clicker's keys reach it
        page.keyboard.press("PageDown")
        page.wait_for_function("() => document.activeElement.matches('[data-testid=\"stMain\"]:focus-visible')")
        page.wait_for_function(f"() => ({MAIN_FRAME})() {'!==' if framed else '==='} 'none'")


def test_turning_presenter_mode_on_in_the_sidebar(page, app_url):
    open_page(page, app_url, "")
    normal = cell_font_size(page)
    page.locator('[data-testid="stSidebar"]').get_by_text("Presenter mode", exact=True).click()
    wait_idle(page)
    assert cell_font_size(page) > normal and "present=1" in page.url


def test_share_link_and_csv_export(page, app_url):
    open_page(page, app_url, "")
    page.get_by_text("Causal mask", exact=True).click()
    wait_idle(page)
    link = page.locator('[data-testid="stSidebar"] [data-testid="share-link"]').first.inner_text()
    assert "causal=1" in link.replace("\n", "")
    page.get_by_text("Numbers of this chart", exact=False).first.click()  # the heatmap's table and files
    with page.expect_download() as info:
        page.locator('[data-testid="stExpanderDetails"]').get_by_role("button", name="CSV", exact=True).click()
    text = open(info.value.path(), encoding="utf-8").read()
    assert text.startswith("trace,type,name,field,row,column,value")
    z_rows = [line for line in text.splitlines() if ",z," in line]
    assert len(z_rows) == 16  # the 4 × 4 weights behind the heatmap


def test_the_toolbar_saves_images_in_the_chosen_format(page, app_url):
    open_page(page, app_url, "")
    page.locator('[data-testid="stSidebar"]').get_by_text("SVG", exact=True).click()
    wait_idle(page)
    fmt = page.locator(HEATMAP).first.evaluate("el => el._context.toImageButtonOptions.format")
    assert fmt == "svg"
    page.locator(HEATMAP).first.hover()
    download = '.modebar-btn[data-title="Download plot as a svg"], .modebar-btn[data-title*="Download"]'
    expect(page.locator(download).first).to_be_attached()


def test_the_app_asks_nothing_of_the_internet(page, app_url):
    # a classroom may have no internet: no favicon, font or script may come from another host
    outside = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith((app_url, "data:", "blob:")) else None)
    for path in ("", "heads", "pretrained"):
        open_page(page, app_url, path)
    assert outside == []
