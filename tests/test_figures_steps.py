"""figures/steps.py: the weights heatmap drawn from AttentionSteps."""

import numpy as np

from attention import attention_steps
from figures.heatmaps import attention_heatmap
from figures.steps import steps_heatmap
from tests.apptest_helpers import heatmap_z


def test_the_steps_heatmap_shows_the_weights_and_the_masked_arithmetic():
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    steps = attention_steps(q, k, v, causal=True)
    labels = ["a", "b", "c", "d"]
    fig = steps_heatmap(steps, labels, title="w")
    np.testing.assert_array_equal(heatmap_z(fig.to_plotly_json()), steps.weights)
    by_hand = attention_heatmap(
        steps.weights,
        labels,
        labels,
        scores=steps.scores,
        scale_factor=steps.scale_factor,
        allowed=steps.allowed,
        title="w",
    )
    assert fig.to_json() == by_hand.to_json()
    masked_hover = fig.to_plotly_json()["data"][0]["customdata"]
    plain = attention_heatmap(steps.weights, labels, labels, scores=steps.scores)  # no scale, no mask
    assert fig.to_json() != plain.to_json()
    assert any("masked" in str(cell).lower() for cell in np.ravel(masked_hover))  # the hover names the mask


def test_a_heatmap_whose_every_row_is_hidden_still_shows_a_question_mark_in_each_cell():
    """While a class question hides every query row (all of them the same query), plotly would draw an empty box:
    it draws no text of a heatmap without one number. Each cell's ? is then an annotation at the cell; a heatmap
    with one row shown keeps its ? in its cells' text, with no annotation; nothing hidden comes back."""
    from figures.heatmaps import HIDDEN
    from figures.steps import hidden_rows

    q = np.array([[1.0, 0.0]] * 3)
    steps = attention_steps(q, q, q)
    labels = ["up", "up", "up"]
    for square in (False, True):
        fig = steps_heatmap(hidden_rows(steps, {0, 1, 2}), labels, square=square).to_plotly_json()
        marks = fig["layout"]["annotations"]
        assert sorted((a["y"], a["x"]) for a in marks) == [(i, j) for i in range(3) for j in range(3)]
        assert {a["text"] for a in marks} == {HIDDEN}
        assert np.isnan(heatmap_z(fig)).all()  # the weights stay hidden
    partly = steps_heatmap(hidden_rows(steps, {1}), labels).to_plotly_json()
    assert not partly["layout"].get("annotations")
    assert [row[0] for row in partly["data"][0]["text"]] == ["0.33", HIDDEN, "0.33"]
