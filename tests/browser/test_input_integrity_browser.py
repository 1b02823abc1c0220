"""What a student types is what the app computes (#19), tried in Chromium the way a student would:
double-click a grid cell, type, Enter; repeated words as labels on every page; Back after a page visit;
the Playground at its largest size."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest
from playwright.sync_api import expect

from lessons.examples import random_example
from tests.browser.conftest import assert_no_exception, open_page, screenshot, type_into_open_cell, wait_idle
from ui.sequence import format_number
from ui.url import encode_sequence

GRID = '[data-testid="stDataFrame"]'
ALERTS = '[data-testid="stAlert"]'
TOKEN_PX, CELL_PX, HEADER_PX, ROW_PX = 76, 54, 35, 35  # the grid's column widths and row heights


def q_from_url(page) -> np.ndarray:
    """The Q matrix as the page wrote it into its link (the numbers the maths is using)."""
    raw = parse_qs(urlparse(page.url).query)["q"][0]
    return np.array([[float(x) for x in row.split(",")] for row in raw.split(";")])


def open_cell(page, row: int, col: int, attempts: int = 5) -> str:
    """Double-click the Q|K|V grid's number cell (row, col) open; return the text its editor shows."""
    grid = page.locator(GRID).first
    for _ in range(attempts):
        grid.scroll_into_view_if_needed()
        wait_idle(page, settle=0.3)
        box = grid.bounding_box()
        page.mouse.dblclick(box["x"] + TOKEN_PX + CELL_PX * col + CELL_PX / 2, box["y"] + HEADER_PX + ROW_PX * row + 17)
        try:
            page.wait_for_selector(".gdg-input", timeout=4_000)
            return page.locator(".gdg-input").input_value()
        except Exception:  # noqa: BLE001 - a rerun redrew the grid under the mouse: try again
            page.keyboard.press("Escape")
    raise AssertionError(f"could not open the grid cell ({row}, {col})")


def type_into_cell(page, row: int, col: int, text: str) -> None:
    """Open the cell, type `text` over its content, press Enter, and wait for the run it causes."""
    open_cell(page, row, col)
    type_into_open_cell(page, text)  # the editor opens with its text selected: typing replaces it
    expect(page.locator(".gdg-input")).to_have_count(0)  # the editor closed on the commit
    wait_idle(page, settle=1.0)  # and the run the edit starts


@pytest.mark.parametrize("typed, expected", [("1e3", 1000.0), ("1e-3", 0.001), ("−1", -1.0), ("2.5", 2.5)])
def test_a_number_typed_into_the_grid_reaches_the_maths_exactly(page, app_url, typed, expected):
    open_page(page, app_url, "")
    type_into_cell(page, 0, 0, typed)  # north's q1
    assert_no_exception(page)
    expect(page.locator(ALERTS)).to_have_count(0)
    assert q_from_url(page)[0, 0] == expected  # not 13, -13 or ignored, as NumberColumn's parsing made them
    assert open_cell(page, 0, 0) == format_number(expected)  # and the cell shows the number it holds (1000)
    page.keyboard.press("Escape")


@pytest.mark.parametrize(
    "typed, reason",
    [
        ("3,5", "a decimal point, not a comma: 3.5"),
        ("0.1+0.2", "is not a number"),
        ("1001", "is too large"),
        ("1e309", "is too large"),
        ("-inf", "is not a finite number"),
    ],
)
def test_a_value_the_grid_cannot_take_is_refused_naming_the_cell(page, app_url, typed, reason):
    open_page(page, app_url, "")
    before = q_from_url(page)
    type_into_cell(page, 1, 1, typed)  # east's q2, which holds 2
    assert_no_exception(page)
    message = " ".join(page.locator(ALERTS).all_inner_texts())
    assert "Q, row 2 ('east'), column q2" in message and f"'{typed}'" in message and reason in message, message
    assert "keeps its previous value, 2" in message
    np.testing.assert_array_equal(q_from_url(page), before)  # the maths kept the old number
    assert open_cell(page, 1, 1) == "2"  # and the cell shows it again, not "None"
    page.keyboard.press("Escape")


REPEATED = "the cat sat the"


NAV = {"heads": "Multi-head attention", "block": "The transformer block"}
PAGES_WITH_LABELS = [
    ("", ""),
    ("causal", ""),
    ("pitfalls", ""),
    ("predict", "puzzle=own"),
    ("heads", ""),
    ("block", ""),
]


@pytest.mark.parametrize("path, query", PAGES_WITH_LABELS)
def test_repeated_words_as_labels_on_every_page_that_shows_labels(page, app_url, path, query):
    # heads and block show the Playground's tokens: type them there, then go over by the sidebar (same session)
    open_page(page, app_url, "" if path in NAV else path, query)
    page.get_by_label("Token labels", exact=True).first.fill(REPEATED)
    page.keyboard.press("Enter")
    wait_idle(page)
    if path in NAV:
        page.locator('[data-testid="stSidebarNav"]').get_by_text(NAV[path], exact=True).click()
        wait_idle(page)
    assert_no_exception(page)
    if path == "predict":  # no heatmap before the reveal: the guesses name each query by its token
        labels = page.locator('[data-testid="stWidgetLabel"]').all_inner_texts()
        assert sum("'the' attends most to" in label for label in labels) == 2
        return
    ticks = page.locator('[data-testid="stPlotlyChart"] .xtick text, [data-testid="stPlotlyChart"] .ytick text')
    expect(ticks.filter(has_text="the").nth(1)).to_be_attached()  # the repeated word is shown as typed


def test_repeated_words_in_the_real_models_sentence(page, app_url):
    open_page(page, app_url, "pretrained", "text=the+the+the+cat+the")
    assert_no_exception(page)
    expect(page.locator('[data-testid="stPlotlyChart"]').nth(1)).to_be_attached()


def test_back_after_a_page_visit_returns_to_the_page_before(page, app_url):
    # Issue #19: each visit added two entries (the page, then its state written into the link).
    open_page(page, app_url, "")
    page.get_by_text("Causal mask", exact=True).click()  # a deliberate change: one entry of its own
    wait_idle(page)
    page.locator('[data-testid="stSidebarNav"]').get_by_text("Causal masking", exact=True).click()
    wait_idle(page)
    assert urlparse(page.url).path.endswith("/causal") and "t=" in page.url  # arrived, and wrote its state
    page.go_back()
    wait_idle(page)
    assert urlparse(page.url).path in ("", "/"), page.url  # one press: back on the Playground ...
    assert "causal=1" in page.url  # ... as it was left
    page.go_back()
    wait_idle(page)
    assert "causal=0" in page.url  # one more: before the toggle


RACE_JS = """([path, query]) => {
  const before = history.length, start = location.href;
  window.dispatchEvent(new Event("pointerdown"));  // the click on the other page's link
  history.pushState({}, "", location.pathname + query);  // its state written under the old page's path
  history.pushState({}, "", path + query);  // and then the move to its own path, with that state
  return {added: history.length - before, start, now: location.href};
}"""


MAIN_SCROLL = """() => document.querySelector('[data-testid="stMain"]').scrollTop"""


def test_a_page_the_script_moves_to_opens_at_its_top(page, app_url):
    """A move made by the script, not by a sidebar link (here a lesson opened from low on /class; in class mode the
    teacher's start of a lesson, a student taken along by the teacher's move), opens the new page at its top: on a
    projector the step's bar and question must be in view, not the middle of the page."""
    page.set_viewport_size({"width": 1280, "height": 500})
    try:
        open_page(page, app_url, "class")
        opener = page.get_by_role("button", name="Open the lesson")
        opener.scroll_into_view_if_needed()
        page.wait_for_function(f"() => ({MAIN_SCROLL})() > 100")  # /class scrolled down to the button
        opener.click()
        expect(page.get_by_text("Step 1 of").first).to_be_visible()
        assert not urlparse(page.url).path.endswith("/class"), page.url  # the step's page
        page.wait_for_function(f"() => ({MAIN_SCROLL})() === 0")
        expect(page.locator(".st-key-lesson_alone_next")).to_be_in_viewport()
    finally:
        page.set_viewport_size({"width": 1400, "height": 1000})


def test_a_new_pages_state_written_before_its_path_adds_no_entry_of_the_old_page(page, app_url):
    # Streamlit's client sometimes handles a page's first write of its link before the move to that page
    # (both arrive together): the write then added an entry with the old page's path and the new page's
    # state, and Back opened the Playground with the Causal page's sentence. This plays that order.
    open_page(page, app_url, "")
    query = "?tokens=The+cat&t=2"
    raced = page.evaluate(RACE_JS, ["/causal", query])
    assert raced["added"] == 1 and raced["now"].endswith("/causal" + query), raced
    page.evaluate("history.back()")
    page.wait_for_function("start => location.href === start", arg=raced["start"])
    # a deliberate change within a page still adds its entry, and a click on another page's link one more
    open_page(page, app_url, "")  # a new entry at the end of the history (after Back, a push replaces)
    again = page.evaluate(
        """() => { const before = history.length;
                   window.dispatchEvent(new Event("pointerdown"));
                   history.pushState({}, "", location.pathname + "?causal=1");
                   window.dispatchEvent(new Event("pointerdown"));
                   history.pushState({}, "", "/causal?causal=1");
                   return history.length - before; }"""
    )
    assert again == 2


def annotation_boxes(page) -> list[dict]:
    return page.locator('[data-testid="stPlotlyChart"] .js-plotly-plot').first.evaluate(
        """el => Array.from(el.querySelectorAll('g.heatmap-label text'))
                .map(t => t.getBoundingClientRect()).filter(r => r.width > 0)
                .map(r => ({x: r.x, y: r.y, w: r.width, h: r.height}))"""
    )


def overlapping(boxes: list[dict]) -> list[tuple[int, int]]:
    return [
        (i, j)
        for i, a in enumerate(boxes)
        for j, b in enumerate(boxes[:i])
        if a["x"] < b["x"] + b["w"]
        and b["x"] < a["x"] + a["w"]
        and a["y"] < b["y"] + b["h"]
        and b["y"] < a["y"] + a["h"]
    ]


@pytest.mark.parametrize("n", [12, 16])
def test_the_largest_playground_has_square_cells_and_numbers_that_never_overprint(page, app_url, n):
    seq = random_example(n, 16, 16, seed=1).seq
    open_page(page, app_url, "", "&".join(f"{k}={v}" for k, v in encode_sequence(seq).items()))
    assert_no_exception(page)
    area = page.locator('[data-testid="stPlotlyChart"] .js-plotly-plot .nsewdrag').first.bounding_box()
    main = page.locator('[data-testid="stMainBlockContainer"]').first.evaluate(
        "el => { const s = getComputedStyle(el); "
        "return el.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight); }"
    )
    assert abs(area["width"] - area["height"]) <= 2  # square cells
    assert area["width"] >= 0.4 * main  # a size worth looking at: 40 % of the main column
    boxes = annotation_boxes(page)
    assert not overlapping(boxes)  # numbers shown only where they fit (hidden at 16: the hover has them)
    if n == 12:
        assert len(boxes) == 144  # readable numbers up to n = 12
    screenshot(page, f"playground_{n}x{n}")
