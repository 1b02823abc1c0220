"""pages/block.py under AppTest: the transformer block page."""

from __future__ import annotations

import numpy as np
import pytest

from attention import transformer_block
from figures.block import shape_text
from lessons.head_library import embed_tokens, run_stack, stack_params
from tests.apptest_helpers import chart_by_key, heatmap_z, number_box, open_page, table_with_column, type_number

PAGE = "pages/block.py"


def shapes_table(at):
    return table_with_column(at, "shape").reset_index()  # a st.table indexed by step


def core_trace(seq, d_model=16, d_ff=64, n_heads=4, norm="post", seed=0, causal=False, activation="relu"):
    """Block 1's trace, computed here straight from the core."""
    x = embed_tokens(seq.tokens, d_model, seed).x
    (params,) = stack_params(d_model, d_ff, 1, seed)
    return transformer_block(x, params, n_heads, norm=norm, causal=causal, activation=activation)[1]


def diagram_shapes(at) -> list[str]:
    fig = chart_by_key(at, "block_diagram")
    return [a["text"] for a in fig["layout"]["annotations"] if a.get("name") == "shape"]


@pytest.fixture(scope="module")
def default_page():
    return open_page(PAGE)


def test_the_page_runs_with_explanation_formulas_and_help(default_page):
    at = default_page
    assert not at.exception and not at.error
    assert at.title[0].value == "The transformer block"
    assert len(at.latex) >= 3
    m = at.main  # the sidebar holds the app-wide presenter and export controls
    widgets = [*m.text_input, *m.slider, *m.toggle, *m.selectbox, *m.radio]  # number boxes are text boxes
    assert len(widgets) == 9 and all(w.help for w in widgets)
    assert all(w.key.startswith("block_") for w in widgets)


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_the_shapes_shown_are_the_cores_trace(norm):
    at = open_page(PAGE, {"norm": norm, "d_ff": "40", "d_model": "12", "n_heads": "3"})
    assert not at.exception and not at.error
    trace = core_trace(at.session_state["seq"], d_model=12, d_ff=40, n_heads=3, norm=norm)
    table = shapes_table(at)
    assert list(table["step"]) == trace.names
    assert list(table["shape"]) == [shape_text(s.shape) for s in trace.steps]
    assert diagram_shapes(at) == [shape_text(s.shape) for s in trace.steps]
    assert f"({at.session_state['seq'].n}, 40)" in diagram_shapes(at)  # the feed-forward's hidden layer


def test_switching_to_pre_norm_redraws_the_block():
    at = open_page(PAGE)
    at.radio(key="block_norm").set_value("pre").run()
    assert not at.exception
    trace = core_trace(at.session_state["seq"], norm="pre")
    assert list(shapes_table(at)["step"]) == trace.names
    assert trace.names[1] == "norm_1"  # pre-norm normalises first
    assert at.query_params["norm"] == "pre"


def test_heads_that_do_not_divide_give_a_clear_message_and_keep_the_other_settings():
    at = open_page(PAGE)
    at.slider(key="block_n_blocks").set_value(7)
    at.radio(key="block_norm").set_value("pre")
    at.run()
    at.slider(key="block_n_heads").set_value(3).run()
    assert not at.exception
    assert len(at.error) == 1 and "cannot be split into 3 heads" in at.error[0].value
    assert "1, 2, 4, 8" in at.error[0].value
    assert at.slider(key="block_n_blocks").value == 7 and at.radio(key="block_norm").value == "pre"
    at.slider(key="block_n_heads").set_value(2).run()
    assert not at.error and not at.exception


def test_d_ff_is_held_within_four_times_d_model_and_comes_back():
    at = open_page(PAGE)
    assert "from 1 to 64," in number_box(at, "block_d_ff").help
    type_number(at, "block_d_model", "8")
    assert not at.exception and not at.error
    assert at.session_state["block_d_ff"] == 32 and "from 1 to 32," in number_box(at, "block_d_ff").help
    assert any("d_ff lowered from 64 to 32: at most 4 × d_model = 32" in c.value for c in at.caption)
    type_number(at, "block_d_model", "16")
    assert at.session_state["block_d_ff"] == 64 and not any("d_ff" in c.value for c in at.caption)


def test_twelve_blocks_stack_and_keep_the_shape():
    at = open_page(PAGE, {"blocks": "12", "n_heads": "8"})
    assert not at.exception and not at.error
    seq = at.session_state["seq"]
    stack = chart_by_key(at, "block_stack_fig")
    texts = [a["text"] for a in stack["layout"]["annotations"]]
    assert texts.count(f"({seq.n}, 16)") == 13 and "block<br>12" in texts
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["input shape"] == metrics["output shape after 12 blocks"] == f"({seq.n}, 16)"
    assert "same shape" in at.success[0].value


def test_the_residual_stream_plot_has_both_norms():
    at = open_page(PAGE, {"blocks": "12"})
    seq = at.session_state["seq"]
    x = embed_tokens(seq.tokens, 16, 0).x
    blocks = stack_params(16, 64, 12, 0)
    fig = chart_by_key(at, "block_norm_fig")
    lines = {t["name"]: t for t in fig["data"]}
    assert set(lines) == {"post-norm", "pre-norm"}
    for norm in ("post", "pre"):
        expected = run_stack(x, blocks, 4, norm=norm).residual_norms
        y = lines[f"{norm}-norm"]["y"]
        y = heatmap_z({"data": [{"type": "heatmap", "z": y}]}) if isinstance(y, dict) else np.array(y)
        np.testing.assert_allclose(y, expected)
    assert expected[-1] > expected[0]  # pre-norm grows


def test_any_block_s_heads_on_demand():
    at = open_page(PAGE, {"blocks": "12", "n_heads": "8", "causal": "1"})
    at.selectbox(key="block_inspect").set_value(12).run()
    assert not at.exception
    seq = at.session_state["seq"]
    x = embed_tokens(seq.tokens, 16, 0).x
    run = run_stack(x, stack_params(16, 64, 12, 0), 8, causal=True)
    fig = chart_by_key(at, "block_heads_fig")
    grid = [heatmap_z({"data": [t]}) for t in fig["data"] if t.get("type") == "heatmap"]
    assert len(grid) == 8
    for h in range(8):
        np.testing.assert_allclose(grid[h], run.traces[11].weights[h], atol=1e-12)
    assert at.query_params["inspect"] == "12"
    at.slider(key="block_n_blocks").set_value(3).run()  # block 12 is gone: the last block, said so
    assert not at.exception and at.selectbox(key="block_inspect").value == 3
    assert any("Block to look inside lowered from 12 to 3: the stack has 3 blocks." in c.value for c in at.caption)
    at.slider(key="block_n_blocks").set_value(12).run()  # and block 12 comes back with the stack
    assert at.selectbox(key="block_inspect").value == 12 and at.query_params["inspect"] == "12"


def test_malformed_url_values_warn_and_fall_back():
    query = {"blocks": "99", "norm": "sideways", "act": "tanh", "d_ff": "lots", "seed": "-1", "inspect": "0"}
    at = open_page(PAGE, query)
    assert not at.exception and not at.error
    warnings = " ".join(w.value for w in at.warning)
    for name in query:
        assert f"'{name}'" in warnings
    assert at.slider(key="block_n_blocks").value == 4 and at.radio(key="block_norm").value == "post"
    assert at.selectbox(key="block_activation").value == "relu" and at.session_state["block_d_ff"] == 64
    assert at.query_params["blocks"] == "4"


@pytest.mark.parametrize(
    "d_ff, words",
    [(64, "wider than d_model (expanded 4×)"), (16, "here as wide as d_model"), (8, "narrower* than d_model = 16")],
)
def test_the_text_follows_d_ff_whether_it_expands_or_not(d_ff, words):
    at = open_page(PAGE, {"d_ff": str(d_ff)})
    assert not at.exception
    prose = " ".join(m.value for m in at.markdown)
    assert words in prose and "Only the feed-forward hidden layer is wider" not in prose
    shapes = shapes_table(at)
    assert shapes.loc[shapes["step"] == "ffn_hidden", "shape"].item().endswith(f"{d_ff})")


# ---------------------------------------------------------------- every sentence true (issue #50)


def prose(at) -> str:
    return " ".join(m.value for m in at.markdown)


def test_layer_norm_is_said_with_its_gamma_and_beta_and_the_page_s_are_1_and_0(default_page):
    text = prose(default_page)
    assert "then multiplied by a learned γ and shifted by a learned β" in text
    assert "in this page's untrained blocks γ = 1 and β = 0" in text
    for params in stack_params(16, 64, 12, 0):  # what the page's blocks really hold
        for gamma, beta in ((params.ln1_gamma, params.ln1_beta), (params.ln2_gamma, params.ln2_beta)):
            assert np.all(gamma == 1) and np.all(beta == 0)


@pytest.mark.parametrize(
    "query, d_model, d_ff, n_heads, n_blocks, seed, activation",
    [
        ({}, 16, 64, 4, 4, 0, "relu"),
        # a setting where the pre-norm stream shrinks after some block: "keeps growing" was untrue here
        ({"d_ff": "16", "blocks": "12", "seed": "3", "act": "gelu"}, 16, 16, 4, 12, 3, "gelu"),
    ],
)
def test_the_residual_stream_sentence_quotes_the_lengths_plotted(
    query, d_model, d_ff, n_heads, n_blocks, seed, activation
):
    at = open_page(PAGE, query)
    assert not at.exception
    seq = at.session_state["seq"]
    x = embed_tokens(seq.tokens, d_model, seed).x
    blocks = stack_params(d_model, d_ff, n_blocks, seed)
    post = run_stack(x, blocks, n_heads, activation=activation, norm="post").residual_norms
    pre = run_stack(x, blocks, n_heads, activation=activation, norm="pre").residual_norms
    text = next(m.value for m in at.markdown if m.value.startswith("The same blocks (same weights)"))
    assert f"just under √d_model = {np.sqrt(d_model):.2f}: here {post[1]:.2f} after every block" in text
    assert np.all(post[1:] < np.sqrt(d_model)) and np.allclose(post[1:], np.sqrt(d_model), rtol=1e-4)
    grew = int((np.diff(pre) > 0).sum())
    assert f"goes from {pre[0]:.2f} at the input to {pre[-1]:.2f} after block {n_blocks}" in text
    assert f"(it grew in {grew} of the {n_blocks} blocks)" in text
    if query:
        assert grew < n_blocks  # the case the old "keeps growing" got wrong
    assert "keeps growing" not in text and "which is why" not in text


def test_gpt_2_is_said_to_do_what_its_paper_says_not_why(default_page):
    text = prose(default_page)
    assert (
        "GPT-2 (Radford et al. 2019, 'Language Models are Unsupervised Multitask Learners') moved the layer norm to "
        "the input of each sub-block and added a layer norm after the final self-attention block" in text
    )
    assert "this page's pre-norm stack has no such final layer norm" in text
    assert "Vaswani et al. 2017, 'Attention Is All You Need'" in text
    labels = default_page.radio(key="block_norm").options
    assert labels == ["post-norm (the original Transformer, BERT)", "pre-norm (GPT-2)"]
    help_text = default_page.selectbox(key="block_activation").help
    assert "GPT (Radford et al. 2018) and BERT (Devlin et al. 2019)" in help_text


def test_a_hidden_layer_as_wide_as_d_model_is_not_said_to_have_another_width():
    at = open_page(PAGE, {"d_ff": "16"})
    text = prose(at)
    assert "hidden layer too, but only because d_ff was chosen equal to d_model here (d_ff = 16" in text
    assert "no residual add constrains it" in text
    assert "Only the feed-forward hidden layer has another width" not in text


@pytest.mark.parametrize("query", [{}, {"blocks": "12", "n_heads": "8", "causal": "1", "inspect": "12"}])
def test_the_heads_sentence_counts_the_patterns_the_captions_find(query):
    at = open_page(PAGE, query)
    assert not at.exception
    captions = list(table_with_column(at, "caption")["caption"])
    clean = sum(not c.startswith("no single pattern") for c in captions)
    text = next(m.value for m in at.markdown if "random weights, as in an untrained model" in m.value)
    assert f"the captions find a single pattern in {clean} of them" in text
    assert "rarely" not in text
