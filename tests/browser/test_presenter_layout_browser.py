"""Presenter mode on a projector-sized window (#18): every page at 1280 × 720 (the Playground and the class page at
1920 × 1080 too), nothing cut, and the Playground's heatmap first and large. Screenshots are saved for a person to
look at."""

from __future__ import annotations

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

from tests.browser.conftest import PAGES, WAIT_MS, assert_no_exception, open_page, screenshot, wait_idle

SIZES = [(1280, 720), (1920, 1080)]
# Every page a teacher projects: the twelve lesson pages and the class page (#44: controls cut on the projector).
PROJECTED = [*PAGES, "class"]

# Text that CSS cut with an ellipsis or a hidden overflow: the box is narrower than what it holds. It looks at the
# innermost elements only, so it misses a cut made by a box around them, as Streamlit's ellipsis on the markdown
# container around a control's label (which hid the end of "Normalise as AttentionViz" on /pretrained_deeper, #44):
# the labels of controls are CUT_LABELS's.
CUT_TEXT = """() => Array.from(document.querySelectorAll(
    '[data-testid="stWidgetLabel"] *, [data-testid="stMarkdownContainer"] *, button *, label *'))
  .filter(e => e.offsetParent !== null && e.children.length === 0 && e.textContent.trim())
  .filter(e => { const s = getComputedStyle(e);
                 return (s.textOverflow === 'ellipsis' || s.overflowX === 'hidden' || s.overflow === 'hidden')
                        && e.scrollWidth > e.clientWidth + 1; })
  .map(e => `${e.tagName}.${e.className}: ${JSON.stringify(e.textContent.slice(0, 60))}`)"""
# The label of every kind of control: the name a person reads on a toggle, checkbox, radio (its question and each
# option), selectbox, slider, text or number box, button, popover, page link, expander header or tab.
LABELS = ", ".join(
    [
        '[data-testid="stWidgetLabel"]',  # toggles, checkboxes, radios' questions, selectboxes, sliders, text boxes
        '[data-testid="stRadio"] [role="radiogroup"] label',  # each option of a radio
        '[data-testid="stButton"] button',
        '[data-testid="stDownloadButton"] button',
        '[data-testid="stFormSubmitButton"] button',
        '[data-testid="stLinkButton"] a',
        '[data-testid="stPopover"] button',
        '[data-testid="stPageLink"] a',
        '[data-testid="stExpander"] summary',
        '[role="tab"]',
        '[data-testid="stButtonGroup"] button',  # pills and segmented controls
    ]
)
# The labels (matched by the selector it is given, LABELS) that are not whole, in three ways, each measured on
# what the browser laid out:
# 1. cut: a box in the label that cuts its overflow (an ellipsis, overflow hidden or clip) is narrower than what
#    it holds (scrollWidth > clientWidth), or shorter (overflow-y hidden, as a line clamp);
# 2. pushed out: a line of its text (the client rects of a Range over each text node, which span the whole text
#    even where an ellipsis hides its end) reaches past its column (or the popover, or the page's block), past the
#    window, or past any box around it that clips;
# 3. overlapping: a line of its text lies over a line of another label's text (in the same layer: a popover's
#    open menu lies over the page by design).
# A label counts only while it is rendered and visible (checkVisibility: not in a closed expander, an inactive tab
# or the collapsed sidebar). Tolerances of 1 px absorb subpixel rounding.
CUT_LABELS = r"""selector => {
  const main = document.querySelector('[data-testid="stMain"]');
  const shown = e => e.checkVisibility({visibilityProperty: true, opacityProperty: true});
  const labels = Array.from(document.querySelectorAll(selector))
    .filter(e => !e.closest('[data-testid="stSidebar"]') && shown(e) && e.innerText.trim());
  const name = e => JSON.stringify(e.innerText.trim().replace(/\s+/g, ' ').slice(0, 60));
  const px = b => `${Math.round(b.left)}-${Math.round(b.right)} px`;
  const found = [];
  const lines = labels.map(label => {
    for (const e of [label, ...label.querySelectorAll('*')]) {
      if (!shown(e) || !(e.innerText ?? '').trim()) continue;  // an icon's <svg> has no innerText
      const s = getComputedStyle(e);
      const cuts = s.textOverflow === 'ellipsis' || s.overflowX === 'hidden' || s.overflowX === 'clip';
      if (cuts && e.scrollWidth > e.clientWidth + 1)
        found.push(`${name(label)} is cut: its ${e.tagName.toLowerCase()} shows ${e.clientWidth} of ${e.scrollWidth} px`
                   + (s.textOverflow === 'ellipsis' ? ' (an ellipsis)' : ''));
      if ((s.overflowY === 'hidden' || s.overflowY === 'clip') && e.scrollHeight > e.clientHeight + 1)
        found.push(`${name(label)} is cut: its ${e.tagName.toLowerCase()} shows ${e.clientHeight} of `
                   + `${e.scrollHeight} px of height`);
    }
    const frame = label.closest('[data-testid="stColumn"], [data-testid="stPopoverBody"]')
      || main.querySelector('[data-testid="stMainBlockContainer"]') || main;
    const f = frame.getBoundingClientRect();
    const rects = [];
    const walk = document.createTreeWalker(label, NodeFilter.SHOW_TEXT);
    for (let t = walk.nextNode(); t; t = walk.nextNode()) {
      if (!t.textContent.trim() || !shown(t.parentElement)) continue;
      const range = document.createRange();
      range.selectNodeContents(t);
      for (const b of range.getClientRects()) {
        if (b.width < 1) continue;
        rects.push(b);
        if (b.left < Math.max(f.left, 0) - 1 || b.right > Math.min(f.right, innerWidth) + 1)
          found.push(`${name(label)} runs out of its ${frame.getAttribute('data-testid')} or the window: text at `
                     + `${px(b)}, room at ${px(f)}`);
        for (let a = t.parentElement.parentElement; a && a !== main && a !== document.body; a = a.parentElement) {
          const s = getComputedStyle(a), k = a.getBoundingClientRect();
          const x = s.overflowX !== 'visible' && (b.left < k.left - 1 || b.right > k.right + 1);
          const y = (s.overflowY === 'hidden' || s.overflowY === 'clip')
                    && (b.top < k.top - 1 || b.bottom > k.bottom + 1);
          if (x || y) {
            const box = `${a.tagName.toLowerCase()}[${a.getAttribute('data-testid') || a.className}]`;
            found.push(`${name(label)} is cut by a ${box} around it: text at ${px(b)}, box at ${px(k)}`);
            break;
          }
        }
      }
    }
    return {label, rects, layer: label.closest('[data-testid="stPopoverBody"]')};
  });
  const over = (p, q) => Math.min(p.right, q.right) - Math.max(p.left, q.left) > 1
                         && Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top) > 1;
  for (let i = 0; i < lines.length; i++) for (let j = i + 1; j < lines.length; j++) {
    const a = lines[i], b = lines[j];
    if (a.layer !== b.layer || a.label.contains(b.label) || b.label.contains(a.label)) continue;
    if (a.rects.some(p => b.rects.some(q => over(p, q)))) found.push(`${name(a.label)} overlaps ${name(b.label)}`);
  }
  return [...new Set(found)];
}"""
# Grids whose columns run past their frame (a scroll bar hides some of them).
CUT_GRIDS = """() => Array.from(document.querySelectorAll('[data-testid="stDataFrame"] .dvn-scroller'))
  .filter(e => e.offsetParent !== null && e.scrollWidth > e.clientWidth + 1)
  .map(e => `${e.scrollWidth} px of columns in a ${e.clientWidth} px frame, at y = ${e.getBoundingClientRect().y}`)"""
CLOSED_EXPANDERS = '[data-testid="stMain"] [data-testid="stExpander"] details:not([open])'


def assert_none(page, check: str, when: str, arg=None, timeout: float = 15_000) -> None:
    """Wait until the page's `check` (one of the scripts above, given `arg`) finds nothing; else fail with what it
    found.

    A layout can still move a moment after the app is idle (a font, a chart resizing its column): the wait
    polls, and gives up after `timeout`, which a page that passes never spends."""
    try:
        page.wait_for_function(f"arg => ({check})(arg).length === 0", arg=arg, polling=200, timeout=timeout)
    except PlaywrightTimeoutError:
        found = page.evaluate(check, arg)
        raise AssertionError(f"{when}:\n" + "\n".join(found)) from None


def open_every_expander(page) -> None:
    """Open every expander of the page at once (some draw their content only while open: each opening is a rerun),
    then wait until none is closed and the app is idle. One that appears inside a box opened is opened in turn."""
    closed = page.locator(CLOSED_EXPANDERS)
    for _ in range(3):
        if not closed.count():
            return
        # clicked in the page, all in one go: a click waits for nothing, and no index moves under it
        closed.locator("> summary").evaluate_all("summaries => summaries.forEach(s => s.click())")
        expect(closed).to_have_count(0)
        wait_idle(page)


@pytest.fixture
def projector(browser, request):
    width, height = request.param
    ctx = browser.new_context(viewport={"width": width, "height": height})
    page = ctx.new_page()
    page.set_default_timeout(WAIT_MS)
    yield page, width, height
    ctx.close()


# Presenter mode's text has one size at every width (21 px), so the larger projector lays the same text out in more
# room: every page is checked on the smaller one, and on the larger the pages whose layout changes most with the
# width (the Playground's heatmap beside its controls, the class page's columns).
ON_EVERY_PROJECTOR = ("", "class")
PROJECTIONS = [(path, size) for path in PROJECTED for size in SIZES if size == SIZES[0] or path in ON_EVERY_PROJECTOR]


@pytest.mark.parametrize(
    "path, projector",
    PROJECTIONS,
    indirect=["projector"],
    ids=[f"{path or 'playground'}-{w}x{h}" for path, (w, h) in PROJECTIONS],
)
def test_nothing_is_cut_in_presenter_mode(projector, app_url, path):
    """No text cut, no grid wider than its frame, and every control's label whole (CUT_LABELS): as the page opens,
    and on the smaller projector with every expander open too (the controls inside: the sequence editor, the
    chart's Numbers box with its download buttons, the class page's boxes). The Export popovers are not opened:
    each holds the same CSV and JSON buttons as the Numbers boxes."""
    page, width, height = projector
    open_page(page, app_url, path, "present=1")
    assert_no_exception(page)
    assert_none(page, CUT_TEXT, "text cut")
    expect(page.locator('[data-testid="stMain"]').locator(LABELS).first).to_be_visible()  # the check sees labels
    assert_none(page, CUT_LABELS, "labels not whole", LABELS)
    assert_none(page, CUT_GRIDS, "grids wider than their frame")
    screenshot(page, f"presenter_{path or 'playground'}_{width}x{height}")
    if width == SIZES[0][0]:
        open_every_expander(page)
        assert_no_exception(page)
        assert_none(page, CUT_LABELS, "labels not whole with every expander open", LABELS)


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
