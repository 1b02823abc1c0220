"""The language in Chromium (issue #48): the browser's own language by default, the sidebar's picker, and `lang=`
in the link, which a reload and a shared link keep."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import WAIT_MS, assert_no_exception, open_page

SIDEBAR = '[data-testid="stSidebar"]'


def test_a_spanish_browser_gets_spanish_and_its_link_keeps_it(browser, app_url):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="es-ES")
    try:
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        open_page(page, app_url, "pitfalls")
        assert_no_exception(page)
        expect(page.locator(SIDEBAR).get_by_text("Modo presentador", exact=True)).to_be_visible()
        expect(page.locator(SIDEBAR).get_by_text("Errores comunes", exact=True)).to_be_visible()  # the navigation
        expect(page).to_have_url(re.compile(r"[?&]lang=es(&|$)"))  # a link shared from here opens in Spanish
        share = page.locator(f'{SIDEBAR} [data-testid="share-link"]')
        expect(share).to_contain_text("lang=es")
    finally:
        context.close()


def test_the_picker_changes_the_language_and_a_reload_keeps_it(page, app_url):
    open_page(page, app_url, "pitfalls")
    sidebar = page.locator(SIDEBAR)
    expect(sidebar.get_by_text("Presenter mode", exact=True)).to_be_visible()
    sidebar.locator('[data-testid="stSelectbox"]').filter(has_text="Language").click()
    page.get_by_role("option", name="简体中文").click()
    expect(sidebar.get_by_text("演示模式", exact=True)).to_be_visible()
    expect(sidebar.get_by_text("常见陷阱", exact=True)).to_be_visible()
    expect(page).to_have_url(re.compile(r"[?&]lang=zh_Hans(&|$)"))
    page.reload()
    expect(sidebar.get_by_text("演示模式", exact=True)).to_be_visible()
    sidebar.locator('[data-testid="stSelectbox"]').filter(has_text="Language").click()
    page.get_by_role("option", name="English").click()
    expect(sidebar.get_by_text("Presenter mode", exact=True)).to_be_visible()
    expect(page).not_to_have_url(re.compile(r"lang="))


def test_a_bad_language_in_the_link_is_english_with_a_note(page, app_url):
    open_page(page, app_url, "pitfalls", "lang=klingon")
    assert_no_exception(page)
    expect(page.locator(SIDEBAR).get_by_text("URL parameter 'lang' should be one of en, es, zh_Hans")).to_be_visible()
    expect(page.locator(SIDEBAR).get_by_text("Presenter mode", exact=True)).to_be_visible()
