"""A number box in a real browser (ui/number_box.py): what is typed reaches the server as typed.

Streamlit's number_input read `1e3` as 1 and `2.5` as 2 in the browser, before the server saw anything
(issue #32): only a real browser shows that the box sends the text, and shows back what the server decided.
"""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import assert_no_exception, open_page, wait_idle

ERROR = '[data-testid="stAlertContentError"]'


def test_1e3_is_1000_and_2_5_is_refused_with_the_text_kept(page, app_url):
    open_page(page, app_url, "generation")
    box = page.get_by_label("Seed", exact=True).and_(page.locator("input"))
    expect(box).to_have_attribute("type", "text")  # a text box: the browser does not read the number itself
    box.fill("1e3")
    box.press("Enter")
    expect(box).to_have_value("1000")  # the number the page computes with, written plainly
    expect(page).to_have_url(re.compile(r"[?&]seed=1000(&|$)"))
    wait_idle(page)
    box.fill("2.5")
    box.press("Enter")
    refusal = page.locator(ERROR).filter(has_text="'2.5' is not a whole number")
    expect(refusal).to_contain_text("Allowed: a whole number from 0 to 9999. The page still uses 1000.")
    expect(box).to_have_value("2.5")  # what was typed is not thrown away
    wait_idle(page)
    expect(page).to_have_url(re.compile(r"[?&]seed=1000(&|$)"))  # and the link keeps the number in use
    assert_no_exception(page)


def test_a_comma_in_the_playgrounds_size_box_is_refused_as_the_grid_refuses_it(page, app_url):
    open_page(page, app_url, "")
    box = page.get_by_label("positions n", exact=True).and_(page.locator("input"))
    box.fill("1,5")
    box.press("Enter")
    refusal = page.locator(ERROR).filter(has_text="positions n: '1,5' is not a number")
    # a box of whole numbers does not suggest 1.5, which it would refuse in turn
    expect(refusal).to_contain_text("(a comma is not a digit, and 1.5 is not a whole number)")
    expect(box).to_have_value("1,5")
    expect(page).to_have_url(re.compile(r"tokens=north\+east\+south\+west(&|$)"))  # still 4 positions
    box.fill("5e0")
    box.press("Enter")
    expect(box).to_have_value("5")
    expect(page.locator(ERROR)).to_have_count(0)
    assert_no_exception(page)
