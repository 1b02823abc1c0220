"""figures/reading.py: queries and keys as points, chosen rows, rollout bars and the two-sentence difference,
on hand-made numbers; every figure validated by plotly once."""

import numpy as np
import pytest

from figures.base import validated
from figures.pretrained import token_lines_figure
from figures.reading import (
    MAX_KEY_LINES,
    POINT_LABELS_MAX,
    chosen_lines_figure,
    difference_heatmap,
    display_max,
    feed_figure,
    heaviest,
    key_lines,
    query_key_figure,
    rollout_heatmap,
    rows_heatmap,
    rows_lines_figure,
)

HOSTILE = "<img src=x onerror=alert(1)>"


def random_weights(shape, seed=0) -> np.ndarray:
    w = np.random.default_rng(seed).random(shape) ** 4
    return w / w.sum(axis=-1, keepdims=True)


def line_pairs(fig, first_key_trace: int = 2) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """The (start, end) points of every two-point line trace."""
    return [
        ((t.x[0], t.y[0]), (t.x[1], t.y[1])) for t in fig.data[first_key_trace:] if t.mode == "lines" and len(t.x) == 2
    ]


def test_heaviest_and_the_keys_a_clicked_query_draws():
    row = np.array([0.05, 0.5, 0.01, 0.3, 0.015, 0.025, 0.1])
    assert heaviest(row, 3).tolist() == [1, 3, 6]
    assert key_lines(row) == [1, 3, 6, 0, 5]  # the five heaviest, each >= 0.02
    assert key_lines(np.full(100, 0.01)) == [0]  # weight spread thin: still the heaviest one
    assert len(key_lines(np.full(10, 0.1))) == MAX_KEY_LINES


def test_query_key_figure_puts_queries_then_keys_and_draws_the_selected_querys_lines():
    n = 4
    coords = np.arange(2 * n * 2, dtype=float).reshape(2 * n, 2)
    weights = np.array([[0.7, 0.2, 0.1, 0.0], [0.25, 0.25, 0.25, 0.25], [0.0, 0.0, 1.0, 0.0], [0.1, 0.1, 0.1, 0.7]])
    tokens = ["[CLS]", HOSTILE, "it", "[SEP]"]
    fig = validated(query_key_figure(coords, tokens, weights, axis_shares=(0.6, 0.2), selected=0, title="t"))
    queries, keys = fig.data[0], fig.data[1]
    assert queries.name == "queries" and keys.name == "keys"
    np.testing.assert_array_equal(np.column_stack([queries.x, queries.y]), coords[:n])
    np.testing.assert_array_equal(np.column_stack([keys.x, keys.y]), coords[n:])
    # query 0 reads key 0 (0.7), key 1 (0.2), key 2 (0.1); 0.0 is not drawn
    assert line_pairs(fig) == [(tuple(coords[0]), tuple(coords[n + j])) for j in (0, 1, 2)]
    assert [a.text for a in fig.layout.annotations] == ["0.70", "0.20", "0.10"]
    widths = [t.line.width for t in fig.data[2:] if t.mode == "lines"]
    assert widths == sorted(widths, reverse=True)  # thicker for more weight
    assert "heaviest keys: '[CLS]' 0.70, '&lt;img src=x onerror=alert(1)&gt;' 0.20, 'it' 0.10" in queries.hovertext[0]
    assert "read most by: 'it' 1.00" in keys.hovertext[2]
    assert "60%" in fig.layout.xaxis.title.text and fig.layout.yaxis.scaleanchor == "x"  # no stretched axis
    assert queries.marker.size[0] > queries.marker.size[1]  # the selected query stands out
    assert "<img" not in fig.to_json()


def test_query_key_figure_without_a_selection_draws_no_lines():
    weights = random_weights((3, 3))
    fig = validated(query_key_figure(np.zeros((6, 2)), ["a", "b", "c"], weights, axis_shares=(0.5, 0.5)))
    assert len(fig.data) == 2 and not fig.layout.annotations


def test_long_inputs_name_only_the_chosen_points():
    n = POINT_LABELS_MAX + 10
    weights = np.eye(n)
    tokens = [f"t{i}" for i in range(n)]
    fig = query_key_figure(np.zeros((2 * n, 2)), tokens, weights, axis_shares=(0.5, 0.1), selected=7, named=[3])
    named_queries = [i for i, text in enumerate(fig.data[0].text) if text]
    named_keys = [i for i, text in enumerate(fig.data[1].text) if text]
    assert named_queries == [3, 7] and named_keys == [3, 7]  # the chosen row, the selected query and its key


def test_query_key_figure_refuses_mismatched_shapes():
    with pytest.raises(ValueError, match="coords"):
        query_key_figure(np.zeros((5, 2)), ["a", "b", "c"], np.eye(3), axis_shares=(0.5, 0.5))


def test_rows_heatmap_keeps_the_chosen_rows_against_every_key():
    w = random_weights((5, 5))
    tokens = ["[CLS]", "it", HOSTILE, "it", "[SEP]"]
    fig = validated(rows_heatmap(w[[1, 3]], tokens, [1, 3], title="x"))
    trace = fig.data[0]
    np.testing.assert_array_equal(trace.z, w[[1, 3]])
    assert list(trace.y) == ["1 · it", "3 · it"] and len(trace.x) == 5
    assert trace.texttemplate  # small: numbers in the cells
    assert "<img" not in fig.to_json()
    big = rows_heatmap(random_weights((2, 100)), [f"t{i}" for i in range(100)], [5, 6])
    assert big.data[0].texttemplate is None
    with pytest.raises(ValueError, match="expected"):
        rows_heatmap(w[[1, 3]], tokens, [1])


def test_chosen_lines_show_only_the_chosen_queries_and_the_keys_they_read():
    n = 200
    w = np.full((n, n), 0.1 / (n - 2))
    w[10, [3, 150]] = [0.6, 0.3]  # query 10 reads key 3 and key 150
    w[120, 150] = 0.9  # query 120 reads key 150
    tokens = [f"t{i}" for i in range(n)]
    fig = validated(chosen_lines_figure(w, tokens, [10, 120], threshold=0.05))
    left, right = (t for t in fig.data if t.mode == "markers+text")
    assert list(left.text) == ["10 · t10", "120 · t120"] and list(right.text) == ["3 · t3", "150 · t150"]
    pairs = set()
    for t in (t for t in fig.data if t.mode == "lines"):
        for y0, y1, _ in np.array(t.y, dtype=float).reshape(-1, 3):
            pairs.add((list(left.y).index(y0), list(right.y).index(y1)))
    assert pairs == {(0, 0), (0, 1), (1, 1)}  # (10 → 3), (10 → 150), (120 → 150)
    assert fig.layout.height < 400  # two queries fill a small figure, not a column of 200 names


def test_chosen_lines_say_when_nothing_reaches_the_threshold():
    fig = validated(chosen_lines_figure(np.full((50, 50), 0.02), [f"t{i}" for i in range(50)], [4], threshold=0.05))
    assert not [t for t in fig.data if t.mode == "lines"]
    assert any("no weight of these queries reaches 0.05" in a.text for a in fig.layout.annotations)


def test_rows_lines_draw_every_query_when_all_are_chosen_else_only_the_chosen():
    w = random_weights((6, 6))
    tokens = [f"t{i}" for i in range(6)]
    every = validated(rows_lines_figure(w, tokens, list(range(6)), title="x"))
    assert every.to_plotly_json() == token_lines_figure(w, tokens, threshold=0.05, title="x").to_plotly_json()
    some = validated(rows_lines_figure(w, tokens, [2], title="x"))
    assert some.to_plotly_json() == chosen_lines_figure(w, tokens, [2], threshold=0.05, title="x").to_plotly_json()
    left = next(t for t in some.data if t.mode == "markers+text")
    assert list(left.text) == ["2 · t2"]


def test_rollout_heatmap_names_its_layers_rows_and_cap():
    w = random_weights((4, 4))
    tokens = ["[CLS]", "a", "b", "[SEP]"]
    fig = validated(rollout_heatmap(w[[1, 2]], tokens, [1, 2], n_layers=6, zmax=0.4, capped=True))
    assert fig.layout.title.text == "Rollout through all 6 layers: 2 of 4 positions at the top"
    assert fig.data[0].zmax == 0.4 and fig.data[0].colorbar.title.text == "share (capped at 0.40)"
    assert fig.layout.xaxis.title.text == "input token" and "share %{z:.3f}" in fig.data[0].hovertemplate
    uncapped = rollout_heatmap(w, tokens, [0, 1, 2, 3], n_layers=6, zmax=1.0, capped=False)
    assert uncapped.data[0].colorbar.title.text == "share"


def test_display_max_caps_the_scale_only_when_cls_and_sep_dwarf_the_rest():
    tokens = ["[CLS]", "a", "b", "[SEP]"]
    assert display_max(np.array([0.6, 0.1, 0.2, 0.1]), tokens) == (pytest.approx(0.25), True)  # 1.25 × 0.2
    assert display_max(np.array([0.3, 0.2, 0.4, 0.1]), tokens) == (pytest.approx(0.4), False)
    assert display_max(np.array([0.3, 0.7]), ["x", "y"]) == (pytest.approx(0.7), False)  # no special tokens


def test_feed_figure_cuts_the_towering_bars_and_writes_their_exact_share():
    shares = np.array([0.6, 0.1, 0.2, 0.1])
    tokens = ["[CLS]", "a", HOSTILE, "[SEP]"]
    fig = validated(feed_figure(shares, tokens, title="feed", ymax=0.25))
    np.testing.assert_array_equal(fig.data[0].y, shares)  # the bars keep the exact numbers (hover, export)
    assert list(fig.layout.yaxis.range) == [0.0, 0.25]
    assert [a.text for a in fig.layout.annotations] == ["0 · [CLS]: 60.0% ↑"]
    many = feed_figure(np.array([0.3, 0.05, 0.2, 0.04, 0.12, 0.11, 0.1, 0.08]), list("abcdefgh")).data[0].marker.color
    assert [c == many[0] for c in many] == [True, False, True, False, True, True, True, False]  # the 5 largest
    plain = validated(feed_figure(shares, tokens))
    assert plain.layout.yaxis.range is None and not plain.layout.annotations
    assert "<img" not in fig.to_json()


def test_difference_heatmap_is_symmetric_and_writes_tiny_differences_as_zero():
    a = np.array([[0.7, 0.3], [0.5, 0.5]])
    b = np.array([[0.3, 0.7], [0.502, 0.498]])
    fig = validated(difference_heatmap(a - b, a, b, ["it", HOSTILE], [10, 12], title="A − B"))
    trace = fig.data[0]
    assert trace.zmin == -trace.zmax == pytest.approx(-0.4)
    assert [list(row) for row in trace.text] == [["+0.40", "-0.40"], ["0", "0"]]
    assert np.asarray(trace.customdata).shape == (2, 2, 2) and np.asarray(trace.customdata)[1, 0, 1] == 0.502
    assert list(trace.x) == ["10 · it", "12 · &lt;img src=x onerror=alert(1)&gt;"]
    quiet = difference_heatmap(np.zeros((1, 1)), np.ones((1, 1)), np.ones((1, 1)), ["x"], [0])
    assert quiet.data[0].zmax == 0.05  # noise stays pale
