"""lessons.positions: the shuffle check, the shift as a rotation, RoPE's offset check, a window's reach, MiniLM."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention import attention_steps
from attention.positions import alibi_slopes, rope, sinusoidal_encoding
from attention.pretrained import load_minilm
from lessons.positions import (
    METHOD_LABELS,
    METHODS,
    OUTCOME_CELLS,
    TOY_METHODS,
    Toy,
    alibi_head_weights,
    alibi_reading,
    alibi_windows,
    apply_permutation,
    attend,
    check_rows,
    check_table,
    cosine_by_distance,
    diff_text,
    farthest_share,
    is_original_order,
    last_query_reach,
    methods_weights,
    minilm_head,
    minilm_pieces,
    minilm_shuffle_check,
    padding_check,
    padding_sequences,
    parse_words,
    permutation,
    position_similarity,
    previous_token_weight,
    reach_phrase,
    reach_sentence,
    reach_span,
    ripple_peaks,
    rope_offset_check,
    rope_score_by_offset,
    rounding_bound,
    row_length,
    shift_error,
    shift_matrix,
    shuffle_check,
    shuffle_verdict,
    slope_table,
    toy_head,
    toy_queries_keys,
    toy_shuffle_checks,
    unknown_note,
    unknown_words,
    window_reach,
    word_vectors,
)

SETTINGS = settings(max_examples=30, deadline=None)
SENTENCE = "the dog chased the cat up the tall tree"


@st.composite
def toys(draw):
    """Random X (n distinct rows), a seeded head, a permutation that moves something, a learned table."""
    n, d = draw(st.integers(2, 10)), 2 * draw(st.integers(2, 12))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    perm = permutation(n, draw(st.integers(1, 10_000)))
    return rng.standard_normal((n, d)), toy_head(d, seed), perm, rng.standard_normal((n, d))


@SETTINGS
@given(toys())
def test_without_positions_a_shuffle_only_shuffles_the_outputs(toy):
    x, head, perm, _ = toy
    check = shuffle_check(x, head, perm, "none")
    assert check.passed and check.max_diff <= 1e-12 * max(1.0, np.abs(check.before.output).max())
    # the weights are permuted the same way, rows and columns
    np.testing.assert_allclose(check.after.weights, check.before.weights[np.ix_(perm, perm)], atol=1e-12)


@SETTINGS
@given(toys(), st.sampled_from([m for m in METHODS if m != "none"]))
def test_with_any_of_the_four_methods_the_shuffle_check_fails(toy, method):
    x, head, perm, table = toy
    check = shuffle_check(x, head, perm, method, table=table)
    assert not check.passed and check.max_diff > 1e-6, (method, check.max_diff)


def test_the_check_undoes_the_shuffle_before_comparing():
    x = word_vectors(["a", "b", "c"], 4)
    check = shuffle_check(x, toy_head(4), [2, 0, 1])
    np.testing.assert_allclose(check.undone, check.before.output, atol=1e-15)
    np.testing.assert_allclose(check.after.output, check.before.output[[2, 0, 1]], atol=1e-15)


def test_the_same_word_gets_the_same_vector_and_the_same_output_without_positions():
    words, _ = parse_words(SENTENCE)
    x = word_vectors(words, 16, seed=3)
    assert np.array_equal(x[0], x[3]) and np.array_equal(x[0], x[6]) and not np.array_equal(x[0], x[1])
    out = attend(x, toy_head(16, 3)).output
    assert np.array_equal(out[0], out[3])  # "the" is "the" wherever it stands
    assert not np.allclose(
        attend(x, toy_head(16, 3), "sinusoidal").output[0], attend(x, toy_head(16, 3), "sinusoidal").output[3]
    )


def test_each_method_adds_position_where_it_says():
    x, head = word_vectors(["a", "b", "c", "d"], 8), toy_head(8)
    plain = attend(x, head)
    assert np.array_equal(attend(x, head, "sinusoidal").q, (x + sinusoidal_encoding(4, 8)) @ head.w_q)
    rope_steps = attend(x, head, "rope")
    assert np.array_equal(rope_steps.q, rope(x @ head.w_q)) and np.array_equal(rope_steps.v, plain.v)  # v untouched
    alibi = attend(x, head, "alibi", alibi_heads=8, alibi_head=0)
    np.testing.assert_allclose(
        alibi.masked - plain.scaled, [[-0.5 * max(i - j, 0) for j in range(4)] for i in range(4)]
    )
    with pytest.raises(ValueError, match="at least 4 rows"):
        attend(x, head, "learned", table=np.zeros((3, 8)))
    with pytest.raises(ValueError, match="method='absolute'"):
        attend(x, head, "absolute")


def test_permutations():
    assert permutation(5, 0).tolist() == [0, 1, 2, 3, 4]
    for shuffle in range(1, 200):
        perm = permutation(3, shuffle)
        assert sorted(perm.tolist()) == [0, 1, 2] and perm.tolist() != [0, 1, 2]
    assert permutation(1, 7).tolist() == [0]


@pytest.mark.parametrize(
    "text, problem",
    [
        (SENTENCE, None),
        ("one", "at least 2 words (found 1)"),
        ("   ", "at least 2 words (found 0)"),
        ("w " * 17, "at most 16 words (found 17)"),
        ("a " + "x" * 25, "a word has 25 characters"),
    ],
)
def test_parse_words(text, problem):
    found = parse_words(text)[1]
    assert found == problem if problem is None else problem in found


# ---------------------------------------------------------------- sinusoidal and RoPE


@SETTINGS
@given(st.integers(1, 64), st.integers(1, 32).map(lambda h: 2 * h), st.integers(0, 500))
def test_the_sinusoidal_shift_is_a_rotation_for_every_position(n, d, k):
    assert shift_error(n, d, k) <= 1e-11
    m = shift_matrix(k, d)
    np.testing.assert_allclose(m.T @ m, np.eye(d), atol=1e-12)


def test_shift_matrix_by_hand():
    # d = 2, θ_0 = 1: a shift by k is a rotation by k radians of (sin p, cos p).
    np.testing.assert_allclose(shift_matrix(1, 2), [[math.cos(1), -math.sin(1)], [math.sin(1), math.cos(1)]])


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


# ---------------------------------------------------------------- a window per layer


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


# ---------------------------------------------------------------- learned absolute: the real model


def test_position_similarity_by_hand():
    table = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 3.0]])
    np.testing.assert_allclose(
        position_similarity(table, 3), [[1, 0, 0.5**0.5], [0, 1, 0.5**0.5], [0.5**0.5, 0.5**0.5, 1]]
    )


@pytest.fixture(scope="module")
def model():
    return load_minilm()


def test_minilm_pieces_are_the_tokenizers_own(model):
    words = ["the", "unbelievably", "dog", "<img", "it's"]
    pieces = minilm_pieces(model, words)
    tokens, ids = model.tokenize(" ".join(words))
    assert list(pieces.tokens) == tokens and pieces.ids.tolist() == ids
    assert pieces.word_of.tolist() == [-1, 0, 1, 1, 1, 1, 1, 2, 3, 3, 3, 4, 4, 4, -1]


def test_minilm_head_is_the_models_own_first_layer(model):
    text = SENTENCE
    _, ids = model.tokenize(text)
    run = model.run(text)
    for head in (0, 2, 11):
        np.testing.assert_allclose(minilm_head(model, ids, head).weights, run.attentions[0, head], atol=2e-5)


def test_minilm_layer_one_head_three_reads_the_previous_token_only_with_positions(model):
    ids = minilm_pieces(model, parse_words(SENTENCE)[0]).ids
    with_positions = minilm_head(model, ids, 2).weights
    without = minilm_head(model, ids, 2, positions=False).weights
    assert np.mean(np.diag(with_positions, -1)) > 0.9 and np.mean(np.diag(without, -1)) < 0.5


def test_minilm_shuffle_check(model):
    words = parse_words("the unbelievably tired dog chased a cat")[0]
    perm = permutation(len(words), 4)
    assert minilm_shuffle_check(model, words, perm, 2, positions=False).passed
    check = minilm_shuffle_check(model, words, perm, 2, positions=True)
    assert not check.passed and check.max_diff > 0.1
    sims = position_similarity(model.position_embeddings, 64)
    assert np.allclose(np.diag(sims), 1.0) and np.allclose(sims, sims.T)


def test_attention_steps_is_what_the_toy_runs():
    x, head = word_vectors(["a", "b"], 4), toy_head(4)
    expected = attention_steps(x @ head.w_q, x @ head.w_k, x @ head.w_v)
    np.testing.assert_array_equal(attend(x, head).weights, expected.weights)


def test_padding_check_of_a_batch():
    head = toy_head(8, 1)
    check = padding_check([["a", "b", "c"], ["d"]], head, 8, 1, causal=True)
    assert check.on_padding == 0.0 and check.finite and check.unused == 2
    assert check.alone_diff <= 1e-12 and check.labels[1] == ["d", "[PAD]", "[PAD]"]
    np.testing.assert_array_equal(check.lengths, [3, 1])


# ---------------------------------------------------------------- what the page says, computed


def test_a_shuffle_of_equal_words_is_the_same_input_and_says_so():
    x, head = word_vectors(["the", "cat", "the"], 8), toy_head(8)
    check = shuffle_check(x, head, [2, 1, 0], "sinusoidal")
    assert check.same_input and check.outcome == "unchanged"
    np.testing.assert_array_equal(check.after.weights, check.before.weights)
    assert not check.passed  # undoing this "shuffle" moves the outputs of two different positions...
    assert "nothing to compare" in shuffle_verdict(check, "Sinusoidal")  # ...but nothing was shuffled
    moved = shuffle_check(x, head, [1, 0, 2], "sinusoidal")
    assert not moved.same_input and moved.outcome == "order was seen"
    assert shuffle_verdict(moved, "Sinusoidal") == (
        f"Sinusoidal: after undoing the shuffle, the outputs differ by up to **{moved.max_diff:.2g}**."
    )
    plain = shuffle_check(x, head, [1, 0, 2])
    assert plain.outcome == "only shuffled" and "outputs are the same" in shuffle_verdict(plain, "No positions")


def test_words_the_tokenizer_cannot_read_become_one_token(model):
    words = ["你", "好", "dog", "😀"]
    assert unknown_words(model, words) == ["你", "好", "😀"]
    assert unknown_note(model, "M", ["dog", "cat"]) is None
    assert unknown_note(model, "M", words) == (
        "[UNK] is the tokenizer's unknown token: M's vocabulary has no piece for 你, 好, 😀, so each becomes [UNK] "
        "and the model cannot tell them apart."
    )
    check = minilm_shuffle_check(model, words, [1, 0, 2, 3], 2)
    assert check.same_input and check.outcome == "unchanged"
    assert not minilm_shuffle_check(model, words, [2, 0, 1, 3], 2).same_input


def test_ripple_peaks_and_cosine_by_distance_by_hand():
    # cosine 1 at distance 0, then 0.5, 0.2, 0.6, 0.1, 0.3 at distances 1..5 (a Toeplitz matrix)
    by_distance = [1.0, 0.5, 0.2, 0.6, 0.1, 0.3, 0.0, 0.0]
    n = len(by_distance)
    sims = np.array([[by_distance[abs(i - j)] for j in range(n)] for i in range(n)])
    assert cosine_by_distance(sims, 3) == pytest.approx(0.6)
    assert ripple_peaks(sims) == [3, 5]


def test_minilm_ripples_about_every_six_positions(model):
    peaks = ripple_peaks(position_similarity(model.position_embeddings, 128))
    assert peaks[:3] == [5, 12, 17] and (peaks[-1] - peaks[0]) / (len(peaks) - 1) == pytest.approx(6, abs=0.5)


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


# ---------------------------------------------------------------- what the page used to compute itself


NINE = parse_words("the dog chased the cat up the tall tree")[0]


def test_the_toy_bundles_the_words_their_vectors_and_the_head():
    toy = Toy.build(list(NINE), 8, 3)
    assert toy.words == NINE and (toy.d_model, toy.seed) == (8, 3)
    np.testing.assert_array_equal(toy.x, word_vectors(NINE, 8, 3))
    np.testing.assert_array_equal(toy.head.w_v, toy_head(8, 3).w_v)
    np.testing.assert_array_equal(toy.x[0], toy.x[3])  # "the" twice: the same vector, no position in it


def test_the_toy_queries_and_keys_are_x_times_w_q_and_w_k():
    toy = Toy.build(NINE, 16, 0)
    q, k = toy_queries_keys(toy.x, toy.head)
    for i in (0, 4):
        np.testing.assert_allclose(q[i], [toy.x[i] @ toy.head.w_q[:, c] for c in range(16)])
        np.testing.assert_allclose(k[i], [toy.x[i] @ toy.head.w_k[:, c] for c in range(16)])
    assert not np.allclose(q, k)


def test_methods_weights_is_each_toy_method_in_order_and_uses_the_alibi_heads_given():
    toy = Toy.build(NINE, 16, 0)
    weights = methods_weights(toy.x, toy.head, alibi_heads=5)
    assert weights.shape == (4, 9, 9) and TOY_METHODS == ("none", "sinusoidal", "rope", "alibi")
    for panel, method in zip(weights, TOY_METHODS):
        np.testing.assert_allclose(panel, attend(toy.x, toy.head, method, alibi_heads=5).weights)
    assert not np.allclose(weights[3], methods_weights(toy.x, toy.head, alibi_heads=8)[3])  # head 1 of 5 ≠ of 8
    assert np.all(weights[0][0, 1:] > 0)  # no causal mask: the first word reads the words after it


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


def test_apply_permutation_and_the_original_order():
    assert apply_permutation(["a", "b", "c"], [2, 0, 1]) == ["c", "a", "b"]
    assert is_original_order(np.arange(5)) and is_original_order(permutation(7, 0))
    assert not is_original_order([1, 0]) and not is_original_order([0, 2, 1])
    assert not any(is_original_order(permutation(2, s)) for s in range(1, 20))


def test_the_toy_checks_pass_only_without_positions():
    toy = Toy.build(NINE, 16, 0)
    checks = toy_shuffle_checks(toy.x, toy.head, permutation(9, 1), alibi_heads=4)
    assert tuple(checks) == TOY_METHODS
    assert [c.outcome for c in checks.values()] == ["only shuffled"] + ["order was seen"] * 3
    expected = shuffle_check(toy.x, toy.head, permutation(9, 1), "alibi", alibi_heads=4)
    assert checks["alibi"].max_diff == expected.max_diff


def test_the_check_table_says_each_outcome_and_quotes_only_real_differences():
    toy = Toy.build(NINE, 16, 0)
    checks = toy_shuffle_checks(toy.x, toy.head, permutation(9, 1))
    words = ("the", "cat", "the")
    same = shuffle_check(word_vectors(words, 16), toy.head, [2, 1, 0], "sinusoidal")  # equal words traded places
    assert same.outcome == "unchanged" and same.max_diff > 0  # the same input: its difference means nothing
    rows = check_rows(checks, (checks["none"], same), "MiniLM, layer 1 head 3")
    assert [r[0] for r in rows] == ["toy head"] * 4 + ["MiniLM, layer 1 head 3"] * 2
    assert [r[1] for r in rows] == [METHOD_LABELS[m] for m in (*TOY_METHODS, "none", "learned")]
    table = check_table(rows)
    assert list(table) == ["model", "position information", "largest difference after undoing the shuffle", "check"]
    assert table["check"] == [OUTCOME_CELLS[o] for o in ["only shuffled", *["order was seen"] * 3, "only shuffled"]] + [
        "– nothing moved"
    ]
    differences = table["largest difference after undoing the shuffle"]
    assert differences[-1] == "–" and differences[1] == diff_text(checks["sinusoidal"].max_diff)
    assert len(check_rows(checks)) == 4  # without a real model: the toy's rows only


def test_the_rounding_bound_is_the_largest_difference_of_the_checks_that_passed():
    toy = Toy.build(NINE, 16, 0)
    checks = toy_shuffle_checks(toy.x, toy.head, permutation(9, 2))
    rows = check_rows(checks, (checks["none"],), "again")
    assert rounding_bound(rows) == checks["none"].max_diff  # not the failed checks' large differences
    assert rounding_bound(rows) < 1e-12 < checks["rope"].max_diff
    assert rounding_bound(check_rows({m: checks["rope"] for m in TOY_METHODS})) == 0.0  # none passed


@pytest.mark.parametrize("d", [16, 32, 64, 256])
def test_every_sinusoidal_row_has_the_length_the_page_quotes(d):
    lengths = np.linalg.norm(sinusoidal_encoding(100, d), axis=1)
    np.testing.assert_allclose(lengths, row_length(d))


def test_the_last_query_reach_counts_the_keys_its_row_reached():
    assert last_query_reach(window_reach(20, 4, 2)) == 7 == reach_span(4, 2)
    assert last_query_reach(window_reach(5, 5, 3)) == 5  # capped by the positions there are
    assert last_query_reach(np.array([[1, 0, 0], [1, 1, 0], [0, 2, 1]])) == 2


def test_the_previous_token_weight_is_the_mean_of_the_diagonal_below():
    weights = np.array([[1.0, 0, 0], [0.8, 0.2, 0], [0.1, 0.3, 0.6]])
    assert previous_token_weight(weights) == pytest.approx((0.8 + 0.3) / 2)
    assert previous_token_weight(np.eye(4)) == 0.0


def test_the_padded_sequences_are_the_first_and_the_last_words():
    assert padding_sequences(NINE, 6, 2) == [list(NINE[:6]), ["tall", "tree"]]
    assert padding_sequences(("a", "b"), 2, 2) == [["a", "b"], ["a", "b"]]
    assert padding_sequences(("a", "b", "c"), 1, 1) == [["a"], ["c"]]


def test_the_slope_table_writes_each_slope_as_a_power_of_two():
    table = slope_table(alibi_slopes(8))
    assert table["h"] == list(range(1, 9))
    assert table["m_h"][:2] == ["2^−1 = 0.5", "2^−2 = 0.25"] and table["m_h"][-1] == "2^−8 = 0.003906"
    assert table["1/m_h"] == [2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0]
    assert slope_table(alibi_slopes(3))["m_h"] == ["2^−4 = 0.0625", "2^−8 = 0.003906", "2^−2 = 0.25"]
