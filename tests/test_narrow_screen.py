"""Figures on a phone (figures.base.for_narrow_screen): small multiples reflow, titles stay on their subplot."""

import copy

import numpy as np

from figures.base import _cells, for_narrow_screen, validated, wrap_title
from figures.heads import heads_grid
from figures.induction import filmstrip_figure
from figures.scaling import weights_by_d_k_figure


def columns_of(layout: dict) -> set[tuple[float, float]]:
    return {tuple(round(v, 3) for v in layout[k]["domain"]) for k in layout if k.startswith("xaxis")}


def test_small_multiples_reflow_to_two_columns_in_reading_order_with_their_titles():
    weights = np.random.default_rng(0).dirichlet(np.ones(4), size=(4, 4))
    fig = heads_grid(weights, list("abcd"), ["previous token", "first token", "itself", "most similar word"])
    before = copy.deepcopy(fig.spec["layout"])
    out = for_narrow_screen(fig.spec)
    assert str(fig.spec["layout"]) == str(before)  # the cached figure is not altered
    layout = out["layout"]
    assert len(columns_of(layout)) == 2 and len(columns_of(fig.spec["layout"])) == 4
    cells, _ = _cells(out["data"], layout)
    for k, title in enumerate(layout["annotations"]):  # each title still centred above its own head
        (x0, x1), (_, y1) = cells[(f"xaxis{k + 1 if k else ''}", f"yaxis{k + 1 if k else ''}")]
        assert abs(title["x"] - (x0 + x1) / 2) < 1e-9 and abs(title["y"] - y1) < 1e-9
    assert [round(c["y"], 3) for c in layout["annotations"]][::2] != [1.0, 1.0]  # heads 3 and 4 went below
    assert layout["height"] > fig.spec["layout"]["height"]
    validated(type(fig)(out))  # still a valid plotly figure


def test_a_grid_with_row_labels_reflows_in_blocks_of_columns_repeating_its_labels():
    fig = filmstrip_figure(np.full((6, 2, 1, 3, 3), 1 / 3), [0, 50, 100, 150, 200, 250], list("abc"))
    layout = for_narrow_screen(fig.spec)["layout"]
    assert len(columns_of(layout)) == 2
    labels = [a for a in layout["annotations"] if a.get("textangle") == -90]
    assert len(labels) == 2 * 3  # each of the 2 heads' labels beside each of the 3 blocks of 2 steps
    steps = [a["text"] for a in layout["annotations"] if a["text"].startswith("step")]
    assert steps == [f"step {s}" for s in (0, 50, 100, 150, 200, 250)]


def test_shared_axes_are_not_reflowed_but_their_titles_wrap():
    weights = np.full((2, 4), 0.25)
    fig = weights_by_d_k_figure([2, 64], weights, weights)
    layout = for_narrow_screen(fig.spec, width_px=200)["layout"]
    assert columns_of(layout) == columns_of(fig.spec["layout"])
    assert any("<br>" in a["text"] for a in layout["annotations"])


def test_explicit_ticks_thin_out_and_titles_wrap_at_spaces():
    weights = np.full((1, 16, 16), 1 / 16)
    fig = heads_grid(weights, [f"token{i}" for i in range(16)], ["one head with a long title"], columns=1)
    axis = for_narrow_screen(fig.spec, width_px=220)["layout"]["xaxis"]
    assert len(axis["tickvals"]) <= 220 // 28 and axis["tickvals"][:2] == [0, 3]
    assert len(axis["ticktext"]) == len(axis["tickvals"])
    assert wrap_title("scaled: softmax(q·k / √d_k)", 12) == "scaled:<br>softmax(q·k<br>/ √d_k)"
    assert wrap_title("<b>L1 H2</b> prev<br>x", 40) == "<b>L1 H2</b> prev<br>x"
