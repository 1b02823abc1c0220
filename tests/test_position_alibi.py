"""lessons/positions/alibi.py: ALiBi's slopes, the windows they make, and the sentences that read them."""

import numpy as np
import pytest

from attention.positions import alibi_slopes
from lessons.positions.alibi import (
    alibi_head_weights,
    alibi_reading,
    alibi_windows,
    farthest_share,
    reach_phrase,
    slope_table,
)
from lessons.positions.toy import Toy, attend, parse_words

NINE = parse_words("the dog chased the cat up the tall tree")[0]


@pytest.mark.parametrize("n_heads", [1, 2, 3, 8, 12, 15, 16])
def test_alibi_reading_says_what_the_slopes_do(n_heads):
    slopes, n = alibi_slopes(n_heads), 9
    text = " ".join(alibi_reading(slopes, n))
    windows = alibi_windows(n, n_heads)  # the weights the page draws with equal scores
    for h in {int(np.argmax(slopes)), int(np.argmin(slopes))}:
        share = windows[h, -1, 0] / windows[h, -1, -1]  # the farthest word beside the query's own
        assert share == pytest.approx(farthest_share(slopes[h], n))
        assert f"m = {slopes[h]:.3g}: with equal scores, the word 8 back gets e^(−m·8) = {share:.2g} times" in text
        assert f"so it reads {reach_phrase(share)}" in text
    if n_heads == 1:
        assert text.startswith("With one head") and "almost a plain average" in text  # m = 1/256 over 9 words
    elif n_heads == 12:  # Press et al.'s code: heads 9-12 are steep, the flattest is head 8, not the last
        assert "(the workaround in Press et al.'s code; the paper trains powers of two only)" in text
        assert "Head 9 is the steepest" in text and "Head 8 is the flattest" in text
        assert slopes[11] > slopes[7] and "head 12 (m = 0.0884) is steeper than head 8" in text
        assert np.all(slopes[8:] > slopes[3]) and "steeper than head 4's" in text
    elif n_heads == 3:  # heads 1-2: 2^-4, 2^-8; head 3 gets 2^-2, the first of every other slope of 4 heads
        np.testing.assert_allclose(slopes, [2**-4, 2**-8, 2**-2])
        assert "That extra slope is steeper than every other head's, so head 3 (m = 0.25) is steeper" in text
    elif n_heads == 15:  # the 7 extra slopes 2^-0.5 ... 2^-6.5 spread over most of the range, not one end
        extra = slopes[8:]
        np.testing.assert_allclose(extra, 2.0 ** -(np.arange(7) + 0.5))
        assert f"Those 7 extra slopes, from m = {extra.max():.3g} down to {extra.min():.3g}, are all" in text
        assert np.all(extra > slopes[6]) and not np.all(extra > slopes[5]) and "steeper than head 7's" in text
        assert "steep end" not in text
    elif n_heads == 2:
        assert "Head 1 is the steepest" in text and "Head 2 is the flattest" in text
        assert "recent words more than old ones" in text  # m = 1/16 keeps 0.61 of the weight 8 back
    elif n_heads & (n_heads - 1) == 0:
        assert "Head 1 is the steepest" in text and f"Head {n_heads} is the flattest" in text
        assert f"each slope is {2 ** (-8 / n_heads):.3g} times the one before" in text


def test_reach_phrase_thresholds():
    assert reach_phrase(0.018) == "mostly the last few words"
    assert reach_phrase(0.97) == "almost a plain average of all of them"
    assert reach_phrase(0.5) == "recent words more than old ones"


def test_alibi_head_weights_is_each_head_under_the_causal_mask():
    toy = Toy.build(NINE, 16, 0)
    weights = alibi_head_weights(toy.x, toy.head, 3)
    assert weights.shape == (3, 9, 9)
    for h in range(3):
        np.testing.assert_allclose(
            weights[h], attend(toy.x, toy.head, "alibi", alibi_heads=3, alibi_head=h, causal=True).weights
        )
    assert np.all(np.triu(weights, 1) == 0) and np.allclose(weights.sum(-1), 1)
    assert not np.allclose(weights[0], weights[2])  # each head its own slope


def test_the_slope_table_writes_each_slope_as_a_power_of_two():
    table = slope_table(alibi_slopes(8))
    assert table["h"] == list(range(1, 9))
    assert table["m_h"][:2] == ["2^−1 = 0.5", "2^−2 = 0.25"] and table["m_h"][-1] == "2^−8 = 0.003906"
    assert table["1/m_h"] == [2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0]
    assert slope_table(alibi_slopes(3))["m_h"] == ["2^−4 = 0.0625", "2^−8 = 0.003906", "2^−2 = 0.25"]
