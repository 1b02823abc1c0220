"""Query subsets for long inputs and the shared tokens of two sentences: hand cases and properties."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons.reading import matching_positions, select_queries, shared_tokens, weight_difference, words

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
