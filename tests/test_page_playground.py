"""The Playground page under AppTest: the numbers it shows are the core's numbers."""

import numpy as np
import pytest

from attention import scaled_dot_product_attention
from lessons.examples import random_example
from tests.apptest_helpers import chart_by_key, heatmap_z, open_page, plotly_figures, run_page, type_number
from ui.sequence import default_sequence
from ui.url import encode_sequence


def shown_weights(at) -> np.ndarray:
    return heatmap_z(plotly_figures(at)[0])


def test_playground_runs_and_shows_the_hand_built_example():
    at = run_page()
    assert not at.exception
    seq = default_sequence()
    _, expected = scaled_dot_product_attention(seq.q, seq.k, seq.v)
    np.testing.assert_allclose(shown_weights(at), expected, atol=1e-12)
    # the aligned pair (north's query, north's key) beats the orthogonal pair (north's query, east's key)
    assert shown_weights(at)[0, 0] > 0.8 > 0.1 > shown_weights(at)[0, 1]


def test_causal_toggle_zeroes_everything_above_the_diagonal():
    seq = random_example(6, 3, 2, seed=4).seq
    at = run_page(state={"seq": seq})
    assert np.triu(shown_weights(at), 1).any()  # without the mask the future gets weight
    at.toggle(key="pg_causal").set_value(True).run()
    w = shown_weights(at)
    assert not at.exception
    assert np.all(np.triu(w, 1) == 0.0)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(w, scaled_dot_product_attention(seq.q, seq.k, seq.v, causal=True)[1], atol=1e-12)


def test_switching_scaling_changes_the_weights_as_the_core_predicts():
    seq = random_example(5, 8, 2, seed=1).seq
    at = run_page(state={"seq": seq})
    scaled = shown_weights(at)
    at.toggle(key="pg_scale").set_value(False).run()
    unscaled = shown_weights(at)
    np.testing.assert_allclose(scaled, scaled_dot_product_attention(seq.q, seq.k, seq.v, scale=True)[1], atol=1e-12)
    np.testing.assert_allclose(unscaled, scaled_dot_product_attention(seq.q, seq.k, seq.v, scale=False)[1], atol=1e-12)
    assert not np.allclose(scaled, unscaled)
    assert unscaled.max() > scaled.max()  # without 1/sqrt(d_k) the softmax is sharper


def test_pasted_text_replaces_the_matrix():
    at = run_page()
    at.text_area(key="seq_text_k").set_value("1 0; 0 1; 1 0; 0 1").run()
    assert not at.exception and not at.error
    assert np.array_equal(at.session_state["seq"].k, [[1, 0], [0, 1], [1, 0], [0, 1]])


def test_bad_text_shows_an_error_and_keeps_the_previous_matrices():
    at = run_page()
    before = at.session_state["seq"]
    at.text_area(key="seq_text_q").set_value("1 0; 0 banana; 1 1; 0 0").run()
    assert not at.exception
    assert any("banana" in e.value and "previous Q is kept" in e.value for e in at.error)
    after = at.session_state["seq"]
    assert np.array_equal(after.q, before.q) and np.array_equal(after.k, before.k)
    assert at.text_area(key="seq_text_q").value == "1 0; 0 banana; 1 1; 0 0"  # what was typed is not thrown away
    at.text_area(key="seq_text_q").set_value("1 0; 0 1").run()  # right numbers, wrong number of rows
    assert any("2 row(s) given, expected 4" in e.value for e in at.error)


def test_changing_sizes_keeps_the_values_that_fit():
    at = run_page()
    before = at.session_state["seq"]
    type_number(at, "seq_n_in", "6")
    type_number(at, "seq_dk_in", "3")
    seq = at.session_state["seq"]
    assert not at.exception and seq.q.shape == (6, 3) and seq.v.shape == (6, 4)
    assert np.array_equal(seq.q[:4, :2], before.q) and shown_weights(at).shape == (6, 6)


def test_a_smaller_size_then_a_larger_one_brings_the_cut_values_back():
    at = run_page()
    before = at.session_state["seq"]
    type_number(at, "seq_n_in", "1")
    assert at.session_state["seq"].n == 1 and shown_weights(at).shape == (1, 1)
    type_number(at, "seq_n_in", "4")
    back = at.session_state["seq"]
    assert not at.exception and back.tokens == before.tokens
    assert all(np.array_equal(back.matrix(m), before.matrix(m)) for m in "qkv")
    type_number(at, "seq_n_in", "2")
    at.selectbox(key="seq_preset").set_value("Random").run()
    at.button(key="seq_load").click().run()  # a new example at n = 2: what the old one lost is gone for good
    type_number(at, "seq_n_in", "4")
    grown = at.session_state["seq"]
    assert grown.q[:2].any() and not grown.q[2:].any() and not grown.k[2:].any()


def test_presets_load_and_behave_as_described():
    at = run_page()
    at.selectbox(key="seq_preset").set_value("Identical keys").run()
    at.button(key="seq_load").click().run()
    np.testing.assert_allclose(shown_weights(at), 1 / 4, atol=1e-12)  # identical keys: uniform weights
    at.selectbox(key="seq_preset").set_value("One dominant key").run()
    at.button(key="seq_load").click().run()
    assert np.all(shown_weights(at).argmax(axis=1) == 3)


def test_a_url_with_the_state_reproduces_it():
    seq = random_example(5, 3, 2, seed=9).seq
    query = {**encode_sequence(seq), "causal": "1", "scale": "0"}
    at = run_page(query=query)
    assert not at.exception and not at.warning
    assert at.session_state["seq"].equals(seq)
    assert at.toggle(key="pg_causal").value is True and at.toggle(key="pg_scale").value is False
    expected = scaled_dot_product_attention(seq.q, seq.k, seq.v, causal=True, scale=False)[1]
    np.testing.assert_allclose(shown_weights(at), expected, atol=1e-12)
    assert at.query_params["q"] == query["q"]  # the page writes the same state back into the URL


def test_a_url_with_labels_only_relabels_the_example():
    at = run_page(query={"tokens": "I like green tea"})
    assert not at.exception and not at.warning
    assert at.session_state["seq"].tokens == ("I", "like", "green", "tea")
    assert at.text_input(key="seq_tokens_in").value == "I like green tea"
    assert at.query_params["tokens"] == "I like green tea"  # and the full state is written back


def test_a_malformed_url_warns_and_falls_back_without_crashing():
    at = run_page(query={"q": "1,<script>", "k": "1", "v": "1", "causal": "yes please"})
    assert not at.exception
    texts = " ".join(w.value for w in at.warning)
    assert "could not be used" in texts and "'causal' should be 0 or 1" in texts
    assert at.session_state["seq"].equals(default_sequence())


def test_a_fixed_matrix_and_attention_side_by_side_on_the_sequence_reversed():
    seq = random_example(5, 3, 2, seed=2).seq
    at = open_page("pages/playground.py", state={"seq": seq, "pg_why": True})  # the section's expander open
    assert not at.exception
    w_a, w_b = (heatmap_z(chart_by_key(at, key)) for key in ("pg_attention_a", "pg_attention_b"))
    np.testing.assert_allclose(w_b[::-1, ::-1], w_a, atol=1e-12)  # the weights moved with the tokens
    fixed = heatmap_z(chart_by_key(at, "pg_fixed"))
    np.testing.assert_allclose(fixed.sum(axis=1), 1.0, atol=1e-12)
    assert any("Each row of weights is the softmax" in m.value for m in at.markdown)
    closed = open_page("pages/playground.py", state={"seq": seq})
    assert not any(c.proto.id.endswith("-pg_fixed") for c in closed.get("plotly_chart"))  # drawn only when open
    assert any(r"\sum_k e^{x_k}" in f.value for f in at.get("latex"))  # the softmax is written out


@pytest.mark.parametrize("labels", ["the cat sat on", "a a a a", "the·2 the the the"])
def test_repeated_token_labels_run_every_table_and_figure(labels):
    # Issue #19: "the cat sat on the mat" crashed the step-by-step tables (duplicate column names).
    at = open_page("pages/playground.py", state={"pg_steps": True, "pg_why": True})  # every table drawn
    at.text_input(key="seq_tokens_in").set_value(labels).run()
    assert not at.exception and not at.error
    assert at.session_state["seq"].tokens == tuple(labels.split())  # the tokens themselves are as typed
    scores = next(df.value for df in at.dataframe if df.value.shape == (4, 4))
    assert len(set(scores.columns)) == 4 and len(set(scores.index)) == 4  # unique for display
    assert at.query_params["tokens"] == labels  # and the link still holds what was typed


@pytest.mark.parametrize("typed, expected", [("−1 1e3; 2 0; 0 2; .5 .5", [[-1, 1000], [2, 0], [0, 2], [0.5, 0.5]])])
def test_the_paste_box_takes_scientific_notation_and_a_unicode_minus(typed, expected):
    at = open_page("pages/playground.py")
    at.text_area(key="seq_text_q").set_value(typed).run()
    assert not at.exception and not at.error
    np.testing.assert_array_equal(at.session_state["seq"].q, expected)


def test_the_paste_box_refuses_a_comma_decimal_and_keeps_what_was_typed():
    at = open_page("pages/playground.py")
    before = at.session_state["seq"].q.copy()
    at.text_area(key="seq_text_q").set_value("0 2;0 2;2 0;1 1e309").run()
    assert not at.exception
    assert any("'1e309' is too large" in e.value for e in at.error)
    np.testing.assert_array_equal(at.session_state["seq"].q, before)  # the maths kept the old numbers
    assert at.text_area(key="seq_text_q").value == "0 2;0 2;2 0;1 1e309"  # the typing stays in the box


def test_the_paste_box_refuses_3_comma_5_as_the_grid_does_and_says_its_rule_where_it_is_typed():
    # Issue #32: the same "3,5" typed in the grid and in the paste box must get the same answer.
    at = open_page("pages/playground.py")
    before = at.session_state["seq"].q.copy()
    at.text_area(key="seq_text_q").set_value("3,5; 0 2; 2 0; 1 1").run()
    assert not at.exception
    message = " ".join(e.value for e in at.error).replace("\\", "")  # markdown escapes taken off
    assert "'3,5' is not a number (a decimal point, not a comma: 3.5" in message, message
    np.testing.assert_array_equal(at.session_state["seq"].q, before)  # not read as the two numbers 3 and 5
    assert any("never ','" in c.value for c in at.caption)  # the rule is written beside the boxes
    at.text_area(key="seq_text_q").set_value("3, 5; 0 2; 2 0; 1 1").run()  # a comma and a space: two numbers
    assert not at.error
    np.testing.assert_array_equal(at.session_state["seq"].q[0], [3, 5])


def test_the_matrices_download_when_their_box_is_open():
    at = open_page("pages/playground.py")
    assert not [b for b in at.get("download_button") if "Matrices" in b.proto.label]  # not drawn while closed
    at.session_state["pg_downloads"] = True
    at.run()
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Matrices as CSV" in labels and "Matrices as JSON" in labels


def test_without_a_browser_the_grid_is_drawn_in_the_first_run():
    # ui.after_charts waits for a browser's word that the charts are drawn; AppTest has no browser (and no
    # server), so the grid comes at once and the placeholder never shows.
    at = run_page()
    assert [grid for grid in at.dataframe if "token" in grid.value.columns]
    assert not [c for c in at.caption if "on its way" in c.value]
