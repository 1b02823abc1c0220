"""The "Why divide by √d_k" page in a real browser: defaults, extreme settings, a bad URL, a slider."""

import re
from urllib.parse import parse_qs, urlparse

from playwright.sync_api import expect

from lessons.scaling import DEFAULT_KEYS
from tests.browser.conftest import assert_no_exception, open_page, screenshot, wait_idle

CHARTS = '[data-testid="stPlotlyChart"] .js-plotly-plot >> visible=true'  # not the hidden one of a pair (ui.charts)
N_CHARTS = 6  # weights, max weight, variance, Jacobian, loss, gradient norm


def query(page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def test_default_page_draws_every_chart_and_the_verdict(page, app_url):
    open_page(page, app_url, "scaling")
    assert_no_exception(page)
    page.locator(CHARTS).nth(N_CHARTS - 1).wait_for()
    expect(page.locator(CHARTS)).to_have_count(N_CHARTS)
    expect(page.get_by_text("times the scaled run's")).to_be_visible()
    assert query(page)["dk"] == "4,64,1024"
    screenshot(page, "scaling")


def test_extreme_settings_from_the_url(page, app_url):
    open_page(page, app_url, "scaling", "dk=4096&keys=1&samples=100&tdk=1024&steps=50")
    assert_no_exception(page)
    page.locator(CHARTS).nth(N_CHARTS - 1).wait_for()
    expect(page.locator('[data-testid="stAlertContentWarning"]')).to_have_count(0)
    assert query(page)["keys"] == "1" and query(page)["tdk"] == "1024"
    screenshot(page, "scaling_extreme")


def test_a_malformed_url_warns_and_the_page_still_works(page, app_url):
    open_page(page, app_url, "scaling", "keys=banana&dk=%3Cb%3Ebold%3C%2Fb%3E&lr=9")
    assert_no_exception(page)
    warnings = page.locator('[data-testid="stAlertContentWarning"]')
    expect(warnings).to_have_count(3)
    expect(page.locator("main b", has_text="bold")).to_have_count(0)  # URL text is never rendered as HTML
    page.locator(CHARTS).nth(N_CHARTS - 1).wait_for()
    assert query(page)["keys"] == str(DEFAULT_KEYS)  # the default replaced the bad value in the URL


def test_moving_the_keys_slider_to_one_key(page, app_url):
    open_page(page, app_url, "scaling")
    thumb = page.locator('[data-testid="stSlider"]').filter(has_text="keys per query").get_by_role("slider")
    thumb.focus()
    thumb.press("Home")
    wait_idle(page, settle=1.0)  # and any run the first one starts
    assert_no_exception(page)
    expect(page).to_have_url(re.compile(r"[?&]keys=1(&|$)"))
    expect(page.locator(CHARTS)).to_have_count(N_CHARTS)
