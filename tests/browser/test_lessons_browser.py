"""pages/predict.py, pages/causal.py and pages/pitfalls.py (the lesson pages) in a real browser."""

import re

import numpy as np
import pytest
from playwright.sync_api import expect

from attention import scaled_dot_product_attention
from lessons.puzzles import PUZZLES_BY_ID
from tests.browser.conftest import assert_no_exception, open_page, screenshot, wait_idle

CHARTS = '[data-testid="stPlotlyChart"] .js-plotly-plot'


def heatmap_count(page) -> int:
    """How many charts on the page draw a heatmap (the d_k = 2 arrows figure is a scatter plot)."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('.js-plotly-plot'))
        .filter(el => (el._fullData || []).some(t => t.type === 'heatmap')).length""")


def pick(page, label: str, option: str) -> None:
    """Choose `option` in the selectbox labelled `label`, by clicking like a student."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    box = page.locator('[data-testid="stSelectbox"]').filter(has_text=label)
    choice = page.get_by_role("option", name=option, exact=True)
    for _ in range(3):  # a rerun that lands just as the box is clicked can close the list again
        box.click()
        try:
            choice.wait_for(timeout=5_000)
            break
        except PlaywrightTimeoutError:
            page.keyboard.press("Escape")
            wait_idle(page)
    choice.click()
    wait_idle(page, settle=1.0)  # and any run the first one starts


@pytest.mark.parametrize("path", ["predict", "causal", "pitfalls"])
def test_each_lesson_page_loads_without_exception(page, app_url, path):
    open_page(page, app_url, path)
    assert_no_exception(page)
    expect(page.locator('[data-testid="stHeading"], h1').first).to_be_visible()
    screenshot(page, path)


def test_predict_flow_by_clicking(page, app_url):
    open_page(page, app_url, "predict")
    expect(page.get_by_text("The weights stay hidden")).to_be_visible()
    reveal = page.get_by_role("button", name=re.compile("Check my guesses"))
    expect(reveal).to_be_disabled()
    assert heatmap_count(page) == 0  # no heatmap before the guesses
    pick(page, "q_0 'east' attends most to", "k_0 'east'")
    pick(page, "q_1 'north' attends most to", "k_0 'east'")  # a deliberate miss
    expect(reveal).to_be_disabled()  # one query still has no guess
    pick(page, "q_2 'west' attends most to", "k_2 'west'")
    expect(reveal).to_be_enabled()
    reveal.click()
    wait_idle(page)
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll('.js-plotly-plot'))"
        ".some(el => (el._fullData || []).some(t => t.type === 'heatmap'))"
    )
    assert_no_exception(page)
    expect(page.locator('[data-testid="stMetricValue"]').first).to_have_text("2 / 3")
    p = PUZZLES_BY_ID["aligned"]
    heatmap = page.locator(CHARTS).last  # the arrows figure, if drawn, comes first
    z = heatmap.evaluate("el => Array.from(el._fullData[0].z, row => Array.from(row))")
    np.testing.assert_allclose(
        np.array(z, dtype=float), scaled_dot_product_attention(p.seq.q, p.seq.k, p.seq.v)[1], atol=1e-9
    )
    expect(page.get_by_text("You picked k_0 'east' (q_1·k_0 = 0")).to_be_visible()
    screenshot(page, "predict_revealed")


def test_causal_randomise_passes_the_check(page, app_url):
    open_page(page, app_url, "causal")
    page.get_by_role("button", name=re.compile("Randomise later tokens")).click()
    wait_idle(page, settle=1.0)  # and any run the first one starts
    assert_no_exception(page)
    expect(page.get_by_text(re.compile("Check passed"))).to_be_visible()
    screenshot(page, "causal_randomised")
