"""The three pitfalls, run beside the correct code: hand-computed cases, properties, and their figures."""

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention import attention_steps, scaled_dot_product_attention
from figures.lessons import difference_bars, leak_bars
from lessons.examples import random_example
from lessons.pitfalls import (
    invariance_check,
    leak_example,
    mask_after_softmax,
    prediction_check,
    randomise_after,
    row_max_abs_diff,
    same_pattern_different_output,
    sanity_checks,
    transpose_hand_example,
    wrong_transpose_attention,
    wrong_transpose_scores,
)

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
