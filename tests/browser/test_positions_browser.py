"""The position page ("Where is position?") in a real browser: shuffle by clicking, and see the check."""

import re

import numpy as np
from playwright.sync_api import expect

from lessons.positions.shuffle import permutation, shuffle_check
from lessons.positions.toy import parse_words, toy_head, word_vectors
from tests.browser.conftest import assert_no_exception, open_page, screenshot, wait_idle

WAIT = 30_000  # ms: a loaded machine draws this long page slowly
WORDS = parse_words("the dog chased the cat up the tall tree")[0]


def heatmap(page, key: str) -> np.ndarray:
    """The z values the browser drew in the square chart drawn with `key`."""
    plot = page.locator(f".st-key-square_{key} .js-plotly-plot").first
    return np.array(plot.evaluate("el => Array.from(el._fullData[0].z, row => Array.from(row))"), dtype=float)


def click_and_settle(page, target) -> None:
    """Click, wait until the run it starts (and any it triggers) is drawn, and check that no error shows."""
    target.click()
    wait_idle(page, settle=1.0)  # and any run the first one starts
    assert_no_exception(page)


def test_clicking_shuffle_moves_the_words_and_the_check_passes_only_without_positions(page, app_url):
    open_page(page, app_url, "positions")
    assert_no_exception(page)
    click_and_settle(page, page.get_by_role("button", name=re.compile("Shuffle the words")))
    assert "shuffle=2" in page.url  # the shuffle is in the link
    perm = permutation(len(WORDS), 2)
    expect(page.get_by_text(f"Shuffle 2: {' '.join(WORDS[i] for i in perm)}")).to_be_visible()
    x, head = word_vectors(WORDS, 16, 0), toy_head(16, 0)
    plain, sinusoidal = (shuffle_check(x, head, perm, m) for m in ("none", "sinusoidal"))
    np.testing.assert_allclose(heatmap(page, "pos_shuffle_none_after"), plain.after.weights, atol=1e-12)
    np.testing.assert_allclose(heatmap(page, "pos_shuffle_with_after"), sinusoidal.after.weights, atol=1e-12)
    same = re.compile("No positions: after undoing the shuffle, the outputs are the same")
    expect(page.get_by_text(same)).to_be_visible()
    expect(page.get_by_text(re.compile("Sinusoidal: after undoing the shuffle, the outputs differ"))).to_be_visible()
    screenshot(page, "positions_shuffled")


def test_the_check_follows_the_method_chosen(page, app_url):
    open_page(page, app_url, "positions", "method=rope&shuffle=5")
    assert_no_exception(page)
    expect(page.get_by_text(re.compile("RoPE: after undoing the shuffle, the outputs differ"))).to_be_visible()
    page.get_by_role("button", name=re.compile("Original order")).click()
    wait_idle(page, settle=1.0)  # and any run the first one starts
    expect(page).to_have_url(re.compile("shuffle=0"))
    expect(
        page.get_by_text(re.compile("RoPE: the shuffled tokens are the original ones in the original order"))
    ).to_be_visible(timeout=WAIT)


def share_link_text(page) -> str:
    return page.locator('[data-testid="stSidebar"] [data-testid="share-link"]').first.inner_text()


def test_a_section_redrawn_alone_keeps_the_link_and_the_share_link_whole(page, app_url):
    """Shuffling redraws section 1 alone and the padding switch its section alone (ui.page_state.section;
    tests/browser/test_protocol_session.py checks that the rest is not sent again): the link and the
    sidebar's share link carry the new state all the same, and Back returns to the view before."""
    open_page(page, app_url, "positions", "shuffle=1")
    assert_no_exception(page)
    click_and_settle(page, page.get_by_role("button", name=re.compile("Shuffle the words")))
    assert "shuffle=2" in page.url and "shuffle=2" in share_link_text(page)
    assert share_link_text(page).split("?")[1] == page.url.split("?")[1]  # the same query as the browser's link
    click_and_settle(page, page.get_by_text("Causal mask too"))
    assert "pad_causal=1" in page.url and "pad_causal=1" in share_link_text(page)
    assert "shuffle=2" in share_link_text(page)
    page.go_back()
    wait_idle(page, settle=1.0)
    expect(page).to_have_url(re.compile("pad_causal=0"))
    assert "shuffle=2" in page.url
    assert "pad_causal=0" in share_link_text(page)
    expect(page.get_by_role("switch", name="Causal mask too")).not_to_be_checked()
    screenshot(page, "positions_sections")


def thumb(page, label: str):
    return page.locator('[data-testid="stSlider"]').filter(has_text=label).get_by_role("slider")


def type_words(page, text: str) -> None:
    box = page.locator("[data-testid=stTextInput] input").first
    box.fill(text)
    box.press("Enter")
    wait_idle(page, settle=1.0)  # and any run the first one starts


def expect_lengths(page, a: int, b: int) -> None:
    expect(thumb(page, "Sequence 1: the first words")).to_have_value(str(a), timeout=WAIT)
    expect(thumb(page, "Sequence 2: the last words")).to_have_value(str(b), timeout=WAIT)


def test_padding_lengths_follow_the_text_16_then_17_then_7_words(page, app_url):
    """Issue 32: 16 words then 7 crashed the padding section (StreamlitValueAboveMaxError), and on the way
    both lengths had become 1."""
    open_page(page, app_url, "positions")
    expect_lengths(page, 9, 4)
    type_words(page, " ".join(f"w{i}" for i in range(16)))
    assert_no_exception(page)
    expect_lengths(page, 16, 8)
    assert "len_a=16" in page.url and "len_b=8" in page.url
    type_words(page, " ".join(f"w{i}" for i in range(17)))
    expect(page.get_by_text(re.compile("at most 16 words"))).to_be_visible(timeout=WAIT)
    type_words(page, " ".join(f"v{i}" for i in range(7)))
    assert_no_exception(page)
    expect_lengths(page, 7, 3)
    screenshot(page, "positions_padding_7_words")


def test_the_window_comes_back_after_n_went_below_it(page, app_url):
    open_page(page, app_url, "positions", "n=16&window=10")
    window = thumb(page, "Window w")
    expect(window).to_have_value("10", timeout=WAIT)
    n = thumb(page, "Sequence length n")
    n.focus()
    n.press("Home")  # n = 2
    wait_idle(page)
    expect(window).to_have_value("2", timeout=WAIT)
    note = page.get_by_text("Window w lowered from 10 to 2: a window holds at most the n = 2 positions")
    expect(note).to_be_visible(timeout=WAIT)
    n.focus()
    n.press("End")  # n = 32
    wait_idle(page)
    expect(window).to_have_value("10", timeout=WAIT)
    expect(note).to_have_count(0, timeout=WAIT)
    assert_no_exception(page)
    assert "window=10" in page.url
