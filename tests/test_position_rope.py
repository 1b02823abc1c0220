"""lessons/positions/rope.py: RoPE's scores depend on the offset only, and the sentences say so with the numbers."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention.positions import rope
from lessons.positions.rope import rope_offset_check, rope_offset_paragraph, rope_score_by_offset
from lessons.positions.toy import diff_text

SETTINGS = settings(max_examples=30, deadline=None)


@SETTINGS
@given(st.integers(0, 2**16), st.integers(1, 10), st.integers(0, 10_000))
def test_rope_offset_check_passes(seed, n, offset):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, n, 16))
    check = rope_offset_check(q, k, offset)
    assert check.passed and check.norm_diff < 1e-12


def test_moving_only_the_queries_changes_the_scores():
    # The check could fail: the score depends on m - n, so moving one side alone moves it.
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((2, 5, 8))
    base = rope(q) @ rope(k).T
    assert np.abs(rope(q, np.arange(5) + 3) @ rope(k).T - base).max() > 0.1


def test_score_by_offset_is_the_score_at_that_distance():
    rng = np.random.default_rng(1)
    q, k = rng.standard_normal((2, 8))
    curve = rope_score_by_offset(q, k, [-2, 0, 5])
    for offset, score in zip([-2, 0, 5], curve):
        q_at = rope(np.stack([q] * 20), np.arange(20))[10 + offset]
        assert score == pytest.approx(q_at @ rope(np.stack([k] * 20))[10], abs=1e-12)


def test_the_rope_sentence_says_how_far_the_lengths_moved():
    rng = np.random.default_rng(2)
    q, k = rng.standard_normal((2, 6, 16))
    for offset in (0, 5, 1000, 9999):
        check = rope_offset_check(q, k, offset)
        sentence = check.sentence()
        assert check.passed and f"differ by at most {diff_text(check.max_diff)} (rounding)" in sentence
        if check.norm_diff == 0:
            assert sentence.endswith("and no vector's length changed at all.")
        else:
            assert f"no vector's length moved by more than {diff_text(check.norm_diff)} (rounding)." in sentence
        assert "more than 0." not in sentence


def test_the_rope_paragraph_quotes_the_first_word():
    assert "Word 1's query ('dog') against its own key" in rope_offset_paragraph("dog")
