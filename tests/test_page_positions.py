"""The position page ("Where is position?") under AppTest: every control, and the numbers its figures show."""

from pathlib import Path

import numpy as np
import pytest

from attention.dot_product import padded_attention
from attention.positions import alibi_slopes, sinusoidal_encoding
from attention.pretrained import load_minilm
from lessons.positions import (
    alibi_windows,
    attend,
    minilm_head,
    minilm_pieces,
    padded_batch,
    parse_words,
    permutation,
    position_similarity,
    rope_offset_check,
    shuffle_check,
    toy_head,
    window_reach,
    word_vectors,
)
from tests.apptest_helpers import chart_by_key, heatmap_z, open_page, plotly_values
from tests.apptest_helpers import table_with_column as frame

PAGE = "pages/positions.py"
WORDS = parse_words("the dog chased the cat up the tall tree")[0]


def texts(elements) -> list[str]:
    return [e.value for e in elements]


def verdicts(at) -> list[str]:
    """The shuffle checks' outcomes on screen, e.g. "passed: No positions: ..." or "failed: RoPE: ..."."""
    return [
        ("passed: " if "green-badge" in m.value else "failed: ") + m.value.split("] ", 1)[1]
        for m in at.markdown
        if "-badge[" in m.value
    ]


def toy(d_model=16, seed=0, words=WORDS):
    return word_vectors(words, d_model, seed), toy_head(d_model, seed)


@pytest.fixture(scope="module")
def page():
    """The page with its defaults, run once for the tests that only read it."""
    at = open_page(PAGE)
    assert not at.exception
    return at


def test_the_defaults_show_the_check_passing_without_positions_and_failing_with_them(page):
    assert page.title[0].value == "Where is position?"
    x, head = toy()
    check = shuffle_check(x, head, permutation(len(WORDS), 1), "none")
    np.testing.assert_allclose(heatmap_z(chart_by_key(page, "pos_shuffle_none_before")), check.before.weights)
    np.testing.assert_allclose(heatmap_z(chart_by_key(page, "pos_shuffle_none_after")), check.after.weights)
    passed, failed = verdicts(page)
    assert passed.startswith("passed: No positions: after undoing the shuffle, the outputs are the same (")
    wrong = shuffle_check(x, head, permutation(len(WORDS), 1), "sinusoidal").max_diff
    assert failed == f"failed: Sinusoidal: after undoing the shuffle, the outputs differ by up to **{wrong:.2g}**."
    assert not page.error  # a failing check is the lesson's result, not an error of the app
    table = frame(page, "largest difference after undoing the shuffle")
    assert list(table["check"]) == ["✓ only shuffled", "✗ order was seen", "✗ order was seen", "✗ order was seen",
                                    "✓ only shuffled", "✗ order was seen"]  # fmt: skip
    assert float(table["largest difference after undoing the shuffle"][0]) < 1e-12
    assert dict(page.query_params) == {
        "text": " ".join(WORDS), "d_model": "16", "seed": "0", "shuffle": "1", "method": "sinusoidal",
        "table_n": "128", "head": "3", "table_d": "64", "shift": "3", "offset": "5", "heads": "8",
        "alibi_scores": "0", "n": "16", "window": "3", "layers": "3", "len_a": "9", "len_b": "4", "pad_causal": "0",
    }  # fmt: skip


def test_the_shuffle_button_moves_the_words_and_the_check_follows():
    at = open_page(PAGE)
    at.button(key="pos_shuffle_button").click().run()
    assert not at.exception and at.number_input(key="pos_shuffle").value == 2
    perm = permutation(len(WORDS), 2)
    shuffled = " ".join(WORDS[i] for i in perm)
    assert any(f"Shuffle 2:** {shuffled}" in m.value for m in at.markdown)
    x, head = toy()
    check = shuffle_check(x, head, perm, "sinusoidal")
    np.testing.assert_allclose(heatmap_z(chart_by_key(at, "pos_shuffle_with_after")), check.after.weights)
    assert at.query_params["shuffle"] == "2"
    at.button(key="pos_reset_button").click().run()
    assert at.number_input(key="pos_shuffle").value == 0 and any("original order" in i.value for i in at.info)
    np.testing.assert_allclose(
        heatmap_z(chart_by_key(at, "pos_shuffle_with_after")), heatmap_z(chart_by_key(at, "pos_shuffle_with_before"))
    )
    at.number_input(key="pos_shuffle").set_value(7).run()
    assert at.query_params["shuffle"] == "7" and [v[:19] for v in verdicts(at)] == [
        "passed: No position",
        "failed: Sinusoidal:",
    ]


@pytest.mark.parametrize("method, name", [("rope", "RoPE"), ("alibi", "ALiBi"), ("learned", "Learned absolute")])
def test_every_method_fails_the_check(method, name):
    at = open_page(PAGE, {"method": method})
    assert not at.exception
    passed, failed = verdicts(at)
    assert passed.startswith("passed: No positions:") and failed.startswith(f"failed: {name}: after undoing the")
    if method == "learned":  # both columns on the real model's word pieces
        model = load_minilm()
        ids = minilm_pieces(model, WORDS).ids
        np.testing.assert_allclose(
            heatmap_z(chart_by_key(at, "pos_shuffle_with_before")), minilm_head(model, ids, 2).weights, atol=1e-12
        )
        np.testing.assert_allclose(
            heatmap_z(chart_by_key(at, "pos_shuffle_none_before")),
            minilm_head(model, ids, 2, positions=False).weights,
            atol=1e-12,
        )


def test_words_width_and_seed_change_every_toy_figure():
    at = open_page(PAGE)
    at.text_input(key="pos_text").set_value("dog bites man").run()
    at.selectbox(key="pos_d_model").set_value(32).run()
    at.number_input(key="pos_seed").set_value(5).run()
    assert not at.exception and not at.error and verdicts(at)[1].startswith("failed: Sinusoidal:")
    words = ("dog", "bites", "man")
    x, head = toy(32, 5, words)
    grid = chart_by_key(at, "pos_four_ways")
    for trace, method in zip(grid["data"], ("none", "sinusoidal", "rope", "alibi")):
        np.testing.assert_allclose(plotly_values(trace["z"]), attend(x, head, method).weights, atol=1e-12)
    assert at.query_params["text"] == "dog bites man" and at.query_params["d_model"] == "32"
    assert at.slider(key="pos_len_a").value == 3  # the padded batch follows the shorter text


@pytest.mark.parametrize(
    "text, message",
    [("dog", "at least 2 words"), ("w " * 17, "at most 16 words"), ("a " + "y" * 30, "a word has 30 characters")],
)
def test_unusable_words_are_refused_with_a_message(text, message):
    at = open_page(PAGE)
    at.text_input(key="pos_text").set_value(text).run()
    assert not at.exception and any(message in e for e in texts(at.error))
    assert not at.get("plotly_chart")  # the page stopped after saying why
    assert at.query_params["text"] == text  # and the link holds what was typed


def test_the_learned_table_and_the_real_head():
    at = open_page(PAGE)
    at.selectbox(key="pos_table_n").set_value(32).run()
    at.slider(key="pos_head").set_value(5).run()
    assert not at.exception
    model = load_minilm()
    np.testing.assert_allclose(
        heatmap_z(chart_by_key(at, "pos_learned_similarity")), position_similarity(model.position_embeddings, 32)
    )
    ids = minilm_pieces(model, WORDS).ids
    for key, positions in (("pos_learned_with", True), ("pos_learned_without", False)):
        expected = minilm_head(model, ids, 4, positions=positions).weights
        np.testing.assert_allclose(heatmap_z(chart_by_key(at, key)), expected, atol=1e-12)
    table = frame(at, "distance q − p")
    assert table["distance q − p"].max() < 31
    assert any("show 128 positions or more" in m.value for m in at.markdown)  # no distance of 100 in 32 positions


def test_how_far_the_similarity_fades_is_read_from_the_table_shown():
    at = open_page(PAGE)
    at.selectbox(key="pos_table_n").set_value(512).run()
    table = frame(at, "distance q − p").set_index("distance q − p")["mean cosine (p ≥ 1)"]
    sentence = next(m.value for m in at.markdown if "fades slowly" in m.value)
    for d in (100, 200, 300):
        assert f"{table[d]:.2f} at {d}" in sentence


def test_head_three_reads_the_previous_token_only_with_positions(page):
    assert any("mean weight on the previous token 1.00" in m.value for m in page.markdown)


def test_sinusoidal_table_width_and_shift():
    at = open_page(PAGE)
    at.selectbox(key="pos_table_d").set_value(16).run()
    at.number_input(key="pos_shift").set_value(10).run()
    assert not at.exception
    np.testing.assert_allclose(heatmap_z(chart_by_key(at, "pos_sinusoidal_table")), sinusoidal_encoding(100, 16))
    shown = [s.replace("\\", "") for s in texts(at.success)]  # the page escapes the brackets for markdown
    assert any("PE[p + 10] = PE[p] M_10" in s and "d = 16" in s for s in shown)
    m = heatmap_z(chart_by_key(at, "pos_shift_matrix"))
    assert m.shape == (16, 16) and m[0, 0] == pytest.approx(np.cos(10))


def test_rope_offset_check_and_the_two_score_heatmaps():
    at = open_page(PAGE)
    at.number_input(key="pos_offset").set_value(1000).run()
    assert not at.exception
    x, head = toy()
    check = rope_offset_check(x @ head.w_q, x @ head.w_k, 1000)
    np.testing.assert_allclose(heatmap_z(chart_by_key(at, "pos_rope_scores")), check.scores)
    np.testing.assert_allclose(heatmap_z(chart_by_key(at, "pos_rope_moved")), check.moved)
    assert any(s.startswith("Positions 0…8 and 1000…1008 give the same scores") for s in texts(at.success))


def test_alibi_heads_and_the_scores_toggle():
    at = open_page(PAGE)
    at.slider(key="pos_heads").set_value(12).run()
    assert not at.exception
    bars = chart_by_key(at, "pos_alibi_slopes")["data"][0]
    np.testing.assert_allclose(plotly_values(bars["y"]), alibi_slopes(12))
    grid = chart_by_key(at, "pos_alibi_heads")["data"]
    assert len(grid) == 12
    np.testing.assert_allclose(plotly_values(grid[0]["z"]), alibi_windows(len(WORDS), 12)[0], atol=1e-12)
    at.toggle(key="pos_alibi_scores").set_value(True).run()
    x, head = toy()
    expected = attend(x, head, "alibi", alibi_heads=12, alibi_head=11, causal=True).weights
    np.testing.assert_allclose(plotly_values(chart_by_key(at, "pos_alibi_heads")["data"][11]["z"]), expected)
    assert at.query_params["heads"] == "12" and at.query_params["alibi_scores"] == "1"


def test_the_sliding_window_reaches_one_window_per_layer():
    at = open_page(PAGE)
    at.slider(key="pos_n").set_value(20).run()
    at.slider(key="pos_window").set_value(4).run()
    at.slider(key="pos_layers").set_value(2).run()
    assert not at.exception
    z = heatmap_z(chart_by_key(at, "pos_window_reach"))
    expected = window_reach(20, 4, 2)
    np.testing.assert_array_equal(np.nan_to_num(z), expected)
    assert any("heard from 7 positions: L(w − 1) + 1 = 2·3 + 1 = 7" in s for s in texts(at.success))
    at.slider(key="pos_n").set_value(3).run()  # a window wider than the sequence follows it down
    assert not at.exception and at.slider(key="pos_window").value == 3


def test_the_padded_batch():
    at = open_page(PAGE)
    at.slider(key="pos_len_a").set_value(6).run()
    at.slider(key="pos_len_b").set_value(2).run()
    at.toggle(key="pos_pad_causal").set_value(True).run()
    assert not at.exception
    x, lengths, _ = padded_batch([list(WORDS[:6]), list(WORDS[-2:])], 16, 0)
    head = toy_head(16, 0)
    result = padded_attention(x @ head.w_q, x @ head.w_k, x @ head.w_v, lengths, causal=True)
    for b in range(2):
        z = heatmap_z(chart_by_key(at, f"pos_padding_{b + 1}"))
        np.testing.assert_allclose(z, result.weights[b])
        assert np.all(np.isfinite(z)) and np.all(z[:, lengths[b] :] == 0.0)
    figure = chart_by_key(at, "pos_padding_2")
    assert len(figure["layout"]["shapes"]) == 4  # the four padded queries, greyed out
    assert any("Unused query rows: 4" in s for s in texts(at.success))


def test_a_link_restores_every_control():
    query = {
        "text": "a b c d e",
        "d_model": "8",
        "seed": "3",
        "shuffle": "9",
        "method": "rope",
        "table_n": "64",
        "head": "7",
        "table_d": "32",
        "shift": "2",
        "offset": "40",
        "heads": "5",
        "alibi_scores": "1",
        "n": "10",
        "window": "4",
        "layers": "5",
        "len_a": "5",
        "len_b": "1",
        "pad_causal": "1",
    }
    at = open_page(PAGE, query)
    assert not at.exception and not at.warning
    assert dict(at.query_params) == query
    assert at.selectbox(key="pos_method").value == "rope" and at.slider(key="pos_head").value == 7


def test_the_page_is_in_the_navigation():
    app = (Path(__file__).resolve().parents[1] / "app.py").read_text(encoding="utf-8")
    assert (
        'st.Page("pages/positions.py", title="Where is position?", icon=":material/pin_drop:", url_path="positions")'
        in app
    )


def test_cached_heatmaps_still_get_their_cell_numbers_sized_for_presenter_mode(page):
    # The page caches its figures as JSON (z as plotly's typed array): chart() must still size their numbers.
    normal = chart_by_key(page, "pos_shuffle_none_before")["data"][0]
    presenting = chart_by_key(open_page(PAGE, {"present": "1"}), "pos_shuffle_none_before")["data"][0]
    assert normal["texttemplate"] and presenting["texttemplate"]
    assert presenting["textfont"]["size"] > normal["textfont"]["size"] >= 10
    assert chart_by_key(page, "pos_four_ways")["layout"]["template"] == {}  # Streamlit's theme styles it


def test_without_the_model_package_the_page_says_so_and_the_rest_works(monkeypatch):
    import streamlit as st

    import attention.pretrained as pretrained

    def missing():
        raise FileNotFoundError("the weights of all-MiniLM-L6-v2 were not found (test)")

    st.cache_resource.clear()
    st.cache_data.clear()
    monkeypatch.setattr(pretrained, "_load_cached", missing)
    try:
        at = open_page(PAGE, {"method": "learned"})
        assert not at.exception and not at.error
        assert any("not installed" in i.value for i in at.info)
        assert len(verdicts(at)) == 1  # the toy's check without positions; the learned one needs the model
        assert "pos_learned_similarity" not in str([c.proto.id for c in at.get("plotly_chart")])
        assert len(frame(at, "largest difference after undoing the shuffle")) == 4  # the toy's rows only
    finally:
        st.cache_resource.clear()
        st.cache_data.clear()
