"""figures/positions.py: every builder gives a valid figure, shows the numbers it is given and escapes labels."""

import json

import numpy as np

from figures.base import validated
from figures.positions import (
    layer_colours,
    methods_grid,
    offset_figure,
    padded_heatmap,
    reach_heatmap,
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
    assert titles == methods
