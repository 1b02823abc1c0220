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
