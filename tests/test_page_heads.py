"""pages/heads.py under AppTest: the multi-head attention page."""

from __future__ import annotations

import numpy as np
import pytest

from attention import multi_head_steps
from attention.sequence import TokenSequence
from lessons.head_library import PRESET_LABELS, embed_tokens, head_library_weights, summarise_head
from tests.apptest_helpers import chart_by_key, heatmap_z, number_box, open_page, type_number
from tests.apptest_helpers import table_with_column as table

PAGE = "pages/heads.py"


DEFAULT_PRESETS = ("previous", "first", "self", "similar")


def heatmaps(fig: dict) -> list[np.ndarray]:
    """The z matrix of every heatmap trace of a figure JSON."""
    return [heatmap_z({"data": [t]}) for t in fig["data"] if t.get("type") == "heatmap"]


def core_result(seq, d_model=16, n_heads=4, presets=DEFAULT_PRESETS, seed=0, causal=False, scale=True):
    """What the page should show, computed here straight from the core."""
    emb = embed_tokens(seq.tokens, d_model, seed)
    hw = head_library_weights(emb, presets, seed)
    return multi_head_steps(emb.x, hw.w_q, hw.w_k, hw.w_v, hw.w_o, n_heads, b_q=hw.b_q, causal=causal, scale=scale)


@pytest.fixture(scope="module")
def default_page():
    return open_page(PAGE)


def test_the_page_runs_and_shows_formula_and_explanation(default_page):
    at = default_page
    assert not at.exception
    assert not at.error
    assert at.title[0].value == "Multi-head attention"
    assert len(at.latex) >= 3
    assert at.slider(key="heads_n_heads").value == 4
    assert at.session_state["heads_d_model"] == 16


def test_every_control_has_help(default_page):
    at = default_page
    m = at.main  # the sidebar holds the app-wide presenter and export controls
    widgets = [*m.text_input, *m.slider, *m.toggle, *m.selectbox]  # the number boxes are text boxes
    assert widgets and all(w.help for w in widgets)
    assert all(w.key.startswith("heads_") for w in widgets)


def test_the_shapes_and_weights_shown_are_the_cores(default_page):
    at = default_page
    seq = at.session_state["seq"]
    steps = core_result(seq)
    split = table(at, "Q_h, K_h, V_h shape")
    assert list(split["Q_h, K_h, V_h shape"]) == [str(tuple(steps.q_heads[h].shape)) for h in range(4)]
    assert list(split["Q_h, K_h, V_h shape"]) == [str((seq.n, 4))] * 4
    grid = heatmaps(chart_by_key(at, "heads_grid_fig"))
    assert len(grid) == 4
    for h in range(4):
        np.testing.assert_allclose(grid[h], steps.weights[h], atol=1e-12)
    np.testing.assert_allclose(heatmaps(chart_by_key(at, "heads_concat_fig"))[0], steps.concat)
    np.testing.assert_allclose(heatmaps(chart_by_key(at, "heads_output_fig"))[0], steps.output)


def test_the_shared_colour_scale_is_0_to_1(default_page):
    fig = chart_by_key(default_page, "heads_grid_fig")
    assert (fig["layout"]["coloraxis"]["cmin"], fig["layout"]["coloraxis"]["cmax"]) == (0, 1)


def test_captions_are_computed_from_the_weights(default_page):
    at = default_page
    steps = core_result(at.session_state["seq"])
    captions = list(table(at, "caption")["caption"])
    assert captions == [summarise_head(w, False, at.session_state["seq"].tokens).caption for w in steps.weights]
    assert captions[0].startswith("previous") and captions[1].startswith("first") and captions[2].startswith("self")


def test_heads_that_do_not_divide_d_model_give_a_clear_message_and_keep_the_other_settings():
    at = open_page(PAGE)
    number_box(at, "heads_seed").input("7")
    at.toggle(key="heads_causal").set_value(True)
    at.selectbox(key="heads_preset_0").set_value("uniform")
    at.run()
    at.slider(key="heads_n_heads").set_value(3).run()
    assert not at.exception
    assert len(at.error) == 1
    message = at.error[0].value
    assert "d_model = 16 cannot be split into 3 heads" in message and "1, 2, 4 or 8" in message
    assert at.session_state["heads_d_model"] == 16
    assert at.session_state["heads_seed"] == 7
    assert at.toggle(key="heads_causal").value is True
    at.slider(key="heads_n_heads").set_value(4).run()  # back to a valid count: everything is still there
    assert not at.error and not at.exception
    assert at.selectbox(key="heads_preset_0").value == "uniform"
    assert at.toggle(key="heads_causal").value is True


def test_changing_d_model_instead_fixes_it():
    at = open_page(PAGE, {"n_heads": "3"})
    assert at.error
    type_number(at, "heads_d_model", "12")
    assert not at.error and not at.exception
    assert list(table(at, "Q_h, K_h, V_h shape")["Q_h, K_h, V_h shape"]) == ["(4, 4)"] * 3


def test_eight_heads_from_the_url():
    at = open_page(PAGE, {"n_heads": "8", "presets": "uniform,self", "causal": "1"})
    assert not at.exception and not at.warning
    assert at.slider(key="heads_n_heads").value == 8
    assert [at.selectbox(key=f"heads_preset_{h}").value for h in range(8)][:4] == ["uniform", "self", "self", "similar"]
    seq = at.session_state["seq"]
    presets = ("uniform", "self", "self", "similar", "uniform", "random", "random", "random")  # the rest: defaults
    steps = core_result(seq, n_heads=8, presets=presets, causal=True)
    grid = heatmaps(chart_by_key(at, "heads_grid_fig"))
    assert len(grid) == 8
    np.testing.assert_allclose(grid[7], steps.weights[7], atol=1e-12)
    assert at.query_params["n_heads"] == "8" and at.query_params["causal"] == "1"


def test_malformed_url_values_warn_and_fall_back():
    query = {"n_heads": "abc", "d_model": "9999", "presets": "previous,evil", "causal": "maybe", "focus": "<b>1</b>"}
    at = open_page(PAGE, query)
    assert not at.exception and not at.error
    warnings = " ".join(w.value for w in at.warning)
    for name in query:
        assert f"'{name}'" in warnings
    assert "<b>" not in warnings  # the stranger's text is never echoed
    assert at.slider(key="heads_n_heads").value == 4 and at.session_state["heads_d_model"] == 16
    assert at.toggle(key="heads_causal").value is False and at.selectbox(key="heads_preset_1").value == "first"
    assert at.query_params["n_heads"] == "4"  # the URL now holds the values in use


def test_presets_that_do_not_fit_fall_back_to_random_with_a_warning():
    at = open_page(PAGE, {"d_model": "8", "n_heads": "8"})
    assert not at.exception
    texts = " ".join(w.value for w in at.warning)
    assert "Head 1" in texts and "d_head = 1" in texts
    assert len(heatmaps(chart_by_key(at, "heads_grid_fig"))) == 8


def test_a_repeated_word_is_recognised_by_the_most_similar_head():
    tokens = ("the", "cat", "sat", "on", "the", "mat")
    seq = TokenSequence(tokens, np.zeros((6, 2)), np.zeros((6, 2)), np.zeros((6, 2)))
    at = open_page(PAGE, {"d_model": "64", "n_heads": "4"}, state={"seq": seq})
    assert not at.exception
    captions = list(table(at, "caption")["caption"])
    assert captions[3].startswith("same word")
    w = heatmaps(chart_by_key(at, "heads_grid_fig"))[3]
    assert w[0, 0] == pytest.approx(w[0, 4]) and w[0, 0] + w[0, 4] > 0.9


def test_enlarging_a_head_shows_its_steps():
    at = open_page(PAGE)
    at.selectbox(key="heads_focus").set_value(2).run()
    assert not at.exception
    seq = at.session_state["seq"]
    steps = core_result(seq)
    np.testing.assert_allclose(heatmap_z(chart_by_key(at, "heads_focus_weights")), steps.weights[1], atol=1e-12)
    np.testing.assert_allclose(heatmap_z(chart_by_key(at, "heads_focus_Q")), steps.q_heads[1])
    assert at.query_params["focus"] == "2"
    at.slider(key="heads_n_heads").set_value(1).run()  # the enlarged head no longer exists: head 1, said so
    assert not at.exception and at.selectbox(key="heads_focus").value == 1
    assert any("Head to enlarge lowered from 2 to 1: the page has 1 head." in c.value for c in at.caption)
    at.slider(key="heads_n_heads").set_value(4).run()  # head 2 exists again: it comes back, the note goes
    assert at.selectbox(key="heads_focus").value == 2 and at.query_params["focus"] == "2"
    assert not any("Head to enlarge" in c.value for c in at.caption)


def test_preset_labels_are_shown(default_page):
    assert default_page.selectbox(key="heads_preset_0").options[:2] == [
        PRESET_LABELS["random"],
        PRESET_LABELS["previous"],
    ]


# ---------------------------------------------------------------- every sentence true of the switches (issue #50)


def markdown(at, start: str) -> str:
    return next(m.value for m in at.markdown if start in m.value)


@pytest.mark.parametrize("causal", [False, True])
def test_the_uniform_preset_is_said_as_the_mask_makes_it(causal):
    query = {"presets": "uniform,self,first,previous", "causal": "1" if causal else "0"}
    at = open_page(PAGE, query)
    assert not at.exception
    n = at.session_state["seq"].n
    w = heatmaps(chart_by_key(at, "heads_grid_fig"))[0]
    bullets = markdown(at, "**uniform**")
    if causal:  # row i gets 1/(i + 1) on each of its i + 1 keys, 0 after
        assert "the causal mask leaves row i its i + 1 keys, so each of them gets 1/(i + 1)" in bullets
        assert "every weight is 1/n" not in bullets and "every copy of itself at or before it" in bullets
        expected = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]
    else:
        assert "every score 0, so every weight is 1/n" in bullets and "1/(i + 1)" not in bullets
        assert "every copy of itself equally" in bullets
        expected = np.full((n, n), 1 / n)
    np.testing.assert_allclose(w, expected, atol=1e-12)


@pytest.mark.parametrize("scale", [True, False])
@pytest.mark.parametrize("causal", [False, True])
def test_each_head_is_said_to_run_what_the_switches_run(scale, causal):
    at = open_page(PAGE, {"scale": "1" if scale else "0", "causal": "1" if causal else "0"})
    assert not at.exception
    seq = at.session_state["seq"]
    text = markdown(at, "Each head runs dot-product attention")
    formula = next(t.value for t in at.latex if r"\mathrm{head}_h =" in t.value)
    if scale:
        assert "its scores divided by √d_head = √4" in text and r"\sqrt{d_{head}}" in formula
    else:
        assert "its scores **not** divided by √d_head" in text and r"\sqrt" not in formula
    assert "scaled dot-product" not in text  # untrue with the scaling off, redundant with it on
    if causal:
        assert "the causal mask" in text and "+ M" in formula and "log₂(i + 1) bits for row i" in text
    else:
        assert "causal" not in text and "+ M" not in formula
        assert f"log₂ {seq.n} = {np.log2(seq.n):.2f} bits: spread evenly over the {seq.n} keys" in text
    # and the weights shown are the core's with exactly these switches
    steps = core_result(seq, presets=("previous", "first", "self", "similar"), causal=causal, scale=scale)
    np.testing.assert_allclose(heatmaps(chart_by_key(at, "heads_grid_fig"))[0], steps.weights[0], atol=1e-12)


def test_the_split_is_said_as_a_reshape_then_a_transpose_with_the_real_shapes():
    at = open_page(PAGE, {"d_model": "24", "n_heads": "3"})
    assert not at.exception
    seq = at.session_state["seq"]
    n = seq.n
    text = markdown(at, "No number is changed")
    assert f"(n, d_model) = ({n}, 24) → (n, h, d_head) = ({n}, 3, 8), then a transpose" in text
    assert f"→ (h, n, d_head) = (3, {n}, 8)" in text
    assert "only a reshape" not in text
    emb = embed_tokens(seq.tokens, 24, 0)
    hw = head_library_weights(emb, DEFAULT_PRESETS[:3], 0)
    q = emb.x @ hw.w_q + hw.b_q  # (n, 24)
    steps = core_result(seq, d_model=24, n_heads=3, presets=DEFAULT_PRESETS[:3])
    np.testing.assert_array_equal(q.reshape(n, 3, 8).swapaxes(0, 1), steps.q_heads)  # reshape, then transpose
    assert not np.array_equal(q.reshape(3, n, 8), steps.q_heads)  # a reshape alone would mix positions


def test_paper_claims_name_their_paper(default_page):
    texts = " ".join(m.value for m in default_page.markdown)
    assert "Vaswani et al. 2017, 'Attention Is All You Need') adds the two" in texts
    assert "Clark et al. (2019, 'What Does BERT Look At?" in texts
    assert "GPT adds the two" not in texts
