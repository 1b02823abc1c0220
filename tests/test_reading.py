"""lessons/reading.py: query subsets for long inputs and the shared tokens of two sentences: hand cases and
properties."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention.stable_softmax import softmax
from lessons.projection import queries_and_keys
from lessons.reading import (
    attentionviz_normalise,
    heaviest_nearest,
    matching_positions,
    nearness_both_ways,
    select_queries,
    shared_tokens,
    unknown_note,
    weight_difference,
    words,
)

TOKENS = ["[CLS]", "the", "play", "##ing", "of", "it", "and", "its", "it", ".", "[SEP]"]


def test_words_are_rebuilt_from_their_pieces():
    assert words(TOKENS)[2] == ("playing", [2, 3])
    assert [w for w, _ in words(TOKENS)] == ["[CLS]", "the", "playing", "of", "it", "and", "its", "it", ".", "[SEP]"]
    assert words(["##ing", "x"]) == [("##ing", [0]), ("x", [1])]  # nothing to continue: a word of its own


def test_a_word_matches_whole_words_only_in_any_case():
    assert matching_positions(TOKENS, "it") == [5, 8]  # not "its"
    assert matching_positions(TOKENS, "  PLAYING ") == [2, 3]  # every piece of the word
    assert matching_positions(TOKENS, "play") == []  # a piece of a word is not the word
    assert matching_positions(TOKENS, "") == [] and matching_positions(TOKENS, "   ") == []


def test_select_queries():
    n = len(TOKENS)
    assert select_queries(TOKENS, "all") == list(range(n))
    assert select_queries(TOKENS, "last", last=3) == [8, 9, 10]
    assert select_queries(TOKENS, "last", last=500) == list(range(n))
    assert select_queries(TOKENS, "last", last=0) == [10]  # at least one
    assert select_queries(TOKENS, "word", word="it") == [5, 8]
    with pytest.raises(ValueError, match="mode must be one of"):
        select_queries(TOKENS, "first")


def test_the_tired_and_wide_sentences_share_everything_but_the_adjective():
    a = "[CLS] the animal didn ' t cross the street because it was too tired . [SEP]".split()
    b = a[:13] + ["wide"] + a[14:]
    pos_a, pos_b = shared_tokens(a, b)
    assert pos_a == pos_b == [i for i in range(len(a)) if i != 13]


def test_shared_tokens_follow_an_insertion():
    pos_a, pos_b = shared_tokens(["a", "b", "c"], ["a", "x", "y", "b", "c"])
    assert (pos_a, pos_b) == ([0, 1, 2], [0, 3, 4])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from("abcd"), max_size=12), st.lists(st.sampled_from("abcd"), max_size=12))
def test_shared_tokens_are_equal_tokens_in_increasing_order(a, b):
    pos_a, pos_b = shared_tokens(a, b)
    assert len(pos_a) == len(pos_b)
    assert all(a[i] == b[j] for i, j in zip(pos_a, pos_b))
    assert pos_a == sorted(set(pos_a)) and pos_b == sorted(set(pos_b))


def test_weight_difference_by_hand():
    wa = np.array([[0.5, 0.2, 0.3], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]])
    wb = np.array([[0.6, 0.4], [0.25, 0.75]])
    # shared: a's tokens 0 and 2 are b's tokens 0 and 1
    diff = weight_difference(wa, wb, [0, 2], [0, 1])
    np.testing.assert_allclose(diff, [[0.5 - 0.6, 0.3 - 0.4], [0.3 - 0.25, 0.4 - 0.75]], atol=1e-15)
    with pytest.raises(ValueError, match="pos_a has shape"):
        weight_difference(wa, wb, [0, 1], [0])


VECTORS = arrays(np.float64, (6, 4), elements=st.floats(-10, 10, allow_nan=False, width=32))


@settings(max_examples=60, deadline=None)
@given(VECTORS, VECTORS)
def test_attentionviz_normalisation_changes_no_weight_and_balances_the_clouds(q, k):
    qn, kn = attentionviz_normalise(q, k)
    np.testing.assert_allclose(softmax(qn @ kn.T), softmax(q @ k.T), atol=1e-9)
    np.testing.assert_allclose(kn.mean(axis=0), qn.mean(axis=0), atol=1e-9)  # one centre
    q_len, k_len = np.linalg.norm(q, axis=1).mean(), np.linalg.norm(k, axis=1).mean()
    if q_len > 1e-6 and k_len > 1e-6:  # scaled to equal mean lengths before the keys were moved
        c = np.sqrt(k_len / q_len)
        np.testing.assert_allclose(qn, c * q, rtol=1e-12)
        assert np.linalg.norm(qn, axis=1).mean() == pytest.approx(np.linalg.norm(k / c, axis=1).mean(), rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(VECTORS, VECTORS)
def test_the_picture_never_lengthens_a_distance(q, k):
    """What the page says of the projection: near here may be far in full, never the reverse."""
    x = np.concatenate([q, k])
    coords = queries_and_keys(q, k).coords
    full = np.linalg.norm(x[:, None] - x[None], axis=-1)
    drawn = np.linalg.norm(coords[:, None] - coords[None], axis=-1)
    assert np.all(drawn <= full + 1e-9 * (1 + full))


def test_nearness_with_and_without_normalisation_by_hand():
    q = np.eye(3)
    k = q + np.array([100.0, 0.0, 0.0])  # each key is its query moved far away: no weight notices
    qn, kn = attentionviz_normalise(q, k)
    c = np.sqrt((101 + 2 * np.sqrt(100**2 + 1)) / 3)  # keys' mean length over the queries' (1), square-rooted
    mean = q.mean(axis=0)
    np.testing.assert_allclose(qn, c * q, atol=1e-12)
    np.testing.assert_allclose(kn, (q - mean) / c + c * mean, atol=1e-12)  # the shift is gone, the centre shared
    # squared distance from query i to its own key (c² - 2 + 1/c²) 2/3, to another (c² + 1/c²) 2/3 + 2/3: 2 more
    _, viz = nearness_both_ways(q, k, 1, [1])
    assert viz == [1]
    weights = softmax(q @ k.T)
    assert list(weights.argmax(axis=1)) == [0, 1, 2]
    assert heaviest_nearest(q, k, weights)[1] == 3


def test_unknown_tokens_are_named_only_when_there_are_some():
    assert unknown_note(["[CLS]", "hello", "[SEP]"]) is None
    assert unknown_note(["[CLS]", "[UNK]", "[UNK]", "[SEP]"]).startswith("2 of these tokens are [UNK]")
    assert unknown_note(["[UNK]"], "sentence A's").startswith("1 of sentence A's tokens is [UNK]")
