"""lessons/positions/masks.py: a sliding window's reach over layers and a padded batch, and the sentences about them."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons.positions.masks import (
    last_query_reach,
    length_why,
    padding_check,
    padding_sequences,
    reach_paragraph,
    reach_sentence,
    reach_span,
    sequence_heading,
    window_reach,
    window_why,
)
from lessons.positions.toy import DEFAULT_TEXT, half_the_words, parse_words, toy_head, word_count

SETTINGS = settings(max_examples=30, deadline=None)

NINE = parse_words("the dog chased the cat up the tall tree")[0]


@SETTINGS
@given(st.integers(1, 24), st.integers(1, 6), st.integers(1, 6))
def test_a_window_reaches_one_window_further_per_layer(n, window, layers):
    first = window_reach(n, window, layers)
    i, j = np.indices((n, n))
    distance = i - j
    if window == 1:
        expected = np.where(distance == 0, 1, 0)
    else:
        expected = np.where(distance == 0, 1, np.ceil(distance / (window - 1)).astype(int))
        expected = np.where((distance < 0) | (expected > layers), 0, expected)
    np.testing.assert_array_equal(first, expected)
    reached = (first > 0).sum(axis=1)
    assert reached.max() == min(n, reach_span(window, layers))


def test_reach_span_by_hand():
    assert reach_span(3, 4) == 9  # 4 layers of a window of 3: 2 steps back per layer, plus itself
    assert reach_span(1, 5) == 1


def test_padding_check_of_a_batch():
    head = toy_head(8, 1)
    check = padding_check([["a", "b", "c"], ["d"]], head, 8, 1, causal=True)
    assert check.on_padding == 0.0 and check.finite and check.unused == 2
    assert check.alone_diff <= 1e-12 and check.labels[1] == ["d", "[PAD]", "[PAD]"]
    np.testing.assert_array_equal(check.lengths, [3, 1])


@pytest.mark.parametrize("n, window, layers", [(16, 3, 3), (32, 8, 2), (16, 5, 1), (16, 1, 4), (8, 4, 5)])
def test_the_reach_sentence_counts_what_the_window_reaches(n, window, layers):
    """The sentence quotes L(w − 1) + 1, the count window_reach finds; L·w only where it is exact or said to be
    too many, by the difference computed (with w = 3 and L = 3, 9 against 7)."""
    reached = int((window_reach(n, window, layers)[-1] > 0).sum())
    ok, sentence = reach_sentence(n, window, layers, reached)
    assert ok and f"heard from {reached} position" in sentence
    assert reached == min(n, reach_span(window, layers))
    if reach_span(window, layers) > n:
        assert f"capped by the {n} positions" in sentence and "L·w" not in sentence
    elif layers > 1 and window > 1:
        too_many = layers * window - reached
        assert too_many == layers - 1 and f"L·w = {layers * window} counts {too_many} too many" in sentence
    else:
        assert "L·w" not in sentence and (layers * window == reached or window == 1)
    assert not reach_sentence(n, window, layers, reached + 1)[0]


def test_the_last_query_reach_counts_the_keys_its_row_reached():
    assert last_query_reach(window_reach(20, 4, 2)) == 7 == reach_span(4, 2)
    assert last_query_reach(window_reach(5, 5, 3)) == 5  # capped by the positions there are
    assert last_query_reach(np.array([[1, 0, 0], [1, 1, 0], [0, 2, 1]])) == 2


def test_the_padded_sequences_are_the_first_and_the_last_words():
    assert padding_sequences(NINE, 6, 2) == [list(NINE[:6]), ["tall", "tree"]]
    assert padding_sequences(("a", "b"), 2, 2) == [["a", "b"], ["a", "b"]]
    assert padding_sequences(("a", "b", "c"), 1, 1) == [["a"], ["c"]]


@pytest.mark.parametrize(
    ("window", "layers", "hops", "blank"),
    [
        (2, 1, "at most 1 position.", "not within 1 layer."),
        (3, 1, "at most 2 positions.", "not within 1 layer."),
        (5, 3, "at most 4 positions.", "not within 3 layers."),
        (1, 2, "at most 0 positions.", "not within 2 layers."),
    ],
)
def test_the_reach_paragraph_counts_hops_and_layers_in_the_singular_and_the_plural(window, layers, hops, blank):
    paragraph = reach_paragraph(window, layers)
    assert f"arrives through ℓ hops of {hops} Blank: {blank}" in paragraph


@pytest.mark.parametrize(
    ("number", "length", "padded", "heading"),
    [(1, 1, 4, "**Sequence 1**: 1 word, padded to 4"), (2, 3, 4, "**Sequence 2**: 3 words, padded to 4")],
)
def test_the_sequence_heading_counts_its_words(number, length, padded, heading):
    assert sequence_heading(number, length, padded) == heading


def test_the_padding_lengths_follow_the_words_and_say_why_they_were_lowered():
    assert word_count({"text": "a b c d e"}) == 5 and half_the_words({"text": "a b c d e"}) == 2
    assert word_count({"text": "one"}) == len(DEFAULT_TEXT.split())  # unusable text: the default's count
    assert half_the_words({"text": "a b"}) == 1
    assert length_why({"text": "a b c"}, 9) == "the text has 3 words"
    assert window_why({"n": 1}, 3) == "a window holds at most the n = 1 position of the sequence"
