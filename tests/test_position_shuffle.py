"""lessons/positions/shuffle.py: order is invisible. The shuffle check passes without positions and fails with
each of the four methods; its verdicts, table and captions quote what it measured."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention.pretrained import load_minilm
from lessons.positions.alibi import alibi_unmasked
from lessons.positions.learned import position_similarity
from lessons.positions.shuffle import (
    BADGES,
    OUTCOME_CELLS,
    apply_permutation,
    check_rows,
    check_table,
    is_original_order,
    minilm_shuffle_check,
    permutation,
    rounding_bound,
    rounding_caption,
    shuffle_check,
    shuffle_sentence,
    shuffle_verdict,
    the_two_orders,
    toy_shuffle_checks,
)
from lessons.positions.toy import (
    METHOD_LABELS,
    METHODS,
    TOY_METHODS,
    Toy,
    diff_text,
    parse_words,
    toy_head,
    word_vectors,
)

SETTINGS = settings(max_examples=30, deadline=None)

NINE = parse_words("the dog chased the cat up the tall tree")[0]


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


def test_permutations():
    assert permutation(5, 0).tolist() == [0, 1, 2, 3, 4]
    for shuffle in range(1, 200):
        perm = permutation(3, shuffle)
        assert sorted(perm.tolist()) == [0, 1, 2] and perm.tolist() != [0, 1, 2]
    assert permutation(1, 7).tolist() == [0]


@pytest.fixture(scope="module")
def model():
    return load_minilm()


def test_minilm_shuffle_check(model):
    words = parse_words("the unbelievably tired dog chased a cat")[0]
    perm = permutation(len(words), 4)
    assert minilm_shuffle_check(model, words, perm, 2, positions=False).passed
    check = minilm_shuffle_check(model, words, perm, 2, positions=True)
    assert not check.passed and check.max_diff > 0.1
    sims = position_similarity(model.position_embeddings, 64)
    assert np.allclose(np.diag(sims), 1.0) and np.allclose(sims, sims.T)


def test_a_shuffle_of_equal_words_is_the_same_input_and_says_so():
    x, head = word_vectors(["the", "cat", "the"], 8), toy_head(8)
    check = shuffle_check(x, head, [2, 1, 0], "sinusoidal")
    assert check.same_input and check.outcome == "unchanged"
    np.testing.assert_array_equal(check.after.weights, check.before.weights)
    assert not check.passed  # undoing this "shuffle" moves the outputs of two different positions...
    assert "nothing to compare" in shuffle_sentence(check, "Sinusoidal")  # ...but nothing was shuffled
    moved = shuffle_check(x, head, [1, 0, 2], "sinusoidal")
    assert not moved.same_input and moved.outcome == "order was seen"
    assert shuffle_sentence(moved, "Sinusoidal") == (
        f"Sinusoidal: after undoing the shuffle, the outputs differ by up to **{moved.max_diff:.2g}**."
    )
    plain = shuffle_check(x, head, [1, 0, 2])
    assert plain.outcome == "only shuffled" and "outputs are the same" in shuffle_sentence(plain, "No positions")


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


def test_the_two_orders_are_on_two_lines_with_the_shuffle_number():
    shown = the_two_orders("the dog sat", 7, "sat the dog")
    assert shown == "**Original order:** the dog sat  \n**Shuffle 7:** sat the dog"


@pytest.mark.parametrize(("bound", "quoted"), [(0.0, "0"), (3.3e-16, "3.3e-16"), (1.234e-15, "1.2e-15")])
def test_the_rounding_caption_quotes_the_bound_without_rounding_it_to_zero(bound, quoted):
    caption = rounding_caption(bound, 8)
    assert f"(at most {quoted}) are rounding" in caption
    assert caption.endswith(" " + alibi_unmasked(8))
    assert alibi_unmasked(4) in rounding_caption(bound, 4)


def test_a_shuffle_verdict_has_the_badge_of_its_outcome_and_the_methods_name():
    toy = Toy.build(("the", "dog", "sat", "down"), 8, 0)
    checks = toy_shuffle_checks(toy.x, toy.head, permutation(4, 3), 8)
    none, rope = shuffle_verdict(checks["none"], "none"), shuffle_verdict(checks["rope"], "rope")
    assert checks["none"].outcome == "only shuffled" and checks["rope"].outcome == "order was seen"
    assert none.startswith(BADGES["only shuffled"]) and "No positions: after undoing" in none
    assert rope.startswith(BADGES["order was seen"]) and "RoPE: after undoing" in rope
    same = toy_shuffle_checks(toy.x, toy.head, permutation(4, 0), 8)["alibi"]
    assert shuffle_verdict(same, "alibi").startswith(BADGES["unchanged"])
