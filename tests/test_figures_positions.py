"""figures/positions.py: every builder gives a valid figure, shows the numbers it is given and escapes labels."""

import json

import numpy as np

from figures.base import validated
from figures.positions import (
    alibi_heads_figure,
    four_ways_figure,
    layer_colours,
    methods_grid,
    numbered_matrix,
    offset_figure,
    padded_heatmap,
    reach_heatmap,
    similarity_figure,
    sinusoidal_figure,
    slopes_figure,
    table_heatmap,
)
from tests.apptest_helpers import plotly_values

HOSTILE = "<img src=x onerror=alert(1)>"


def test_table_heatmap_shows_the_table_without_numbers_in_cells():
    values = np.random.default_rng(0).uniform(-1, 1, (40, 8))
    fig = validated(table_heatmap(values, x_title="dimension", y_title="position", hover="%{z:.3f}"))
    trace = fig.to_dict()["data"][0]
    np.testing.assert_array_equal(plotly_values(trace["z"]), values)
    assert "texttemplate" not in trace and trace["zmin"] == -1 and trace["zmax"] == 1
    square = table_heatmap(values[:8, :8], x_title="a", y_title="b", hover="%{z}", square=True).to_dict()["layout"]
    assert square["yaxis"]["scaleanchor"] == "x"


def test_slopes_figure_labels_each_bar_with_its_power_of_two():
    fig = validated(slopes_figure(np.array([0.5, 0.25, 2**-0.5])))
    bars = fig.to_dict()["data"][0]
    assert list(bars["text"]) == ["2^−1", "2^−2", "2^−0.5"]
    np.testing.assert_allclose(plotly_values(bars["y"]), [0.5, 0.25, 2**-0.5])


def test_offset_figure():
    fig = validated(offset_figure(np.arange(-2, 3), np.array([1.0, 2.0, 3.0, 2.0, 1.0])))
    assert list(fig.to_dict()["data"][0]["x"]) == [-2, -1, 0, 1, 2]


def test_reach_heatmap_leaves_unreached_cells_blank_and_colours_each_layer():
    first = np.array([[1, 0, 0], [1, 1, 0], [2, 1, 1]])
    fig = validated(reach_heatmap(first, 2, square=True)).to_dict()
    z = plotly_values(fig["data"][0]["z"])
    assert np.isnan(z[0, 1]) and z[2, 0] == 2
    assert fig["data"][0]["text"][2][0] == "2" and fig["data"][0]["text"][0][2] == ""
    assert len(set(layer_colours(5))) == 5


def test_padded_heatmap_greys_out_unused_rows_and_escapes_labels():
    weights = np.array([[1.0, 0.0, 0.0], [0.4, 0.6, 0.0], [0.0, 0.0, 0.0]])
    fig = validated(padded_heatmap(weights, np.array([True, True, False]), ["a", HOSTILE, "[PAD]"], title=HOSTILE))
    layout = fig.to_dict()["layout"]
    assert len(layout["shapes"]) == 1 and layout["shapes"][0]["y0"] == 1.5
    assert layout["annotations"][0]["text"] == "unused (padding)"
    trace = fig.to_dict()["data"][0]
    assert trace["text"][2] == ["", "", ""] and trace["text"][1][1] == "0.60"
    assert "<img" not in json.dumps(fig.to_dict()) and "&lt;img" in json.dumps(layout)


def test_methods_grid_hovers_name_the_method_of_each_panel():
    weights = np.random.default_rng(1).dirichlet(np.ones(3), size=(2, 3))  # (2 methods, 3, 3)
    methods = ["RoPE (rotates q and k)", "ALiBi (bias on the scores)"]
    fig = validated(methods_grid(weights, ["a", "b", HOSTILE], methods)).to_dict()
    for k, (trace, method) in enumerate(zip(fig["data"], methods)):
        assert trace["name"] == method
        hovers = [c for row in trace["customdata"] for c in row]
        assert hovers[1] == f"{method}: query 0 'a' → key 1 'b'" and not any("head" in c for c in hovers)
        assert all("<img" not in c for c in hovers)  # the labels stay escaped
        np.testing.assert_allclose(plotly_values(trace["z"]), weights[k])
    titles = [a["text"] for a in fig["layout"]["annotations"]]
    assert titles == ["RoPE (rotates<br>q and k)", "ALiBi (bias on<br>the scores)"]  # two short lines each


def test_the_similarity_and_sinusoidal_tables_say_what_their_axes_and_hovers_are():
    sims = np.random.default_rng(2).uniform(-1, 1, (6, 6))
    fig = validated(similarity_figure(sims)).to_dict()
    trace = fig["data"][0]
    np.testing.assert_array_equal(plotly_values(trace["z"]), sims)
    assert trace["hovertemplate"].startswith("positions %{y} and %{x}: cos = %{z:.3f}")
    assert fig["layout"]["yaxis"]["scaleanchor"] == "x"  # square cells
    table = np.random.default_rng(3).uniform(-1, 1, (100, 16))
    fig = validated(sinusoidal_figure(table)).to_dict()
    assert fig["layout"]["xaxis"]["title"]["text"] == "dimension (pairs: sin, cos)"
    assert fig["layout"]["yaxis"]["title"]["text"] == "position p" and fig["layout"]["height"] == 420
    assert "scaleanchor" not in fig["layout"]["yaxis"]


def test_numbered_matrix_shows_numbers_only_with_a_font_and_to_the_digits_asked():
    values = np.array([[1.234, -5.678], [0.0, 2.5]])
    with_numbers = validated(numbered_matrix(values, ["a", "b"], ["c", HOSTILE], 12, digits=1)).to_dict()
    trace = with_numbers["data"][0]
    assert trace["texttemplate"] and trace["textfont"]["size"] == 12 and trace["text"][0][1] == "-5.7"
    assert "<img" not in json.dumps(with_numbers)
    bare = validated(numbered_matrix(values, ["a", "b"], ["c", "d"], None)).to_dict()["data"][0]
    assert not bare.get("texttemplate") and bare["text"][0][1] == "-5.68"  # the hover's numbers, 2 digits
    np.testing.assert_allclose(plotly_values(bare["z"]), values)


def test_four_ways_and_alibi_heads_put_four_panels_to_a_row_with_their_titles():
    weights = np.random.default_rng(4).dirichlet(np.ones(3), size=(5, 3))  # (5 panels, 3, 3)
    methods = ["a", "b", "c", "d", "e"]
    four = validated(four_ways_figure(weights, ["x", "y", "z"], methods)).to_dict()
    assert [t["name"] for t in four["data"]] == methods
    layout = four["layout"]
    assert layout["xaxis5"]["domain"] == layout["xaxis"]["domain"]  # four to a row: the fifth starts the next
    assert layout["yaxis5"]["domain"][1] < layout["yaxis"]["domain"][0]
    one_row = four_ways_figure(weights[:4], ["x", "y", "z"], methods[:4]).to_dict()["layout"]["height"]
    assert layout["height"] - one_row == 340  # a row of the four ways is 340 px high
    slopes = np.array([0.5, 0.25, 0.125, 0.0625, 0.03125])
    heads = validated(alibi_heads_figure(weights, ["x", "y", "z"], slopes)).to_dict()
    titles = [a["text"] for a in heads["layout"]["annotations"]]
    assert titles == ["head 1 · m = 0.5", "head 2 · m = 0.25", "head 3 · m = 0.125", "head 4 · m = 0.0625",
                      "head 5 · m = 0.0312"]  # fmt: skip
    np.testing.assert_allclose(plotly_values(heads["data"][4]["z"]), weights[4])
    assert heads["layout"]["xaxis5"]["domain"] == heads["layout"]["xaxis"]["domain"]
    one_row = alibi_heads_figure(weights[:4], ["x", "y", "z"], slopes[:4]).to_dict()["layout"]["height"]
    assert heads["layout"]["height"] - one_row == 300  # a row of ALiBi heads is 300 px high
