"""figures/pretrained.py: thumbnails, one-head heatmap and token-to-token lines, on hand-made weights."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from figures.pretrained import (
    GAP_RGB,
    THUMB_CELLS,
    bucket_lines,
    downsample,
    head_heatmap,
    head_mosaic,
    head_summaries,
    highlight_shapes,
    overview_figure,
    strip_special,
    token_lines_figure,
    weights_to_rgb,
)

HOSTILE = "<img src=x onerror=alert(1)>"


def random_weights(shape, seed=0) -> np.ndarray:
    """Rows that sum to 1, like a softmax's. Shapes: (..., n, n)."""
    w = np.random.default_rng(seed).random(shape) ** 4
    return w / w.sum(axis=-1, keepdims=True)


def tokens_for(n: int) -> list[str]:
    return ["[CLS]", *[f"w{i}" for i in range(1, n - 1)], "[SEP]"]


def test_bucket_lines_draw_one_broken_line_per_pair_heavier_buckets_more_opaque():
    ys = np.array([0.0, 2.0, np.nan, 1.0, 0.0, np.nan])
    light = bucket_lines(np.array([0, 1]), ys, 1.0, "#123456", 0.15)
    np.testing.assert_array_equal(light["x"], [0.0, 1.0, np.nan, 0.0, 1.0, np.nan])
    assert light["y"] is ys and light["mode"] == "lines" and light["line"] == {"width": 1.0, "color": "#123456"}
    assert light["opacity"] == pytest.approx(0.25 + 0.15 * 0.75)
    assert bucket_lines(np.array([0]), ys[:3], 10.0, "#123456", 1.01)["opacity"] == 1.0  # never above 1


def test_downsample_leaves_small_matrices_alone():
    w = random_weights((5, 5))
    np.testing.assert_array_equal(downsample(w, 48), w)


def test_downsample_averages_rows_and_adds_up_columns_by_hand():
    w = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.5, 0.5], [0.5, 0.0, 0.0, 0.5]])
    # rows 0-1 averaged: [0.5, 0.5, 0, 0] -> keys 0-1 summed: 1.0, keys 2-3: 0.0
    # rows 2-3 averaged: [0.25, 0, 0.25, 0.5] -> 0.25, 0.75
    np.testing.assert_allclose(downsample(w, 2), [[1.0, 0.0], [0.25, 0.75]])


@settings(deadline=None, max_examples=40)
@given(n=st.integers(1, 300), cells=st.integers(1, 64), seed=st.integers(0, 2**16))
def test_downsampled_rows_still_sum_to_one(n, cells, seed):
    small = downsample(random_weights((n, n), seed), cells)
    assert small.shape == (min(n, cells),) * 2
    np.testing.assert_allclose(small.sum(axis=1), 1.0, atol=1e-9)
    assert small.min() >= 0


def test_downsample_refuses_a_non_square_matrix():
    with pytest.raises(ValueError, match=r"\(3, 4\)"):
        downsample(np.ones((3, 4)))


def test_mosaic_tiles_every_head_with_gaps_between():
    att = random_weights((6, 12, 5, 5))
    mosaic = head_mosaic(att, gap=1)
    assert mosaic.shape == (6 * 6 - 1, 12 * 6 - 1)
    np.testing.assert_array_equal(mosaic[2 * 6 : 2 * 6 + 5, 7 * 6 : 7 * 6 + 5], att[2, 7])  # layer 3, head 8
    assert np.isnan(mosaic[5, :]).all() and np.isnan(mosaic[:, 5]).all()  # the gap rows and columns
    assert np.isfinite(mosaic).sum() == 6 * 12 * 25


def test_long_inputs_become_bounded_thumbnails():
    att = random_weights((2, 3, 256, 256))
    mosaic = head_mosaic(att)
    assert mosaic.shape == (2 * (THUMB_CELLS + 1) - 1, 3 * (THUMB_CELLS + 1) - 1)


def test_weights_become_colours_and_gaps_grey():
    rgb = weights_to_rgb(np.array([[0.0, 1.0, np.nan]]))
    assert rgb.shape == (1, 3, 3) and rgb.dtype == np.uint8
    assert rgb[0, 0].sum() > rgb[0, 1].sum()  # 0 is pale, 1 is dark
    assert tuple(rgb[0, 2]) == GAP_RGB


def test_overview_is_one_image_with_one_clickable_marker_per_head():
    att = random_weights((6, 12, 256, 256))
    fig = overview_figure(att, tokens_for(256))
    image, markers = fig.data
    assert image.type == "image" and image.source.startswith("data:image/png;base64,")
    assert len(markers.x) == 72 and len(markers.hovertext) == 72
    assert markers.hovertext[1 * 12 + 4].startswith("<b>layer 2, head 5</b>")  # point index = layer * 12 + head
    assert list(fig.layout.xaxis.ticktext) == [f"H{h}" for h in range(1, 13)]
    assert list(fig.layout.yaxis.ticktext) == [f"L{layer}" for layer in range(1, 7)]
    assert len(fig.to_json()) < 600_000  # an image, not 72 annotated heatmaps


def test_highlight_frames_the_chosen_heads():
    fig = overview_figure(random_weights((2, 3, 4, 4)), tokens_for(4))
    shapes = highlight_shapes([(1, 2), (0, 0)], 4)
    assert len(shapes) == 2 and shapes[0]["x0"] > shapes[1]["x0"] and shapes[0]["y0"] > shapes[1]["y0"]
    centre_x, centre_y = fig.data[1].x[1 * 3 + 2], fig.data[1].y[1 * 3 + 2]  # the marker of layer 2, head 3
    assert shapes[0]["x0"] < centre_x < shapes[0]["x1"] and shapes[0]["y0"] < centre_y < shapes[0]["y1"]


def test_summaries_measure_where_the_weight_goes():
    n = 5
    att = np.zeros((1, 3, n, n))
    att[0, 0, :, -1] = 1.0  # everything on [SEP]
    att[0, 1] = np.eye(n)  # itself
    att[0, 2] = np.eye(n, k=-1)  # the previous token ...
    att[0, 2, 0, 0] = 1.0  # ... except the first, which has none
    first, itself, previous = head_summaries(att, tokens_for(n))[0]
    assert "[SEP] 100%" in first and "itself 100%" in itself and "previous token 80%" in previous


def test_strip_special_drops_cls_and_sep_and_rescales_rows():
    w = np.array([[0.5, 0.25, 0.25, 0.0], [0.2, 0.2, 0.2, 0.4], [0.1, 0.3, 0.1, 0.5], [0.0, 0.0, 0.0, 1.0]])
    sub, kept = strip_special(w, ["[CLS]", "a", "b", "[SEP]"])
    assert kept == [1, 2]
    np.testing.assert_allclose(sub, [[0.5, 0.5], [0.75, 0.25]])
    stacked, _ = strip_special(random_weights((6, 12, 7, 7)), tokens_for(7))
    np.testing.assert_allclose(stacked.sum(axis=-1), 1.0, rtol=1e-6)


def test_strip_special_refuses_when_nothing_would_be_left():
    with pytest.raises(ValueError, match="nothing would be left"):
        strip_special(np.full((2, 2), 0.5), ["[CLS]", "[SEP]"])


def test_head_heatmap_shows_the_weights_with_unique_escaped_labels():
    w = random_weights((4, 4))
    fig = head_heatmap(w, ["the", HOSTILE, "the", "."])
    trace = fig.data[0]
    np.testing.assert_array_equal(trace.z, w)
    assert list(trace.x) == ["0 · the", "1 · &lt;img src=x onerror=alert(1)&gt;", "2 · the", "3 · ."]
    assert trace.zmin == 0 and trace.zmax == 1 and trace.texttemplate  # small: every cell written out
    assert "<img" not in fig.to_json()


def test_head_heatmap_stays_light_for_long_inputs_and_can_show_original_weights():
    n = 256
    w = random_weights((n, n)).astype(np.float32)
    fig = head_heatmap(w, [f"t{i}" for i in range(n)], original=w / 2)
    assert fig.data[0].texttemplate is None  # too many cells to write numbers in
    assert "original weight" in fig.data[0].hovertemplate
    assert len(fig.to_json()) < 800_000
    assert fig.layout.height <= 900


def test_token_lines_draw_one_line_per_weight_above_the_threshold():
    w = np.array([[0.9, 0.1, 0.0], [0.02, 0.49, 0.49], [0.33, 0.33, 0.34]])
    fig = token_lines_figure(w, ["a", "b", HOSTILE], threshold=0.05)
    line_traces = [t for t in fig.data if t.mode == "lines"]
    pairs = {(int(y[0]), int(y[1])) for t in line_traces for y in np.array(t.y, dtype=float).reshape(-1, 3)}
    assert pairs == {(0, 0), (0, 1), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2)}  # 0.0 and 0.02 are skipped
    widths = {t.line.width for t in line_traces}
    assert len(line_traces) == len(widths) <= 5  # one trace per width bucket, not per line
    heavy = next(
        t
        for t in line_traces
        if (0, 0) in {(int(a), int(b)) for a, b in np.array(t.y, dtype=float).reshape(-1, 3)[:, :2]}
    )
    assert heavy.line.width == max(widths)
    labels = [t for t in fig.data if t.mode == "markers+text"]
    assert list(labels[0].text)[2] == "&lt;img src=x onerror=alert(1)&gt;"
    assert "<img" not in fig.to_json()


def test_hidden_tokens_keep_their_positions_in_labels_and_hover():
    w = random_weights((2, 2))
    heat = head_heatmap(w, ["a", "b"], positions=[1, 2])
    assert list(heat.data[0].x) == ["1 · a", "2 · b"]
    lines = token_lines_figure(w, ["a", "b"], positions=[1, 2])
    assert "(position 2)" in lines.data[-1].hovertext[1]


def test_long_inputs_name_only_some_tokens_in_the_lines_view():
    n = 256
    w = random_weights((n, n), seed=5)
    fig = token_lines_figure(w, [f"t{i}" for i in range(n)], focus=100)
    left, right = (t for t in fig.data if t.mode == "markers+text")
    named = [label for label in left.text if label]
    assert 40 <= len(named) <= 70 and "t100" in named  # every 5th, plus the focused query
    assert all(right.text[j] for j in np.flatnonzero(w[100] >= 0.05))  # the keys it reads are named
    assert all(label for label in right.hovertext) and fig.layout.height <= 1000


def test_thumbnail_colours_can_stretch_small_weights():
    plain, stretched = weights_to_rgb(np.array([[0.04]])), weights_to_rgb(np.array([[0.04]]), gamma=0.5)
    assert stretched.sum() < plain.sum()  # sqrt(0.04) = 0.2: visibly darker than 0.04
    np.testing.assert_array_equal(weights_to_rgb(np.array([[1.0]]), gamma=0.5), weights_to_rgb(np.array([[1.0]])))


def test_token_lines_can_focus_on_one_query():
    w = random_weights((6, 6), seed=3)
    fig = token_lines_figure(w, [f"t{i}" for i in range(6)], threshold=0.0, focus=4)
    ys = np.concatenate([np.array(t.y, dtype=float).reshape(-1, 3) for t in fig.data if t.mode == "lines"])
    assert set(ys[:, 0]) == {4.0} and len(ys) == 6


def test_summaries_name_each_heads_heaviest_weight_exactly_even_when_thumbnails_shrink():
    n = 100
    att = random_weights((1, 2, n, n), seed=9) * 0.5
    att[0, 1, 37, 81] = 0.875  # one weight that a 48 × 48 thumbnail would average away
    att[0, 1, 5, 0] = 0.95  # heavier, but on [CLS]: its share is said already
    tokens = tokens_for(n)
    tokens[37] = HOSTILE
    summary = head_summaries(att, tokens)[0][1]
    assert "heaviest weight to a word: '&lt;img src=x onerror=alert(1)&gt;' (37) → 'w81' (81) 0.875" in summary
    assert downsample(att[0, 1]).max() < 0.5  # what the picture alone would show
