"""figures/induction.py and figures/generation.py, the induction and generation pages' figures: valid plotly, and drawn
from the numbers given."""

import numpy as np
import pytest

from figures.base import validated
from figures.generation import (
    byte_unit,
    cache_growth_figure,
    cache_kinds_figure,
    format_bytes,
    probabilities_figure,
    step_rows_figure,
    timing_figure,
    work_figure,
)
from figures.induction import (
    GRID_ROW_HEIGHT,
    accuracy_by_position_figure,
    every_head_figure,
    filmstrip_figure,
    head_names,
    head_titles,
    letter_labels,
    loss_halves_figure,
    running_mean,
    scores_figure,
)

RNG = np.random.default_rng(0)


def test_letter_labels_number_each_letter_by_its_position():
    assert letter_labels(np.array([16, 22, 16])) == ["q0", "w1", "q2"]  # a repeated letter stays two labels


def test_head_titles_name_each_head_with_its_scores_layer_by_layer():
    previous, induction = np.array([[0.9, 0.1], [0.2, 0.3]]), np.array([[0.0, 0.05], [0.876, 0.4]])
    assert head_titles(previous, induction) == [
        "L1 H1: prev 0.90, ind 0.00",
        "L1 H2: prev 0.10, ind 0.05",
        "L2 H1: prev 0.20, ind 0.88",
        "L2 H2: prev 0.30, ind 0.40",
    ]
    assert head_titles(previous[:1]) == ["L1 H1: prev 0.90", "L1 H2: prev 0.10"]  # no induction score to give


def test_every_head_figure_draws_each_head_layer_by_layer_two_a_row_with_its_scores():
    a = RNG.random((2, 2, 4, 4))
    previous, induction = np.array([[0.9, 0.1], [0.2, 0.3]]), np.array([[0.0, 0.05], [0.876, 0.4]])
    fig = validated(every_head_figure(a, np.array([16, 22, 16, 4]), previous, induction))
    assert len(fig.data) == 4
    np.testing.assert_array_equal(fig.data[2].z, a[1, 0])  # L2 H1, the third head, layer by layer
    assert list(fig.layout.xaxis.ticktext) == ["q0", "w1", "q2", "e3"]
    titles = [t.text for t in fig.layout.annotations]
    assert "L2 H1: prev 0.20, ind 0.88" in titles and "L1 H2: prev 0.10, ind 0.05" in titles
    assert fig.layout.height >= 2 * GRID_ROW_HEIGHT  # two rows: one layer a row
    alone = validated(every_head_figure(a, np.arange(4), previous))  # no induction score to give
    assert "L1 H1: prev 0.90" in [t.text for t in alone.layout.annotations]


def test_running_mean_by_hand():
    np.testing.assert_allclose(running_mean(np.array([1.0, 3.0, 5.0, 7.0]), window=2), [1, 2, 4, 6])


def test_loss_figure_marks_chance_and_the_checkpoint():
    fig = validated(loss_halves_figure(RNG.random(50), RNG.random(50), np.log(26), step=20))
    shapes = fig.layout.shapes
    assert shapes[0].y0 == pytest.approx(np.log(26)) and shapes[1].x0 == 20
    assert len(fig.data) == 4


def test_filmstrip_has_one_heatmap_per_head_and_checkpoint_with_escaped_hover():
    a = RNG.random((3, 2, 2, 5, 5))
    fig = validated(filmstrip_figure(a, [0, 50, 100], ["<b>", "a", "b", "c", "d"]))
    assert len(fig.data) == 12
    np.testing.assert_array_equal(fig.data[1 * 3 + 1].z, a[1, 0, 1])  # row 1 (L1 H2), column 1 (step 50)
    assert "<b>" not in str(fig.data[0].customdata) and "&lt;b&gt;" in str(fig.data[0].customdata)


def test_scores_and_accuracy_figures():
    prev, ind = RNG.random((4, 2, 2)), RNG.random((4, 2, 2))
    fig = validated(scores_figure(np.array([0, 1, 2, 3]), prev, ind))
    assert [t.name for t in fig.data[:4]] == head_names(2, 2)
    np.testing.assert_array_equal(fig.data[5].y, ind[:, 0, 1])
    acc = validated(accuracy_by_position_figure(RNG.random(7), 4, 1 / 26))
    colours = acc.data[0].marker.color
    assert colours[2] != colours[3] != colours[4]  # first half, the repeat's start, repeated half


def test_generation_figures():
    rows = RNG.random((4, 3, 9))
    rows[:, 0, 7:] = np.nan
    fig = validated(step_rows_figure(rows, list("abcdefghi"), 7, head_names(2, 2), chosen=1))
    assert len(fig.data) == 4 and any(s.type == "rect" for s in fig.layout.shapes)
    p = validated(probabilities_figure(np.full(4, 0.25), np.eye(4)[2], list("wxyz"), 2))
    np.testing.assert_array_equal(p.data[1].y, [0, 0, 1, 0])
    validated(cache_growth_figure(np.arange(8, 12), np.arange(4) * 512))
    validated(work_figure(np.arange(1, 5), np.arange(1, 5), np.arange(1, 5) ** 2))
    validated(timing_figure(np.ones(3), np.ones(3)))
    kinds = validated(cache_kinds_figure(["MHA", "GQA", "MQA"], [2**31, 2**29, 2**26]))
    np.testing.assert_allclose(kinds.data[0].y, [2, 0.5, 0.0625])
    assert kinds.layout.yaxis.title.text == "KV cache (GiB)"


@pytest.mark.parametrize(
    "n, text, unit", [(512, "512 bytes", "bytes"), (1536, "1.5 KiB", "KiB"), (2**31, "2.0 GiB", "GiB")]
)
def test_bytes_for_people(n, text, unit):
    assert format_bytes(n) == text and byte_unit(n)[0] == unit
