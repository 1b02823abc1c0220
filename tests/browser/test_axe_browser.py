"""axe-core on every page (#32): no serious or critical WCAG 2.0/2.1/2.2 A or AA violation, except in
Streamlit's own sidebar navigation markup (its <ul> of page links holds <div>s between the list and its
items: `list`/`listitem`), which this app does not write and leaves alone (docs/accessibility.md).

axe-core is pinned in package.json and installed by `npm ci` (scripts/test.sh); it is injected into each
page by Playwright."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.conftest import (
    PAGES,
    ROOT,
    assert_no_exception,
    browser_required,
    open_page,
    type_into_open_cell,
    wait_idle,
)

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
STREAMLIT_NAV = '[data-testid="stSidebarNav"]'
RUN_AXE = """async ([tags, nav]) => {
  const result = await axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
  const out = [];
  for (const v of result.violations) {
    if (!['serious', 'critical'].includes(v.impact)) continue;
    for (const node of v.nodes) {
      const el = document.querySelector(node.target[0]);
      const inNav = el && el.closest(nav) && ['list', 'listitem'].includes(v.id);
      if (!inNav) out.push(`${v.id} (${v.impact}): ${node.target.join(' ')}: ${node.failureSummary}`);
    }
  }
  return out;
}"""


@pytest.fixture(scope="module")
def axe_source() -> str:
    if not AXE.exists():
        if browser_required():
            pytest.fail(f"{AXE} is missing: run `npm ci` (package.json pins axe-core)")
        pytest.skip("axe-core is not installed (npm ci)")
    return Path(AXE).read_text()


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p or "playground")
def test_no_serious_accessibility_violation_outside_streamlits_navigation(page, app_url, axe_source, path):
    page.goto(f"{app_url}/{path}")
    wait_idle(page, timeout=180_000)  # the real-model pages load their weights on a first visit
    assert_no_exception(page)
    page.add_script_tag(content=axe_source)
    assert page.evaluate(RUN_AXE, [TAGS, STREAMLIT_NAV]) == []


FOCUSED = """() => { const e = document.activeElement;
  return `${e.tagName} ${(e.getAttribute('aria-label') || e.innerText || '').slice(0, 60)} ${e.dataset.testid}`; }"""


def tab_to(page, wanted: str, limit: int = 120) -> None:
    """Press Tab until the focused element's description contains `wanted`."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if wanted in page.evaluate(FOCUSED):
            return
    raise AssertionError(f"{limit} Tabs never reached {wanted!r}")


def test_the_playground_and_a_lesson_work_with_the_keyboard_alone(page, app_url):
    open_page(page, app_url, "")
    tab_to(page, "data-grid-canvas")  # into the Q|K|V grid: a cell is selected
    page.keyboard.press("ArrowRight")  # from the label to north's q1
    page.keyboard.press("Enter")
    page.wait_for_selector(".gdg-input")
    type_into_open_cell(page, "7")
    page.wait_for_function("() => location.search.includes('q=7%2C2')")  # north's q1 is now 7
    wait_idle(page)
    page.keyboard.press("Shift+Tab")
    tab_to(page, "INPUT Causal mask ")  # the switch, not its help button nor the sidebar link "Causal masking"
    page.keyboard.press("Space")
    wait_idle(page)
    assert "causal=1" in page.url
    tab_to(page, "Step by step")
    page.keyboard.press("Enter")
    wait_idle(page)
    page.get_by_text("7. Output = weights @ V").wait_for()  # the seven steps, opened by Enter
    page.keyboard.press("Shift+Tab")
    tab_to(page, "Causal masking")  # the sidebar's link to the lesson (Tab wraps round to the sidebar)
    page.keyboard.press("Enter")
    wait_idle(page)
    assert page.url.split("?")[0].endswith("/causal")
    tab_to(page, "Numbers of this chart")  # a chart's numbers, one Enter away
    page.keyboard.press("Enter")
    wait_idle(page)
    page.locator('[data-testid="stTable"] table').first.wait_for()


def test_a_chart_costs_the_keyboard_two_stops_not_nine(page, app_url):
    open_page(page, app_url, "")
    buttons = page.locator('[data-testid="stPlotlyChart"]').first.locator(".modebar-btn")
    buttons.first.wait_for(state="attached")
    labels = buttons.evaluate_all("bs => bs.map(b => b.getAttribute('data-title'))")
    assert labels == ["Download plot as a PNG", "Fullscreen"]  # no zoom and pan buttons to tab through
