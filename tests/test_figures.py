"""figures/heatmaps.py, geometry.py, heads.py, block.py, causal.py, predict.py, pretrained.py and scaling.py, built
from the lessons' numbers; and ui/export.py's download formats."""

import csv
import io
import json

import numpy as np
import pytest
from plotly.subplots import make_subplots

from attention import attention_steps
from figures.base import validated
from figures.block import block_diagram, residual_norm_figure, stack_figure
from figures.causal import difference_bars, leak_bars
from figures.geometry import arrows_figure
from figures.heads import column_blocks_figure, head_split_figure, heads_grid
from figures.heatmaps import attention_heatmap, matrix_heatmap
from figures.predict import guess_heatmap
from figures.pretrained import head_heatmap, overview_figure, token_lines_figure
from figures.scaling import (
    LOG_FLOOR,
    grad_norm_figure,
    jacobian_figure,
    loss_curves_figure,
    max_weight_figure,
    running_median,
    variance_figure,
    weights_by_d_k_figure,
)
from lessons.examples import compass
from lessons.head_library import embed_tokens, residual_sources, run_stack, stack_params
from lessons.pitfalls import invariance_check, leak_example, mask_after_softmax, randomise_after
from lessons.scaling import SWEEP_D_KS, scaling_stats
from ui.export import matrices_to_csv, matrices_to_json


def compass_steps(**kw):
    e = compass().seq
    return e, attention_steps(e.q, e.k, e.v, **kw)


def test_attention_heatmap_has_a_fixed_scale_labels_and_annotations():
    e, s = compass_steps()
    fig = validated(attention_heatmap(s.weights, e.tokens, e.tokens, scores=s.scores, scale_factor=s.scale_factor))
    trace = fig.data[0]
    assert (trace.zmin, trace.zmax) == (0.0, 1.0)  # colours mean the same thing on every page
    assert list(fig.layout.xaxis.ticktext) == list(e.tokens) and list(fig.layout.yaxis.ticktext) == list(e.tokens)
    assert trace.text[0][0] == f"{s.weights[0, 0]:.2f}"
    np.testing.assert_array_equal(np.asarray(trace.z), s.weights)


def test_hover_spells_out_the_arithmetic_of_each_cell():
    e, s = compass_steps(causal=True)
    fig = attention_heatmap(
        s.weights, e.tokens, e.tokens, scores=s.scores, scale_factor=s.scale_factor, allowed=s.allowed
    )
    hover = fig.data[0].customdata
    # north's query (0, 2) · north's key (0, 2) = 4; divided by sqrt(2) = 2.828
    assert "q_0 · k_0 = 4.000" in hover[0][0] and "divided by √d_k = 2.828" in hover[0][0]
    assert f"weight = {s.weights[0, 0]:.3f}" in hover[0][0]
    assert "masked: −∞ before the softmax" in hover[0][1] and "masked" not in hover[1][0]


def test_labels_are_escaped_so_user_text_never_becomes_markup():
    w = np.array([[1.0]])
    fig = attention_heatmap(w, ["<img src=x onerror=alert(1)>"], ["<b>k</b>"], scores=w, scale_factor=1.0)
    assert fig.layout.yaxis.ticktext[0] == "&lt;img src=x onerror=alert(1)&gt;"
    assert "<img" not in fig.data[0].customdata[0][0] and "&lt;b&gt;k&lt;/b&gt;" in fig.data[0].customdata[0][0]


def test_matrix_heatmap_writes_minus_infinity_and_leaves_it_uncoloured():
    e, s = compass_steps(causal=True)
    fig = validated(matrix_heatmap(s.masked, e.tokens, e.tokens, title="masked"))
    assert fig.data[0].text[0][1] == "−∞" and np.isnan(np.asarray(fig.data[0].z, dtype=float)[0, 1])


def test_geometry_draws_one_arrow_per_query_and_key():
    e = compass().seq
    fig = validated(arrows_figure(e.q, e.k, e.tokens))
    assert len(fig.layout.annotations) == 2 * len(e.tokens)
    tips = {(a.x, a.y) for a in fig.layout.annotations}
    assert (0.0, 2.0) in tips and (-2.0, 0.0) in tips
    labels = " ".join(t.text[0] for t in fig.data if t.text)
    assert "q0 north" in labels and "k3 west" in labels


def test_downloads_hold_every_number_exactly():
    e, s = compass_steps(causal=True)
    mats = {"Q": s.q, "masked": s.masked, "weights": s.weights}
    doc = json.loads(matrices_to_json(e.tokens, mats, causal=True))
    assert doc["tokens"] == list(e.tokens) and doc["settings"] == {"causal": True}
    assert doc["matrices"]["masked"][0][1] == "-inf"
    np.testing.assert_array_equal(np.array(doc["matrices"]["weights"]), s.weights)
    rows = list(csv.DictReader(io.StringIO(matrices_to_csv(e.tokens, mats))))
    assert len(rows) == s.q.size + s.masked.size + s.weights.size
    w01 = next(r for r in rows if r["matrix"] == "weights" and r["row"] == "0" and r["column"] == "1")
    assert float(w01["value"]) == s.weights[0, 1] and w01["row_token"] == "north"


def test_weights_run_from_white_at_0_to_dark_blue_at_1():
    # unvalidated figures must not send a colorscale name: plotly.js reverses "Blues"
    e, s = compass_steps()
    stops = attention_heatmap(s.weights, e.tokens, e.tokens).data[0].colorscale
    assert stops[0][0] == 0 and stops[0][1] == "rgb(247,251,255)"  # near white
    assert stops[-1][0] == 1 and stops[-1][1] == "rgb(8,48,107)"  # dark blue


# ---------------------------------------------------------------- block and heads figures (built unvalidated)

BLOCK_TOKENS = ("north", "east", "south", "west")


def _block_run(norm: str, n_blocks: int = 3):
    x = embed_tokens(BLOCK_TOKENS, 16).x
    return run_stack(x, stack_params(16, 48, n_blocks), 4, norm=norm, causal=norm == "pre")


def _some_weights(h: int, n: int = 4) -> np.ndarray:
    w = np.random.default_rng(h).random((h, n, n))
    return w / w.sum(axis=-1, keepdims=True)


BLOCK_FIGURES = {
    "block_diagram post, titled": lambda: block_diagram(
        [(s.name, s.label, s.shape) for s in _block_run("post").traces[0].steps],
        residual_sources(_block_run("post").traces[0]),
        title="Block 1, post-norm",
    ),
    "block_diagram pre": lambda: block_diagram(
        [(s.name, s.label, s.shape) for s in _block_run("pre").traces[0].steps],
        residual_sources(_block_run("pre").traces[0]),
    ),
    "block_diagram escaped label": lambda: block_diagram(
        [("input", "<x> & y", (2, 3)), ("residual_1", "add", (2, 3))], {"residual_1": "input"}
    ),
    "stack_figure 1 block": lambda: stack_figure([(4, 16), (4, 16)]),
    "stack_figure 12 blocks": lambda: stack_figure([(4, 16)] * 13),
    "residual_norm_figure": lambda: residual_norm_figure(
        {n: _block_run(n).residual_norms for n in ("post", "pre")}, 16, highlight="pre"
    ),
    "residual_norm_figure other name": lambda: residual_norm_figure({"other": [1.0, 2.0]}, 9),
}

HEADS_FIGURES = {
    "head_split_figure titled": lambda: head_split_figure(
        np.arange(64.0).reshape(4, 16) - 30, 4, BLOCK_TOKENS, title="Q"
    ),
    "head_split_figure 64 heads": lambda: head_split_figure(np.ones((2, 64)), 64, ("a", "<b>")),
    "head_split_figure not annotated": lambda: head_split_figure(np.zeros((3, 6)), 2, ("a", "b", "c"), annotate=False),
    "column_blocks_figure labelled": lambda: column_blocks_figure(
        np.ones((2, 3)),
        ("<b>x</b>", "y"),
        [(0, 1, "position", "#6a3d9a"), (1, 3, "<i>word</i>", "#b15928")],
        column_labels=("a", "b", "<c>"),
        title="X",
    ),
    "column_blocks_figure no blocks": lambda: column_blocks_figure(np.array([[1.0, -2.0]]), ("r",), []),
    **{
        f"heads_grid {h} heads": (
            lambda h=h: heads_grid(_some_weights(h), BLOCK_TOKENS, [f"head {k + 1}\n<i>cap</i>" for k in range(h)])
        )
        for h in (1, 3, 4, 5, 8)
    },
    "heads_grid 3 columns, annotated": lambda: heads_grid(
        _some_weights(6, 9), tuple("abcdefghi"), list("abcdef"), columns=3, annotate=True, height_per_row=200
    ),
}


@pytest.mark.parametrize("name", list(BLOCK_FIGURES))
def test_block_figures_are_valid_plotly(name):
    fig = validated(BLOCK_FIGURES[name]())  # raises on any invalid property
    assert fig.layout.height and fig.layout.annotations


@pytest.mark.parametrize("name", list(HEADS_FIGURES))
def test_heads_figures_are_valid_plotly(name):
    fig = validated(HEADS_FIGURES[name]())
    heatmaps = [t for t in fig.data if t.type == "heatmap"]
    assert heatmaps and all(np.ndim(t.z) == 2 for t in heatmaps)


@pytest.mark.parametrize("n_heads, columns", [(1, 4), (3, 4), (4, 4), (5, 4), (8, 4), (6, 3), (3, 1), (7, 2)])
def test_heads_grid_places_its_cells_and_titles_as_make_subplots_does(n_heads, columns):
    fig = heads_grid(_some_weights(n_heads), BLOCK_TOKENS, [f"t{k}" for k in range(n_heads)], columns=columns)
    cols = min(columns, n_heads)
    rows = -(-n_heads // cols)
    ref = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=[f"t{k}" for k in range(n_heads)],
        horizontal_spacing=0.04,
        vertical_spacing=min(0.25, 0.5 / rows),
    )
    for k in range(rows * cols):  # every cell has its axes, even the empty ones at the end of the last row
        suffix = str(k + 1) if k else ""
        for axis in ("xaxis", "yaxis"):
            assert fig.layout[axis + suffix].domain == ref.layout[axis + suffix].domain
            assert fig.layout[axis + suffix].anchor == ref.layout[axis + suffix].anchor
    for k, t in enumerate(fig.data):
        suffix = str(k + 1) if k else ""
        assert (t.xaxis, t.yaxis) == ("x" + suffix, "y" + suffix)
        assert fig.layout["yaxis" + suffix].showticklabels == (k % cols == 0)
    assert [(a.text, a.x, a.y, a.xref, a.yref, a.yanchor) for a in fig.layout.annotations] == [
        (a.text, a.x, a.y, a.xref, a.yref, a.yanchor) for a in ref.layout.annotations
    ]


def test_heads_figures_send_colour_stops_not_colorscale_names():
    # plotly.js's named "RdBu" and "Blues" run the other way round from plotly.py's
    split = head_split_figure(np.array([[-1.0, 1.0]]), 2, ("a",))
    stops = split.data[0].colorscale
    assert stops[0] == (0.0, "rgb(103,0,31)") and stops[-1] == (1.0, "rgb(5,48,97)")  # red < 0, blue > 0
    grid = heads_grid(_some_weights(2), BLOCK_TOKENS, ["a", "b"]).layout.coloraxis.colorscale
    assert grid[0] == (0.0, "rgb(247,251,255)") and grid[-1] == (1.0, "rgb(8,48,107)")  # white at 0, dark blue at 1


def test_block_residual_norm_reference_line_spans_the_plot_as_add_hline_drew_it():
    fig = residual_norm_figure({"post": [4.0, 4.0]}, 16)
    (line,) = fig.layout.shapes
    assert (line.type, line.xref, line.x0, line.x1, line.yref, line.y0, line.y1) == (
        "line",
        "x domain",
        0,
        1,
        "y",
        4.0,
        4.0,
    )
    (label,) = fig.layout.annotations
    assert (label.xref, label.x, label.xanchor, label.yanchor, label.text) == (
        "x domain",
        1,
        "right",
        "top",
        "√d_model = 4.00",
    )


# ---------------------------------------------------------------- scaling, lessons and pretrained figures (unvalidated)

WHITE_TO_DARK_BLUE = ((0.0, "rgb(247,251,255)"), (1.0, "rgb(8,48,107)"))  # plotly.py's "Blues", never the name


def _ends(stops) -> tuple:
    return (float(stops[0][0]), stops[0][1]), (float(stops[-1][0]), stops[-1][1])


def _rows_of_weights(shape, seed=0) -> np.ndarray:
    w = np.random.default_rng(seed).random(shape) ** 4
    return w / w.sum(axis=-1, keepdims=True)


def test_scaling_figures_are_valid_plotly_with_an_explicit_colour_scale():
    for n_keys in (1, 8, 64):  # 64 keys: too many to write the numbers in
        stats = scaling_stats(SWEEP_D_KS, n_keys=n_keys, n_samples=50, seed=0)
        rows = [stats.index(d) for d in (4, 64, 1024)]
        for scores in (stats.example_scores[rows], None):
            fig = validated(
                weights_by_d_k_figure([4, 64, 1024], stats.example_unscaled[rows], stats.example_scaled[rows], scores)
            )
            assert [(t.xaxis, t.yaxis) for t in fig.data] == [("x", "y"), ("x2", "y2")]
            assert (fig.data[0].text is None) == (n_keys > 16) and fig.layout.yaxis2.matches == "y"
            assert _ends(fig.layout.coloraxis.colorscale) == WHITE_TO_DARK_BLUE
        validated(max_weight_figure(stats.d_k, stats.max_weight_unscaled, stats.max_weight_scaled, n_keys))
        validated(variance_figure(stats.d_k, stats.variance))
        validated(
            jacobian_figure(
                stats.d_k,
                stats.jacobian_median_unscaled,
                stats.jacobian_median_scaled,
                stats.jacobian_norm_unscaled,
                stats.jacobian_norm_scaled,
            )
        )
    steps = np.random.default_rng(1).random(40)
    validated(loss_curves_figure(steps, steps[::-1]))
    fig = validated(grad_norm_figure(steps, np.where(steps > 0.5, steps, 0.0)))
    assert [t.mode for t in fig.data] == ["markers", "markers", "lines", "lines"]
    assert fig.data[0].marker.color == "#d62728" and min(fig.data[0].y) == LOG_FLOOR


def test_scaling_max_weight_lines_are_what_add_hline_would_draw():
    fig = max_weight_figure(np.array([1, 2, 4]), np.array([0.5, 0.7, 0.9]), np.array([0.5, 0.5, 0.5]), 8)
    one_hot, uniform = fig.layout.shapes
    assert (one_hot.type, one_hot.xref, one_hot.x0, one_hot.x1, one_hot.yref, one_hot.y0, one_hot.y1) == (
        "line",
        "x domain",
        0,
        1,
        "y",
        1.0,
        1.0,
    )
    assert uniform.y0 == uniform.y1 == 1 / 8 and uniform.line.dash == "dot"
    labels = [(a.text, a.x, a.xanchor, a.y, a.yanchor) for a in fig.layout.annotations]
    assert labels == [("one-hot", 0, "left", 1.0, "top"), ("uniform (1/8)", 1, "right", 0.125, "bottom")]
    assert fig.layout.title.text == "Largest attention weight" and fig.layout.xaxis.title.text == "d_k"


def test_scaling_running_median_is_the_median_of_the_last_window_values():
    rng = np.random.default_rng(0)
    for n in (0, 1, 5, 14, 15, 16, 100):
        for window in (1, 2, 4, 15, 200):
            x = rng.standard_normal(n)
            x[rng.random(n) < 0.05] = np.nan
            plain = np.array([np.median(x[max(0, i - window + 1) : i + 1]) for i in range(n)])
            np.testing.assert_array_equal(running_median(x, window), plain)  # exactly, NaN where a window has one


def test_lessons_figures_are_valid_plotly():
    ex = leak_example().seq
    t = 2
    inv = invariance_check((ex.q, ex.k, ex.v), randomise_after(ex.q, ex.k, ex.v, t, seed=0), t)
    fig = validated(difference_bars(inv.diff, t, ex.tokens))
    (line,) = fig.layout.shapes  # what fig.add_vline(x=t + 0.5) would draw
    assert (line.xref, line.x0, line.x1, line.yref, line.y0, line.y1) == ("x", t + 0.5, t + 0.5, "y domain", 0, 1)
    (label,) = fig.layout.annotations
    side = "right" if t + 0.5 > len(ex.tokens) / 2 else "left"  # the wider side of the line: the label is never cut
    assert (label.x, label.xanchor, label.yref, label.y, label.yanchor) == (t + 0.5, side, "y domain", 1, "top")
    n = len(ex.tokens)
    assert difference_bars(inv.diff, 0, ex.tokens).layout.annotations[0].xanchor == "left"
    assert difference_bars(inv.diff, n - 2, ex.tokens).layout.annotations[0].xanchor == "right"
    validated(difference_bars(np.zeros(3), 0, ["a", "<b>", "c"], height=200))
    bug = mask_after_softmax(ex.q, ex.k, ex.v)
    fig = validated(leak_bars(bug.row_sums, bug.leak, ex.tokens))
    (line,) = fig.layout.shapes
    assert (line.xref, line.x0, line.x1, line.y0, line.y1, line.line.dash) == ("x domain", 0, 1, 1.0, 1.0, "dot")
    w = np.array([[0.9, 0.1], [0.2, 0.8]])
    fig = validated(guess_heatmap(w, ["a", "b"], [1, 0], [False, True], scores=w, scale_factor=0.5))
    assert [t.type for t in fig.data] == ["heatmap", "scatter", "scatter"] and fig.layout.showlegend
    assert fig.layout.margin.t == 40 and fig.layout.margin.l == 10 and len(fig.layout.shapes) == 2
    assert _ends(fig.data[0].colorscale) == WHITE_TO_DARK_BLUE


def test_pretrained_figures_are_valid_plotly_with_an_explicit_colour_scale():
    for n in (4, 30):
        w = _rows_of_weights((n, n), seed=n)
        tokens = ["<img src=x>"] + [f"t{i}" for i in range(1, n)]
        fig = validated(head_heatmap(w, tokens))
        assert _ends(fig.data[0].colorscale) == WHITE_TO_DARK_BLUE and fig.data[0].customdata is None
        fig = validated(head_heatmap(w, tokens, original=w / 2, positions=list(range(1, n + 1)), title="Head A"))
        assert fig.layout.title.text == "Head A" and fig.data[0].customdata is not None
        validated(token_lines_figure(w, tokens, threshold=0.05))
        fig = validated(token_lines_figure(w, tokens, threshold=0.05, focus=1, colour="#d62728", title="Head B"))
        assert fig.layout.title.text == "Head B"
        assert {t.line.color for t in fig.data if t.mode == "lines"} == {"#d62728"}
    n = 6
    tokens = ["[CLS]", *[f"w{i}" for i in range(1, n - 1)], "[SEP]"]
    fig = validated(overview_figure(_rows_of_weights((2, 3, n, n)), tokens))
    image, markers = fig.data
    assert image.type == "image" and image.source.startswith("data:image/png;base64,") and image.hoverinfo == "skip"
    assert markers.hoverinfo == "text" and fig.layout.xaxis.title.text.startswith("head (each thumbnail")
