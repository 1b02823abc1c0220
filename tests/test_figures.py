"""Figure builders shared by the pages: heatmaps, the geometry view; and the download formats."""
import csv
import io
import json

import numpy as np

from attention import attention_steps
from attention.examples import compass
from figures.base import validated
from figures.geometry import arrows_figure
from figures.heatmaps import attention_heatmap, matrix_heatmap
from ui.export import matrices_to_csv, matrices_to_json


def compass_steps(**kw):
    e = compass()
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
    fig = attention_heatmap(s.weights, e.tokens, e.tokens, scores=s.scores, scale_factor=s.scale_factor,
                            allowed=s.allowed)
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
    e = compass()
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
