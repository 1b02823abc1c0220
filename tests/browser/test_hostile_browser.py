"""Hostile input in a real browser (#8): script-like and markdown-like text in URLs and text boxes is shown as
text on every page; no script runs, no element is made from it, and no exception is drawn."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import assert_no_exception, open_page, wait_idle
from tests.browser.test_lessons_browser import pick
from ui.sequence import default_sequence
from ui.url import encode_sequence

IMG = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(1)</script>"
MD_IMG = "![x](x)"  # markdown for <img src="x">: messages and widget labels read markdown
ALERT_SPY = """
window.__alerts = [];
for (const name of ["alert", "confirm", "prompt"]) {
  const original = window[name].bind(window);
  window[name] = (...args) => { window.__alerts.push(name + "(" + args.join(",") + ")"); return original(...args); };
}
"""
ALERTS = '[data-testid="stAlert"]'
TICKS = '[data-testid="stPlotlyChart"] .xtick text'


@pytest.fixture
def guarded(page):
    """The page with a spy on alert/confirm/prompt, a dialog catcher and a log of requests; `guarded.check()`
    asserts that nothing ran, nothing was made from the payloads and no exception is shown."""
    dialogs, requests = [], []
    page.add_init_script(ALERT_SPY)
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: requests.append(r.url))

    def check() -> None:
        wait_idle(page)
        assert_no_exception(page)
        assert page.evaluate("window.__alerts") == [] and dialogs == []
        expect(page.locator('img[src="x"], script:text("alert(1)")')).to_have_count(0)
        assert not [u for u in requests if re.search(r"/x(\?|$)", u)]  # no <img src=x> was even tried

    page.check = check
    return page


def query(**params) -> str:
    return urlencode(params)


def alert_texts(page) -> str:
    return " ".join(page.locator(ALERTS).all_inner_texts())


def test_playground_labels_from_the_url_and_typed_in_stay_text(guarded, app_url):
    seq = encode_sequence(default_sequence())
    open_page(guarded, app_url, "", query(**seq | {"tokens": f"{IMG} {MD_IMG}"}))
    guarded.check()
    expect(guarded.locator(TICKS).nth(3)).to_be_attached()  # plotly draws an axis's ticks at once
    ticks = guarded.locator(TICKS).all_text_contents()
    assert ticks[:4] == ["<img", "src=x", "onerror=alert(1)>", MD_IMG]  # plotly shows the escaped labels as text

    guarded.get_by_label("Token labels", exact=True).fill(f"{MD_IMG} :red[b] $c$ {SCRIPT}")
    guarded.keyboard.press("Enter")
    guarded.check()
    expect(guarded.locator(TICKS).filter(has_text=MD_IMG).first).to_be_attached()

    guarded.get_by_text("Paste Q, K or V as text").click()
    guarded.get_by_label("Q as text", exact=True).fill(f"{MD_IMG} 1; 0 1; 1 0; 0 0")
    guarded.keyboard.press("Control+Enter")
    guarded.check()
    error = guarded.locator(ALERTS).filter(has_text="The previous Q is kept")
    assert f"'{MD_IMG}' is not a number" in error.inner_text()  # the markdown is shown, not rendered
    assert guarded.get_by_label("Q as text", exact=True).input_value().startswith(MD_IMG)  # the typing is kept


def test_predict_own_labels_in_questions_and_verdicts(guarded, app_url):
    seq = encode_sequence(default_sequence())
    open_page(guarded, app_url, "predict", query(puzzle="own", **seq | {"tokens": f"{MD_IMG} :red[b] $c$ <img"}))
    guarded.check()
    for i, label in enumerate([MD_IMG, ":red[b]", "$c$", "<img"]):
        pick(guarded, f"q_{i} '{label}' attends most to", f"k_0 '{MD_IMG}'")
    guarded.get_by_role("button", name=re.compile("Check my guesses")).click()
    guarded.check()
    verdicts = alert_texts(guarded)
    assert f"q_0 '{MD_IMG}'" in verdicts and "q_1 ':red[b]'" in verdicts and "q_3 '<img'" in verdicts


@pytest.mark.parametrize("path", ["causal", "pitfalls"])
def test_lesson_pages_with_a_script_like_url(guarded, app_url, path):
    open_page(guarded, app_url, path, query(q=IMG, k="1", v="1", seed=SCRIPT, t=MD_IMG))
    guarded.check()
    warned = alert_texts(guarded)
    assert "'<img' is not a number" in warned and "'seed'" in warned  # quoted as text
    expect(guarded.locator(TICKS).first).to_be_attached()  # the page's own example is drawn instead


@pytest.mark.parametrize(
    "path, params",
    [
        ("scaling", ["dk", "keys", "samples", "seed", "tdk", "lr", "steps"]),
        ("heads", ["d_model", "n_heads", "seed", "causal", "scale", "presets", "focus"]),
        ("block", ["d_model", "n_heads", "d_ff", "act", "norm", "causal", "blocks", "seed", "inspect"]),
        ("positions", ["d_model", "seed", "shuffle", "method", "heads", "window", "len_a", "pad_causal"]),
    ],
)
def test_settings_pages_with_script_like_parameters(guarded, app_url, path, params):
    payloads = [IMG, SCRIPT, MD_IMG, "javascript:alert(1)", "1e999", "nan"]
    open_page(guarded, app_url, path, query(**{p: payloads[i % len(payloads)] for i, p in enumerate(params)}))
    guarded.check()
    warned = alert_texts(guarded)
    assert all(f"'{p}'" in warned for p in params), warned
    assert "alert(1)" not in guarded.url  # the URL now holds the values in use


def test_pretrained_sentences_from_the_url_and_typed_in_stay_text(guarded, app_url):
    open_page(guarded, app_url, "pretrained", query(text=f"{IMG} {MD_IMG} and the cat", a=SCRIPT, layer=MD_IMG))
    guarded.check()
    heatmap = guarded.locator('[data-testid="stPlotlyChart"] .js-plotly-plot >> visible=true').nth(1)
    assert "1 · &lt;" in heatmap.evaluate("el => el.data[0].x")  # the model's token '<', escaped for plotly ...
    expect(guarded.locator(TICKS).filter(has_text=re.compile("[<>]")).first).to_be_attached()  # ... drawn as text
    assert "'layer'" in alert_texts(guarded)
    box = guarded.get_by_label("Sentence B", exact=True)
    box.fill(f"{MD_IMG} {IMG}")
    box.press("Enter")
    guarded.check()
    assert box.input_value() == f"{MD_IMG} {IMG}"


def test_an_address_in_a_link_is_shown_as_text_not_made_a_link(guarded, app_url):
    """Words from a shared link that look like addresses ("http://…", "www.…", "name@host") stay text:
    Streamlit's markdown would make them links a student could be sent to."""
    words = "see http://example.com and www.example.org or ann@example.net now"
    open_page(guarded, app_url, "positions", query(text=words))
    guarded.check()
    expect(guarded.get_by_text("see http").first).to_be_visible()
    expect(guarded.locator('[data-testid="stMain"] a[href*="example"]')).to_have_count(0)
