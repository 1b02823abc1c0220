"""lessons/pitfalls.py (and its bars in figures/causal.py): the three pitfalls, run beside the correct
code: hand-computed cases, properties, and their figures."""

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention import attention_steps, scaled_dot_product_attention
from attention.masks import causal_mask
from figures.causal import difference_bars, leak_bars
from lessons.examples import random_example
from lessons.pitfalls import (
    CAUSAL_LATEX,
    MASK_AFTER_SOFTMAX_LATEX,
    after_softmax_attention,
    causal_attention,
    compare_transposes,
    invariance_check,
    key_query_attention,
    leak_example,
    mask_after_softmax,
    prediction_check,
    randomise_after,
    row_max_abs_diff,
    same_pattern_different_output,
    sanity_checks,
    small_leak,
    small_leak_example,
    transpose_hand_example,
    wrong_transpose_attention,
    wrong_transpose_scores,
)
from lessons.why_attention import fixed_versus_attention

# ---------------------------------------------------------------- masking after the softmax


def test_mask_after_softmax_by_hand():
    # All scores equal (q = 0): the softmax over 3 keys gives 1/3 each. Zeroing the future afterwards leaves
    # row 0 with 1/3 (leak 2/3), row 1 with 2/3 (leak 1/3), row 2 with everything (leak 0).
    q, k, v = np.zeros((3, 2)), np.ones((3, 2)), np.eye(3)
    bug = mask_after_softmax(q, k, v)
    np.testing.assert_allclose(bug.full_weights, np.full((3, 3), 1 / 3))
    np.testing.assert_allclose(bug.weights, [[1 / 3, 0, 0], [1 / 3, 1 / 3, 0], [1 / 3, 1 / 3, 1 / 3]])
    np.testing.assert_allclose(bug.row_sums, [1 / 3, 2 / 3, 1])
    np.testing.assert_allclose(bug.leak, [2 / 3, 1 / 3, 0], atol=1e-15)
    np.testing.assert_allclose(bug.output, bug.weights)  # one-hot values
    # the correct mask renormalises: row 0 -> (1, 0, 0), row 1 -> (1/2, 1/2, 0)
    _, correct = scaled_dot_product_attention(q, k, v, causal=True)
    np.testing.assert_allclose(correct[:2], [[1, 0, 0], [0.5, 0.5, 0]])


def test_leak_is_one_minus_row_sum_and_renormalising_gives_the_correct_weights():
    e = leak_example().seq
    bug = mask_after_softmax(e.q, e.k, e.v)
    np.testing.assert_allclose(1.0 - bug.row_sums, bug.leak, atol=1e-15)
    assert np.all(bug.leak[:-1] > 0.0) and bug.leak[-1] == 0.0  # the last row masks nothing
    _, correct = scaled_dot_product_attention(e.q, e.k, e.v, causal=True)
    np.testing.assert_allclose(bug.weights / bug.row_sums[:, None], correct, atol=1e-15)


def test_mask_after_softmax_takes_a_custom_mask_and_refuses_a_bad_one():
    e = random_example(3, 2, 2, seed=1).seq
    only_self = np.eye(3, dtype=bool)
    bug = mask_after_softmax(e.q, e.k, e.v, only_self, scale=False)
    np.testing.assert_allclose(bug.row_sums, np.diag(bug.full_weights))
    with pytest.raises(ValueError, match="expected bool"):
        mask_after_softmax(e.q, e.k, e.v, np.eye(3))
    with pytest.raises(ValueError, match=r"expected bool \(3, 3\)"):
        mask_after_softmax(e.q, e.k, e.v, np.ones((2, 3), dtype=bool))


# ---------------------------------------------------------------- the wrong transpose


def test_wrong_transpose_only_runs_when_n_equals_d_k():
    q = k = np.arange(12.0).reshape(4, 3)
    with pytest.raises(ValueError, match=r"q is 4×3 and k is 4×3.*only when n = d_k"):
        wrong_transpose_scores(q, k)
    square = np.arange(9.0).reshape(3, 3)
    np.testing.assert_array_equal(wrong_transpose_scores(square, square.T), square @ square.T)


def test_the_hand_example_catches_the_wrong_transpose_and_the_shape_checks_do_not():
    example, answer = transpose_hand_example()
    assert answer == (2, 0, 1)  # query i looks for feature i, which key i−1 (mod 3) carries
    right = attention_steps(example.seq.q, example.seq.k, example.seq.v)
    wrong_scores, wrong_weights, wrong_output = wrong_transpose_attention(example.seq.q, example.seq.k, example.seq.v)
    np.testing.assert_array_equal(wrong_scores, example.seq.k)  # Q = I, so Q K is K itself: row i is key i
    assert tuple(np.argmax(wrong_weights, axis=1)) == (1, 2, 0)
    np.testing.assert_allclose(wrong_output, wrong_weights)  # one-hot values
    for checks in (sanity_checks(right.scores, right.weights, 3, 3), sanity_checks(wrong_scores, wrong_weights, 3, 3)):
        assert all(c.passed for c in checks)  # both are 3×3 with rows summing to 1
    assert prediction_check(right.weights, answer).passed
    failed = prediction_check(wrong_weights, answer)
    assert not failed.passed and "(1, 2, 0)" in failed.detail


def test_sanity_checks_fail_on_a_wrong_shape_or_a_bad_row_sum():
    shape, sums = sanity_checks(np.zeros((3, 2)), np.full((3, 2), 0.5), 3, 3)
    assert not shape.passed and "(3, 2)" in shape.detail and not sums.passed
    shape, sums = sanity_checks(np.zeros((2, 2)), np.array([[0.5, 0.4], [0.5, 0.5]]), 2, 2)
    assert shape.passed and not sums.passed and "1.0e-01" in sums.detail


# ---------------------------------------------------------------- the invariance check


def test_randomising_later_tokens_leaves_earlier_outputs_exactly_unchanged():
    e = leak_example().seq
    t = 2
    after = randomise_after(e.q, e.k, e.v, t, seed=3)
    for old, new in zip((e.q, e.k, e.v), after):
        np.testing.assert_array_equal(new[: t + 1], old[: t + 1])
        assert np.all(new[t + 1 :] != old[t + 1 :])
    result = invariance_check((e.q, e.k, e.v), after, t)
    assert result.passed and result.later_changed and result.first_changed_input == t + 1
    assert np.all(result.diff[: t + 1] == 0.0) and np.all(result.diff[t + 1 :] > 0.0)
    np.testing.assert_array_equal(result.diff, np.abs(result.after - result.before).max(axis=1))


def test_changing_an_early_token_fails_the_check():
    e = leak_example().seq
    q = e.q.copy()
    q[1] += 1.0  # position 1 is not after t = 3
    result = invariance_check((e.q, e.k, e.v), (q, e.k, e.v), 3)
    assert not result.passed and result.first_changed_input == 1 and result.diff[0] == 0.0 and result.diff[1] > 0


def test_without_a_mask_the_same_change_would_move_early_outputs():
    e = leak_example().seq
    after = randomise_after(e.q, e.k, e.v, 2, seed=0)
    plain_before, _ = scaled_dot_product_attention(e.q, e.k, e.v)
    plain_after, _ = scaled_dot_product_attention(*after)
    assert np.all(row_max_abs_diff(plain_before, plain_after) > 0)  # the check has teeth


def test_invariance_check_refuses_mismatched_sizes_and_bad_t():
    e = leak_example().seq
    small = random_example(5, 3, 2, seed=0).seq
    with pytest.raises(ValueError, match="compare sequences of one size"):
        invariance_check((e.q, e.k, e.v), (small.q, small.k, small.v), 1)
    for t in (-1, 6, 1.5, True):
        with pytest.raises(ValueError, match="t must be a position from 0 to 5"):
            invariance_check((e.q, e.k, e.v), (e.q, e.k, e.v), t)


@settings(deadline=None, max_examples=40)
@given(n=st.integers(2, 8), d_k=st.integers(1, 4), d_v=st.integers(1, 3), data=st.data())
def test_causal_outputs_up_to_t_never_move_bit_for_bit(n, d_k, d_v, data):
    t = data.draw(st.integers(0, n - 2))
    seed = data.draw(st.integers(0, 2**16))
    e = random_example(n, d_k, d_v, seed=seed).seq
    result = invariance_check((e.q, e.k, e.v), randomise_after(e.q, e.k, e.v, t, seed=seed + 1), t)
    assert result.passed


# ---------------------------------------------------------------- attention is not explanation


@pytest.mark.parametrize("d_k", [1, 2, 3])
def test_two_different_inputs_share_the_pattern_but_not_the_output(d_k):
    e = random_example(4, d_k, 2, seed=5).seq
    twin = same_pattern_different_output(e.q, e.k, e.v, seed=2)
    np.testing.assert_allclose(twin.rotation @ twin.rotation.T, np.eye(d_k), atol=1e-12)
    np.testing.assert_allclose(twin.weights_a, twin.weights_b, atol=1e-12)
    assert np.abs(twin.output_a - twin.output_b).max() > 0.1
    assert not np.allclose(twin.b[2], twin.a[2])
    np.testing.assert_array_equal(twin.a[0], e.q)


def test_row_max_abs_diff_by_hand_and_on_mismatched_shapes():
    np.testing.assert_array_equal(
        row_max_abs_diff(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[1.0, 0.5], [3.0, 4.0]])), [1.5, 0.0]
    )
    with pytest.raises(ValueError, match="cannot compare"):
        row_max_abs_diff(np.zeros((2, 2)), np.zeros((3, 2)))


# ---------------------------------------------------------------- figures and the layering


def test_difference_bars_colour_the_must_be_zero_positions():
    bar = difference_bars(np.array([0.0, 0.0, 1e-17, 0.5]), 2, ["a", "b", "c", "d"]).data[0]
    assert tuple(bar.text) == ("0", "0", "1.00e-17", "5.00e-01")  # a tiny non-zero is never shown as 0
    assert tuple(bar.marker.color[:3]) == ("#2ca02c", "#2ca02c", "#d62728")


def test_leak_bars_stack_to_one():
    fig = leak_bars(np.array([0.25, 1.0]), np.array([0.75, 0.0]), ["a", "b"])
    kept, leak = fig.data
    np.testing.assert_allclose(np.add(kept.y, leak.y), 1.0)
    assert fig.layout.barmode == "stack"


def test_the_lesson_core_imports_neither_streamlit_nor_plotly():
    code = (
        "import sys, lessons.pitfalls, lessons.puzzles; "
        "assert not {'streamlit', 'plotly'} & {m.split('.')[0] for m in sys.modules}"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- issue #13: the other wrong transpose, a leak that looks like noise, a rotation that is one -------


def test_k_q_transpose_always_runs_rows_sum_to_one_and_is_the_transposed_scores():
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((4, 3)), rng.standard_normal((4, 3)), rng.standard_normal((4, 2))  # n != d_k
    scores, weights, output = key_query_attention(q, k, v)
    right = attention_steps(q, k, v)
    np.testing.assert_allclose(scores, right.scaled.T, atol=1e-12)  # (Q Kᵀ)ᵀ / √d_k: keys attend to queries
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-12)
    assert np.abs(weights - right.weights).max() > 0.05  # and it is wrong
    np.testing.assert_allclose(output, weights @ v, atol=1e-12)
    with pytest.raises(ValueError):  # Q K does not run on these shapes at all
        wrong_transpose_attention(q, k, v)


def test_the_hand_example_catches_both_wrong_transposes():
    example, answer = transpose_hand_example()
    s = example.seq
    assert prediction_check(attention_steps(s.q, s.k, s.v).weights, answer).passed
    assert not prediction_check(wrong_transpose_attention(s.q, s.k, s.v)[1], answer).passed
    assert not prediction_check(key_query_attention(s.q, s.k, s.v)[1], answer).passed
    for check in sanity_checks(*key_query_attention(s.q, s.k, s.v)[:2], 3, 3):
        assert check.passed  # shape and row sums cannot tell


def test_the_small_leak_looks_like_noise_but_the_invariance_check_catches_it():
    s = small_leak_example().seq
    bug = mask_after_softmax(s.q, s.k, s.v)
    right = causal_attention(s.q, s.k, s.v)
    # row i leaks (5 - i) / (e^(12/√6) + 5): 3.6 % at the first token, down to 0 at the last
    expected = np.array([(5 - i) / (np.exp(12 / np.sqrt(6)) + 5) for i in range(6)])
    np.testing.assert_allclose(bug.leak, expected, atol=1e-12)
    assert 0.03 < bug.leak.max() < 0.04 and np.abs(bug.output - right).max() < 0.1
    for t in range(5):
        after = randomise_after(s.q, s.k, s.v, t, seed=t)
        assert invariance_check((s.q, s.k, s.v), after, t).passed
        assert not invariance_check((s.q, s.k, s.v), after, t, attend=after_softmax_attention).passed
    report = small_leak(t=2)
    assert report.largest_leak == bug.leak.max() and report.largest_drift == np.abs(bug.output - right).max()
    assert report.checks["correct"].passed and not report.checks["bug"].passed
    assert report.checks["bug"].first_changed_input == 3 and not report.checks["bug"].changed_up_to_t


def test_an_edit_at_or_before_t_is_told_apart_from_a_leak():
    s = small_leak_example().seq
    q = s.q.copy()
    q[1, 0] += 1.0
    inv = invariance_check((s.q, s.k, s.v), (q, s.k, s.v), 2)
    assert inv.changed_up_to_t and not inv.passed
    assert not invariance_check((s.q, s.k, s.v), (s.q, s.k, s.v), 2).changed_up_to_t  # nothing changed


def test_the_multiplicative_mask_is_written_as_a_zero_one_matrix():
    # Issue #13: the after-softmax formula wrote "⊙ M" while M is 0/−∞ in the causal formula.
    assert r"\odot B" in MASK_AFTER_SOFTMAX_LATEX and r"\odot M" not in MASK_AFTER_SOFTMAX_LATEX
    assert r"\begin{cases} 1 & j \le i \\ 0 & j > i \end{cases}" in MASK_AFTER_SOFTMAX_LATEX
    assert r"-\infty & j > i" in CAUSAL_LATEX
    s = leak_example().seq
    bug = mask_after_softmax(s.q, s.k, s.v)
    b = causal_mask(6).astype(float)  # the 0/1 matrix B
    np.testing.assert_array_equal(bug.weights, bug.full_weights * b)


@pytest.mark.parametrize("seed", range(20))
def test_input_b_is_turned_by_a_rotation_not_a_reflection(seed):
    e = random_example(4, 3, 2, seed=5).seq
    twin = same_pattern_different_output(e.q, e.k, e.v, seed=seed)
    r = twin.rotation
    np.testing.assert_allclose(r @ r.T, np.eye(3), atol=1e-12)
    assert np.linalg.det(r) == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(twin.weights_a, twin.weights_b, atol=1e-12)


def test_a_fixed_mixing_matrix_ignores_the_input_attention_follows_the_tokens():
    a = random_example(5, 3, 2, seed=8).seq
    result = fixed_versus_attention(a, seed=1)
    assert result.b.tokens == a.tokens[::-1]
    np.testing.assert_allclose(result.fixed.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(result.weights_b_in_a_order, result.weights_a, atol=1e-12)  # moved with the tokens
    assert np.abs(result.weights_b - result.weights_a).max() > 0.05  # so, seen by position, they changed
    np.testing.assert_allclose(result.fixed_out_b, result.fixed @ a.v[::-1], atol=1e-12)  # W itself did not
    with pytest.raises(ValueError, match="not a reordering"):
        fixed_versus_attention(a, order=[0, 0, 1, 2, 3])


def test_compare_transposes_judges_each_product_by_the_same_three_checks():
    hand = transpose_hand_example()[0].seq
    c = compare_transposes(hand.q, hand.k, hand.v)
    assert [x.passed for x in c.right_checks] == [True, True, True]
    assert [x.passed for x in c.wrong_checks] == [True, True, False]  # right shape, rows sum to 1, wrong answer
    assert [x.passed for x in c.kq_checks] == [True, True, False]
    assert not c.wrong_looks_right and not c.kq_looks_right and c.wrong_error is None
    np.testing.assert_array_equal(c.wrong_weights, wrong_transpose_attention(hand.q, hand.k, hand.v)[1])
    symmetric = compare_transposes(np.eye(3), np.array([[2.0, 1, 0], [1, 2, 1], [0, 1, 2]]), np.eye(3))
    assert symmetric.wrong_looks_right and symmetric.kq_looks_right  # Q = I, K = Kᵀ: cannot tell them apart
    seq = random_example(4, 3, 2, seed=0).seq
    not_square = compare_transposes(seq.q, seq.k, seq.v)
    assert not_square.wrong_weights is None and "4" in not_square.wrong_error
    assert not_square.wrong_checks[:2] == (None, None) and not not_square.wrong_checks[2].passed
    assert not not_square.wrong_looks_right
