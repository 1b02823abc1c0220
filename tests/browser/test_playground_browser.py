"""The Playground in a real browser: editing, toggling, sharing a link, and a phone-sized screen."""

import numpy as np
from playwright.sync_api import expect

from tests.browser.conftest import assert_no_exception, open_page, screenshot, type_into_open_cell, wait_idle

HEATMAP = '[data-testid="stPlotlyChart"] .js-plotly-plot'


def heatmap_weights(page) -> np.ndarray:
    """The z matrix plotly is drawing in the first chart (the attention heatmap)."""
    page.wait_for_selector(HEATMAP)
    # _fullData holds what plotly decoded and drew (data[0].z may still be base64-encoded)
    z = page.locator(HEATMAP).first.evaluate("el => Array.from(el._fullData[0].z, row => Array.from(row))")
    return np.array(z, dtype=float)


def test_playground_loads_without_exception(page, app_url):
    open_page(page, app_url, "")
    assert_no_exception(page)
    w = heatmap_weights(page)
    assert w.shape == (4, 4)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-9)
    screenshot(page, "playground")


def stable_box(page, locator) -> dict:
    """The element's bounding box once it has stopped moving."""
    box = locator.bounding_box()
    for _ in range(20):
        page.wait_for_timeout(200)
        again = locator.bounding_box()
        if again == box:
            return box
        box = again
    return box


def edit_first_q(page, grid, text: str, attempts: int = 5) -> bool:
    """Double-click north's q1 cell, type `text`, press Enter; True once the edit reached the URL.

    Retried because a late rerun can redraw the grid and close the cell editor between the
    double-click and the typing; and Enter pressed at once after typing commits the old value.
    """
    for _ in range(attempts):
        grid.scroll_into_view_if_needed()  # the grid sits under the heatmap, below the first screen
        box = stable_box(page, grid)
        # first data row (north), column q1: the token column is 76 px wide, the header row about 35 px
        page.mouse.dblclick(box["x"] + 76 + 27, box["y"] + 35 + 17)
        try:
            page.wait_for_selector(".gdg-input", timeout=5_000)  # the cell editor opened...
            if page.locator(".gdg-input").input_value() != "0":  # ...on north's q1, which holds 0
                page.keyboard.press("Escape")
                continue
            type_into_open_cell(page, text)  # the editor opens with its text selected: typing replaces the 0
            # the run triggered by the edit ends by writing q into the URL
            page.wait_for_function(f"() => location.search.includes('q={text}%2C')", timeout=15_000)
            return True
        except Exception:  # noqa: BLE001 - the editor closed or the run never came: try again
            page.keyboard.press("Escape")
            wait_idle(page)
    return False


def test_editing_a_grid_cell_changes_the_heatmap(page, app_url):
    open_page(page, app_url, "")
    before = heatmap_weights(page)
    page.wait_for_selector('[data-testid="stDataFrame"] canvas')
    grid = page.locator('[data-testid="stDataFrame"]').first  # the Q|K|V grid
    assert edit_first_q(page, grid, "5"), "could not edit north's q1 by double-click, type, Enter"
    wait_idle(page)
    after = heatmap_weights(page)
    assert_no_exception(page)
    assert not np.allclose(before[0], after[0]), "editing q_0 should change row 0 of the weights"
    np.testing.assert_allclose(before[1:], after[1:], atol=1e-12)  # other queries untouched
    assert "q=5" in page.url.replace("%2C", ",")  # the edit is in the shareable URL


def test_causal_toggle_zeroes_the_upper_triangle(page, app_url):
    open_page(page, app_url, "")
    assert np.triu(heatmap_weights(page), 1).any()
    page.get_by_text("Causal mask", exact=True).click()
    wait_idle(page)
    w = heatmap_weights(page)
    assert np.all(np.triu(w, 1) == 0)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-9)
    assert "causal=1" in page.url


def test_a_copied_url_shows_the_same_heatmap_in_a_new_browser(page, app_url, browser):
    open_page(page, app_url, "")
    page.get_by_text("Causal mask", exact=True).click()
    wait_idle(page)
    page.get_by_label("Token labels", exact=True).fill("the cat sat down")
    page.keyboard.press("Enter")
    wait_idle(page)
    url, weights = page.url, heatmap_weights(page)
    other = browser.new_context(viewport={"width": 1200, "height": 900})
    try:
        student = other.new_page()
        student.goto(url)
        wait_idle(student)
        assert_no_exception(student)
        np.testing.assert_allclose(heatmap_weights(student), weights, atol=1e-12)
        ticks = student.locator(HEATMAP).first.evaluate("el => el.layout.xaxis.ticktext")
        assert ticks == ["the", "cat", "sat", "down"]
    finally:
        other.close()


def test_the_page_works_on_a_phone_sized_screen(browser, app_url):
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    try:
        phone = ctx.new_page()
        open_page(phone, app_url, "")
        assert_no_exception(phone)
        assert heatmap_weights(phone).shape == (4, 4)
        chart = phone.locator('[data-testid="stPlotlyChart"]').first.bounding_box()
        assert chart["width"] <= 390  # the heatmap fits the screen instead of overflowing it
        screenshot(phone, "playground_phone")
    finally:
        ctx.close()


def test_a_switch_redraws_the_heatmap_and_an_open_step_by_step_box_alike(page, app_url):
    # The switches and the heatmap are a section of the page (a click reruns them alone); the step tables below
    # also show the mask, so while their box is open a switch must rerun the whole page.
    open_page(page, app_url, "")
    page.get_by_text("Step by step: the seven matrices from Q to the output").click()
    wait_idle(page)
    masked = page.locator('[data-testid="stMarkdownContainer"]', has_text="5. Masked scores")
    expect(masked).to_contain_text("causal mask off")
    page.get_by_text("Causal mask", exact=True).click()
    wait_idle(page)
    expect(masked).to_contain_text("−∞ above the diagonal")
    assert np.all(np.triu(heatmap_weights(page), 1) == 0)
    assert_no_exception(page)


# Records, from the page's first script on, when the heatmap was first drawn and when the grid and its
# placeholder were first in the document (ms since navigation; null while not seen), and the distance from the
# sentence above the grid to the token labels' box below it while the placeholder held the grid's place.
ORDER_RECORDER = """
window.__gap = () => {
  const above = [...document.querySelectorAll('[data-testid="stMarkdownContainer"]')]
    .find((e) => e.innerText.includes('Double-click a cell'));
  const below = [...document.querySelectorAll('[data-testid="stTextInput"]')]
    .find((e) => e.innerText.includes('Token labels'));
  return above && below ? below.getBoundingClientRect().top - above.getBoundingClientRect().top : null;
};
window.__order = {heatmap: null, grid: null, placeholder: null, gapWaiting: null};
new MutationObserver(() => {
  const o = window.__order, now = performance.now();
  const chart = document.querySelector('[data-testid="stPlotlyChart"] .js-plotly-plot');
  const grid = document.querySelector('[data-testid="stDataFrame"]');
  const waiting = document.body.innerText.includes("The grid of Q, K and V is on its way");
  if (o.heatmap === null && chart && chart._fullData) o.heatmap = now;
  if (o.grid === null && grid) o.grid = now;
  if (o.placeholder === null && waiting) o.placeholder = now;
  if (waiting && !grid) o.gapWaiting = window.__gap();
}).observe(document, {subtree: true, childList: true, attributes: true});
"""
PLACEHOLDER = "The grid of Q, K and V is on its way: it comes just after the heatmap."
GRID = '[data-testid="stDataFrame"]'


def test_a_first_visit_draws_the_heatmap_before_the_grid_and_nothing_below_moves(page, app_url):
    page.add_init_script(ORDER_RECORDER)
    page.goto(app_url)
    expect(page.locator(GRID)).to_be_visible(timeout=60_000)  # brought by the browser's signal
    expect(page.get_by_text(PLACEHOLDER)).to_have_count(0)
    wait_idle(page)
    order = page.evaluate("() => window.__order")
    assert None not in (order["placeholder"], order["heatmap"], order["grid"]), order
    assert order["placeholder"] < order["heatmap"] < order["grid"], order  # the first run held a box, no grid
    # The box was as tall as the grid: the token labels sit where they sat while it waited.
    assert order["gapWaiting"] is not None, order
    assert abs(page.evaluate("() => window.__gap()") - order["gapWaiting"]) <= 1, order
    assert_no_exception(page)


def test_the_grid_comes_at_once_once_a_session_has_had_it(page, app_url):
    open_page(page, app_url, "")
    expect(page.locator(GRID)).to_be_visible(timeout=30_000)
    page.get_by_role("link", name="Predict, then check").click()
    expect(page.get_by_role("heading", name="Predict, then check")).to_be_visible()
    wait_idle(page)
    page.evaluate(ORDER_RECORDER)  # from here on: a page change in the app, not a new document
    page.get_by_role("link", name="Playground").click()
    expect(page.get_by_role("heading", name="Attention playground")).to_be_visible(timeout=30_000)
    wait_idle(page)
    expect(page.locator(GRID)).to_have_count(1)  # the Playground's, not Predict's two
    expect(page.locator(GRID)).to_be_visible()
    assert page.evaluate("() => window.__order.placeholder") is None  # never the box: the grid in the first run


def test_the_grid_comes_even_when_the_heatmap_is_never_drawn(page, app_url):
    # The chart's code refused (a network that drops it): the signal stops waiting after ui.after_charts's
    # GIVE_UP_MS and asks for the grid all the same.
    from ui.after_charts import GIVE_UP_MS

    page.route("**/PlotlyChart.*.js", lambda route: route.abort())
    page.add_init_script(ORDER_RECORDER)
    page.goto(app_url)
    expect(page.locator(GRID)).to_be_visible(timeout=GIVE_UP_MS + 60_000)
    order = page.evaluate("() => window.__order")
    assert order["placeholder"] is not None and order["heatmap"] is None, order  # it waited; no chart came
    assert order["grid"] - order["placeholder"] >= GIVE_UP_MS - 500, order  # and it waited the time out


def test_the_grid_comes_with_the_next_run_when_the_signal_never_does(page, app_url):
    # The signal's own code refused: the box stays until the page runs again (here: new token labels), and
    # that run draws the grid.
    page.route("**/BidiComponent.*.js", lambda route: route.abort())
    page.goto(app_url)
    expect(page.get_by_text(PLACEHOLDER)).to_be_attached(timeout=60_000)
    labels = page.get_by_label("Token labels", exact=True)
    labels.fill("one two three four")
    labels.press("Enter")
    expect(page.locator(GRID)).to_be_visible(timeout=30_000)
    expect(page.get_by_text(PLACEHOLDER)).to_have_count(0)
    assert_no_exception(page)


def loaded_libraries(pid: int) -> str:
    """The shared libraries process `pid` has loaded (Linux: /proc/PID/maps): an imported pandas shows there."""
    with open(f"/proc/{pid}/maps") as maps:
        return maps.read()


def test_a_first_visit_to_a_fresh_server_draws_the_heatmap_without_importing_pandas(browser):
    # pandas (with pyarrow, ~0.27 s to import) is needed by the grid and the tables, not by the first run's
    # heatmap: a server's first visitor should not wait for it (docs/performance.md, "pandas when a table is
    # drawn"). The signal's code refused, so the first run is the only one until the labels change.
    from tests.browser.conftest import start_server

    proc, url = start_server()
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.route("**/BidiComponent.*.js", lambda route: route.abort())
        page.goto(url)
        page.wait_for_function(
            f"() => [...document.querySelectorAll('{HEATMAP}')].some(c => c._fullData)", timeout=60_000
        )
        expect(page.get_by_text(PLACEHOLDER)).to_be_attached()
        # the run over (wait_idle would wait for the box to go, which here it never does)
        expect(page.get_by_test_id("stApp")).to_have_attribute("data-test-script-state", "notRunning")
        assert "pandas/_libs" not in loaded_libraries(proc.pid)
        labels = page.get_by_label("Token labels", exact=True)
        labels.fill("one two three four")
        labels.press("Enter")
        expect(page.locator(GRID)).to_be_visible(timeout=30_000)
        assert "pandas/_libs" in loaded_libraries(proc.pid)  # the grid's run imports it: the check can see it
        assert_no_exception(page)
    finally:
        context.close()
        proc.terminate()
        proc.wait(timeout=10)
