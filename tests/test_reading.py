"""lessons/reading.py: query subsets for long inputs and the shared tokens of two sentences: hand cases and
properties."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention.pretrained import MAX_TOKENS
from attention.stable_softmax import softmax
from lessons.projection import queries_and_keys
from lessons.reading import (
    SIMILARITY_PAIRS,
    TRAINED_TOKENS,
    PairDifference,
    attentionviz_normalise,
    axis_shares,
    chosen_weights,
    future_share,
    heaviest_nearest,
    key_readout,
    length_note,
    matching_positions,
    nearness_both_ways,
    output_feed,
    pair_difference,
    select_queries,
    shared_tokens,
    shown_positions,
    shown_rows,
    similarity_range,
    special_share,
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


def test_the_length_note_says_past_the_trained_length_only_past_it():
    within = length_note(TRAINED_TOKENS, 512)
    assert within.startswith(f"{TRAINED_TOKENS} tokens, [CLS] and [SEP] included")
    assert f"reads at most {MAX_TOKENS}; the model's position table has 512)." in within
    assert "model card" not in within
    past = length_note(TRAINED_TOKENS + 1, 512)
    assert past.startswith(f"{TRAINED_TOKENS + 1} tokens") and f"training cut inputs at {TRAINED_TOKENS} tokens" in past


def test_shown_rows_say_why_they_are_not_the_rows_asked_for():
    n = len(TOKENS)
    assert shown_rows(TOKENS, "word", last=8, word="it") == ([5, 8], None)
    assert shown_rows(TOKENS, "word", last=8, word="  ") == (list(range(n)), "no word")
    assert shown_rows(TOKENS, "word", last=8, word="guitar") == (list(range(n)), "no match")
    assert shown_rows(TOKENS, "last", last=3, word="") == ([8, 9, 10], None)
    assert shown_rows(TOKENS, "last", last=n + 1, word="") == (list(range(n)), "too few")
    assert shown_rows(TOKENS, "last", last=n, word="") == (list(range(n)), None)  # exactly all: nothing to say
    assert shown_rows(TOKENS, "all", last=1, word="") == (list(range(n)), None)


def test_shown_positions_hide_the_markers_unless_nothing_is_left():
    tokens = ["[CLS]", "hi", "there", "[SEP]"]
    assert shown_positions(tokens, hide=False) == [0, 1, 2, 3]
    assert shown_positions(tokens, hide=True) == [1, 2]
    assert shown_positions(["[CLS]", "[SEP]"], hide=True) == [0, 1]


def test_chosen_weights_one_head_or_the_layer_mean_counted_from_one():
    attentions = np.arange(2 * 3 * 2 * 2, dtype=float).reshape(2, 3, 2, 2)  # (layers, heads, n, n)
    weights, name = chosen_weights(attentions, 2, 3, mean=False)
    np.testing.assert_array_equal(weights, attentions[1, 2])
    assert name == "layer 2, head 3"
    weights, name = chosen_weights(attentions, 1, 3, mean=True)
    np.testing.assert_array_equal(weights, [[4.0, 5.0], [6.0, 7.0]])  # heads 0, 4, 8 ... averaged
    assert name == "layer 1, its 3 heads averaged"
    with pytest.raises(ValueError, match="layer 3, head 1"):
        chosen_weights(attentions, 3, 1, mean=False)
    with pytest.raises(ValueError, match="layer 1, head 0"):
        chosen_weights(attentions, 1, 0, mean=False)  # 0 would read the last head


def test_future_share_by_hand():
    causal = np.tril(np.ones((3, 3))) / np.arange(1, 4)[:, None]
    assert future_share(causal[None, None]) == 0.0
    uniform = np.full((1, 2, 4, 4), 0.25)  # per head 6 of 16 cells above the diagonal, a quarter each, over 4 rows
    assert future_share(uniform) == pytest.approx(6 * 0.25 / 4)


def test_output_feed_and_its_markers_share():
    rollout = np.array([[0.5, 0.5, 0.0], [0.0, 1.0, 0.0], [0.1, 0.2, 0.7]])
    np.testing.assert_allclose(output_feed(rollout, "mean"), [0.2, 1.7 / 3, 0.7 / 3])
    np.testing.assert_array_equal(output_feed(rollout, "cls"), [0.5, 0.5, 0.0])
    with pytest.raises(ValueError, match="pool must be one of"):
        output_feed(rollout, "max")
    assert special_share(np.array([0.1, 0.6, 0.3]), ["[CLS]", "hi", "[SEP]"]) == pytest.approx(0.4)


def test_axis_shares_by_hand():
    assert axis_shares(np.array([3.0, 1.0, 0.0, 0.0])) == (0.75, 0.25)
    assert axis_shares(np.array([2.0])) == (1.0, 0.0)
    assert axis_shares(np.array([0.0, 0.0])) == (0.0, 0.0)  # no spread at all: no division by zero


def test_key_readout_gives_each_keys_weight_score_and_both_nearness_ranks():
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal((5, 4)), rng.standard_normal((5, 4))
    weights = softmax(q @ k.T / 2.0)
    rows = key_readout(q, k, weights, 2, [4, 0])
    near_raw, near_viz = nearness_both_ways(q, k, 2, [4, 0])
    assert [r["key"] for r in rows] == [4, 0]
    assert [r["weight"] for r in rows] == [weights[2, 4], weights[2, 0]]
    assert rows[0]["score"] == pytest.approx(q[2] @ k[4] / 2.0) and rows[1]["score"] == pytest.approx(q[2] @ k[0] / 2)
    assert [r["near_raw"] for r in rows] == near_raw and [r["near_viz"] for r in rows] == near_viz


def test_pair_difference_on_an_inserted_word():
    tokens_a, tokens_b = ["[CLS]", "a", "b", "[SEP]"], ["[CLS]", "a", "x", "b", "[SEP]"]
    weights_a, weights_b = random_weights_of(4, 1), random_weights_of(5, 2)
    pair = pair_difference(weights_a, weights_b, tokens_a, tokens_b)
    assert isinstance(pair, PairDifference)
    assert (pair.pos_a, pair.pos_b, pair.shared) == ([0, 1, 2, 3], [0, 1, 3, 4], tokens_a)
    assert (pair.only_a, pair.only_b) == (0, 1)
    np.testing.assert_array_equal(pair.b_block, weights_b[np.ix_([0, 1, 3, 4], [0, 1, 3, 4])])
    np.testing.assert_array_equal(pair.a_block, weights_a)
    np.testing.assert_allclose(pair.diff, pair.a_block - pair.b_block)
    assert pair_difference(weights_a, weights_b, ["p", "q", "r", "s"], ["w", "x", "y", "z", "v"]) is None


def random_weights_of(n: int, seed: int) -> np.ndarray:
    w = np.random.default_rng(seed).random((n, n))
    return w / w.sum(axis=1, keepdims=True)


def test_similarity_ranges_of_the_prepared_pairs_by_kind():
    similarities = {"Paraphrase: x": 0.8, "Paraphrase: y": 0.6, "Unrelated: z": 0.1, "Same word": 0.5}
    assert similarity_range(similarities, "Paraphrase") == (0.6, 0.8)
    assert similarity_range(similarities, "Unrelated") == (0.1, 0.1)
    with pytest.raises(ValueError, match="no pair is named 'Opposite'"):
        similarity_range(similarities, "Opposite")
    kinds = {name.split(":")[0] for name in SIMILARITY_PAIRS}
    assert {"Paraphrase", "Unrelated"} <= kinds  # the page quotes both ranges
