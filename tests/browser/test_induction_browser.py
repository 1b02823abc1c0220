"""The induction and generation pages in a real browser: they draw, "Train it yourself" shows its progress bar
and finishes, and a prompt typed into the generation page is generated from."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

from playwright.sync_api import expect

from tests.browser.conftest import assert_no_exception, open_page, screenshot, wait_idle

CHARTS = '[data-testid="stPlotlyChart"] .js-plotly-plot >> visible=true'  # not the hidden one of a pair (ui.charts)
PROGRESS = '[data-testid="stProgress"]'


def query(page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def test_the_shipped_model_opens_and_train_it_yourself_shows_a_progress_bar_and_finishes(page, app_url):
    open_page(page, app_url, "induction", "steps=250&seed=11")
    assert_no_exception(page)
    page.locator(CHARTS).nth(5).wait_for()  # loss, film strip, checkpoint grid, scores, accuracy, your sequence
    expect(page.locator(CHARTS)).to_have_count(6)
    expect(page.get_by_text("100.0%").first).to_be_visible()  # the shipped model on the repeated half
    screenshot(page, "induction")
    page.get_by_role("button", name="Train it yourself").click()
    bar = page.locator(PROGRESS)
    bar.wait_for(state="visible", timeout=30_000)  # the bar appears while training runs
    expect(bar).to_contain_text("Training")  # "Training…", then "Training: step k of 250"
    wait_idle(page, timeout=120_000)
    assert_no_exception(page)
    expect(page.get_by_text("Trained 250 steps (seed 11)")).to_be_visible()
    expect(page.locator(PROGRESS)).to_have_count(0)  # and goes away when done
    assert query(page)["model"] == "yours" and query(page)["steps"] == "250"
    screenshot(page, "induction_trained")


def test_the_generation_page_generates_from_a_typed_prompt(page, app_url):
    open_page(page, app_url, "generation")
    assert_no_exception(page)
    page.locator(CHARTS).nth(5).wait_for()
    expect(page.get_by_text("below 1e-12").first).to_be_visible()
    screenshot(page, "generation")
    box = page.get_by_label("Prompt (letters a to z)", exact=True).and_(page.locator("input"))
    box.fill("x y z w x y")
    box.press("Enter")
    wait_idle(page)
    assert_no_exception(page)
    assert query(page)["prompt"] == "x y z w x y"
    expect(page.get_by_text("x y z w x y → z w x y z w x y z w").first).to_be_visible()  # the repeat continued


def test_leaving_the_page_during_training_is_said_on_return_and_the_radio_names_the_model_shown(page, app_url):
    page.goto(f"{app_url}/induction?steps=2000&seed=13")
    wait_idle(page, timeout=120_000)
    page.get_by_role("button", name="Train it yourself").click()
    page.locator(PROGRESS).get_by_text("Training: step").wait_for(timeout=60_000)  # under way
    expect(page.locator(PROGRESS).get_by_text("Waiting")).to_have_count(0)  # alone on the server: no waiting
    nav = page.locator('[data-testid="stSidebarNav"]')
    nav.get_by_text("Generation and the KV cache", exact=True).click()
    wait_idle(page, timeout=60_000)
    nav.get_by_text("Watch an induction head form", exact=True).click()
    wait_idle(page, timeout=60_000)
    assert_no_exception(page)
    note = page.get_by_text("Your training (seed 13, 2000 steps) was cancelled at step")
    note.wait_for()
    expect(page.get_by_role("radio", name="the shipped model")).to_be_checked()
    assert query(page)["model"] == "shipped"
    screenshot(page, "induction_cancelled")
