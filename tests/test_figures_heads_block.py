"""figures/heads.py and figures/block.py: the heads and block pages' figures, tested directly as plotly Figures."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import plotly.graph_objects as go
import pytest

from attention import transformer_block
from figures.block import block_diagram, residual_norm_figure, shape_text, stack_figure
from figures.heads import column_blocks_figure, head_split_figure, heads_grid
from lessons.head_library import embed_tokens, residual_sources, run_stack, stack_params

TOKENS = ("north", "east", "south", "west")


def annotation_texts(fig: go.Figure) -> list[str]:
    return [a.text for a in fig.layout.annotations]


# ---------------------------------------------------------------- heads


@pytest.mark.parametrize("d_model, n_heads", [(16, 4), (16, 8), (8, 1), (64, 8)])
def test_head_split_frames_every_head_and_its_columns(d_model, n_heads):
    m = np.arange(4 * d_model, dtype=float).reshape(4, d_model)
    fig = head_split_figure(m, n_heads, TOKENS)
    rects = [s for s in fig.layout.shapes if s.type == "rect"]
    d_head = d_model // n_heads
    assert [(r.x0, r.x1) for r in rects] == [(h * d_head - 0.5, (h + 1) * d_head - 0.5) for h in range(n_heads)]
    assert [t for t in annotation_texts(fig) if "head" in t] == [f"<b>head {h + 1}</b>" for h in range(n_heads)]
    np.testing.assert_array_equal(fig.data[0].z, m)
    assert list(fig.data[0].customdata[0][d_model - 1]) == [f"head {n_heads}", f"{m[0, -1]:.3f}"]


def test_a_value_that_rounds_to_zero_shows_no_minus_sign():
    m = np.array([[-1e-17, -0.0004, -0.004, 2.0]])
    fig = head_split_figure(m, 2, ["a"])
    assert [c[1] for c in fig.data[0].customdata[0]] == ["0.000", "0.000", "-0.004", "2.000"]  # the hover
    assert list(fig.data[0].text[0]) == ["0.00", "0.00", "0.00", "2.00"]  # the cells: -0.004 shows as 0.00


def test_head_split_refuses_heads_that_do_not_divide():
    with pytest.raises(ValueError, match="does not divide"):
        head_split_figure(np.zeros((2, 6)), 4, ("a", "b"))


def test_column_blocks_escape_labels():
    fig = column_blocks_figure(
        np.ones((2, 3)), ("<b>x</b>", "y"), [(0, 3, "<i>all</i>", "#000")], column_labels=("a", "b", "<c>")
    )
    assert fig.layout.yaxis.ticktext == ("&lt;b&gt;x&lt;/b&gt;", "y")
    assert "&lt;i&gt;all&lt;/i&gt;" in annotation_texts(fig)[0]
    assert fig.layout.xaxis.ticktext[2] == "&lt;c&gt;"


@pytest.mark.parametrize("n_heads", [1, 3, 4, 8])
def test_heads_grid_has_one_heatmap_per_head_on_one_colour_scale(n_heads):
    rng = np.random.default_rng(0)
    w = rng.random((n_heads, 4, 4))
    w /= w.sum(axis=-1, keepdims=True)
    fig = heads_grid(w, TOKENS, [f"head {h + 1}\ncaption {h + 1}" for h in range(n_heads)])
    heatmaps = [t for t in fig.data if t.type == "heatmap"]
    assert len(heatmaps) == n_heads
    assert {t.coloraxis for t in heatmaps} == {"coloraxis"}
    assert (fig.layout.coloraxis.cmin, fig.layout.coloraxis.cmax) == (0.0, 1.0)
    for h, t in enumerate(heatmaps):
        np.testing.assert_array_equal(t.z, w[h])
    titles = annotation_texts(fig)[:n_heads]
    assert titles[0] == "head 1<br>caption 1"


def test_heads_grid_escapes_tokens_and_checks_titles():
    fig = heads_grid(np.full((1, 2, 2), 0.5), ("<script>", "b"), ["<b>t</b>"])
    assert fig.layout.xaxis.ticktext[0] == "&lt;script&gt;"
    assert annotation_texts(fig)[0] == "&lt;b&gt;t&lt;/b&gt;"
    with pytest.raises(ValueError, match="2 titles for 1 heads"):
        heads_grid(np.full((1, 2, 2), 0.5), ("a", "b"), ["x", "y"])


# ---------------------------------------------------------------- block


@pytest.fixture(params=["post", "pre"])
def trace(request):
    x = embed_tokens(TOKENS, 16).x
    (params,) = stack_params(16, 48, 1)
    return transformer_block(x, params, 4, norm=request.param)[1]


def diagram_of(trace):
    return block_diagram([(s.name, s.label, s.shape) for s in trace.steps], residual_sources(trace))


def test_the_diagram_writes_every_traced_shape_at_its_arrow(trace):
    fig = diagram_of(trace)
    shapes_at_arrows = [a.text for a in fig.layout.annotations if a.name == "shape"]
    assert shapes_at_arrows == [shape_text(s.shape) for s in trace.steps]
    assert "(4, 48)" in shapes_at_arrows  # the feed-forward's hidden layer, d_ff wide
    labels = annotation_texts(fig)
    for step in trace.steps:
        assert step.label in labels


def test_the_diagram_draws_one_skip_connection_per_residual_add(trace):
    fig = diagram_of(trace)
    skips = [t for t in annotation_texts(fig) if t.startswith("skip")]
    assert skips == ["skip (4, 16)", "skip (4, 16)"]
    paths = [s for s in fig.layout.shapes if s.type == "path"]
    assert len(paths) == 2


def test_the_diagram_needs_steps():
    with pytest.raises(ValueError):
        block_diagram([], {})


def test_shape_text():
    assert shape_text((4, 16)) == "(4, 16)"
    assert shape_text(np.array([2, 4, 16])) == "(2, 4, 16)"


@pytest.mark.parametrize("n_blocks", [1, 12])
def test_stack_figure_shows_every_block_and_every_shape(n_blocks):
    fig = stack_figure([(4, 16)] * (n_blocks + 1))
    texts = annotation_texts(fig)
    assert texts.count("(4, 16)") == n_blocks + 1
    assert f"block<br>{n_blocks}" in texts
    assert len([s for s in fig.layout.shapes if s.type == "rect"]) == n_blocks
    with pytest.raises(ValueError):
        stack_figure([(4, 16)])


def test_residual_norm_figure_has_a_line_per_norm_and_the_sqrt_d_reference():
    x = embed_tokens(TOKENS, 16).x
    blocks = stack_params(16, 64, 5)
    norms = {n: run_stack(x, blocks, 4, norm=n).residual_norms for n in ("post", "pre")}
    fig = residual_norm_figure(norms, 16, highlight="pre")
    assert [t.name for t in fig.data] == ["post-norm", "pre-norm"]
    np.testing.assert_allclose(fig.data[1].y, norms["pre"])
    assert list(fig.data[0].x) == list(range(6))
    assert fig.data[1].line.width > fig.data[0].line.width
    hline = [s for s in fig.layout.shapes if s.type == "line"]
    assert hline and hline[0].y0 == pytest.approx(4.0)


def test_figures_do_not_import_streamlit():
    code = "import sys, figures.block, figures.heads; assert 'streamlit' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
