"""The induction and generation pages in a real browser: they draw, "Train it yourself" shows its progress bar
and finishes, and a prompt typed into the generation page is generated from."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

from tests.browser.conftest import assert_no_exception, open_page, screenshot, wait_idle

CHARTS = '[data-testid="stPlotlyChart"] .js-plotly-plot'
PROGRESS = '[data-testid="stProgress"]'


def query(page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def test_the_shipped_model_opens_and_train_it_yourself_shows_a_progress_bar_and_finishes(page, app_url):
    open_page(page, app_url, "induction", "steps=250&seed=11")
    assert_no_exception(page)
    page.locator(CHARTS).nth(5).wait_for()  # loss, film strip, checkpoint grid, scores, accuracy, your sequence
    assert page.locator(CHARTS).count() == 6
    assert page.get_by_text("100.0%").first.is_visible()  # the shipped model on the repeated half
    screenshot(page, "induction")
    page.get_by_role("button", name="Train it yourself").click()
    bar = page.locator(PROGRESS)
    bar.wait_for(state="visible", timeout=30_000)  # the bar appears while training runs
    assert "Training" in bar.inner_text()  # "Training…", then "Training: step k of 250"
    wait_idle(page, timeout=120_000)
    assert_no_exception(page)
    assert page.get_by_text("Trained 250 steps (seed 11)").is_visible()
    assert page.locator(PROGRESS).count() == 0  # and goes away when done
    assert query(page)["model"] == "yours" and query(page)["steps"] == "250"
    screenshot(page, "induction_trained")


def test_the_generation_page_generates_from_a_typed_prompt(page, app_url):
    open_page(page, app_url, "generation")
    assert_no_exception(page)
    page.locator(CHARTS).nth(5).wait_for()
    assert page.get_by_text("below 1e-12").first.is_visible()
    screenshot(page, "generation")
    box = page.get_by_label("Prompt (letters a to z)", exact=True).and_(page.locator("input"))
    box.fill("x y z w x y")
    box.press("Enter")
    wait_idle(page)
    assert_no_exception(page)
    assert query(page)["prompt"] == "x y z w x y"
    assert page.get_by_text("x y z w x y → z w x y z w x y z w").first.is_visible()  # the repeat continued


def test_leaving_the_page_during_training_is_said_on_return_and_the_radio_names_the_model_shown(page, app_url):
    page.goto(f"{app_url}/induction?steps=2000&seed=13")
    wait_idle(page, timeout=120_000)
    page.get_by_role("button", name="Train it yourself").click()
    page.locator(PROGRESS).get_by_text("Training: step").wait_for(timeout=60_000)  # under way
    assert page.locator(PROGRESS).get_by_text("Waiting").count() == 0  # alone on the server: no waiting
    nav = page.locator('[data-testid="stSidebarNav"]')
    nav.get_by_text("Generation and the KV cache", exact=True).click()
    wait_idle(page, timeout=60_000)
    nav.get_by_text("Watch an induction head form", exact=True).click()
    wait_idle(page, timeout=60_000)
    assert_no_exception(page)
    note = page.get_by_text("Your training (seed 13, 2000 steps) was cancelled at step")
    note.wait_for()
    assert page.get_by_role("radio", name="the shipped model").is_checked()
    assert query(page)["model"] == "shipped"
    screenshot(page, "induction_cancelled")
