"""pages/pitfalls.py under AppTest: right vs wrong transpose, the leak numbers, and one pattern, two outputs."""

import numpy as np
import pytest

from attention import scaled_dot_product_attention
from attention.sequence import TokenSequence
from lessons.examples import random_example
from lessons.pitfalls import (
    key_query_attention,
    leak_example,
    mask_after_softmax,
    same_pattern_different_output,
    transpose_hand_example,
    wrong_transpose_attention,
)
from tests.apptest_helpers import chart_by_key, heatmap_z, open_page
from tests.apptest_helpers import table_with_column as frame

PAGE = "pages/pitfalls.py"


def test_right_and_wrong_transpose_side_by_side_and_the_check_that_catches_it():
    at = open_page(PAGE)
    assert not at.exception and not at.error
    example, _ = transpose_hand_example()
    np.testing.assert_allclose(
        heatmap_z(chart_by_key(at, "pitfalls_right")),
        scaled_dot_product_attention(example.seq.q, example.seq.k, example.seq.v)[1],
        atol=1e-12,
    )
    np.testing.assert_allclose(
        heatmap_z(chart_by_key(at, "pitfalls_wrong")),
        wrong_transpose_attention(example.seq.q, example.seq.k, example.seq.v)[1],
        atol=1e-12,
    )
    checks = frame(at, "wrong: Q K")
    assert all(v.startswith("✅") for v in checks["right: Q Kᵀ"])
    # the wrong product is still (3, 3) with rows summing to 1; only the predicted hand example fails
    assert [v[0] for v in checks["wrong: Q K"]] == ["✅", "✅", "❌"]


def test_when_n_differs_from_d_k_the_wrong_product_does_not_run():
    seq = random_example(4, 3, 2, seed=0).seq
    at = open_page(PAGE, state={"pitfalls_seq": seq})
    assert not at.exception
    assert any("does not run on these vectors" in w.value and "4×3" in w.value for w in at.warning)
    assert frame(at, "wrong: Q K")["wrong: Q K"].iloc[0].startswith("🛑 caught")


def test_a_symmetric_example_cannot_catch_the_bug_and_the_page_says_so():
    at = open_page(PAGE)
    at.text_area(key="pitfalls_seq_text_k").set_value("2 1 0; 1 2 1; 0 1 2").run()  # K = Kᵀ and Q = I
    assert not at.exception
    assert any("cannot tell the right code from the wrong one" in w.value for w in at.warning)


def test_the_leak_numbers_are_the_cores_for_the_causal_pages_sequence():
    at = open_page(PAGE)
    e = leak_example().seq
    bug = mask_after_softmax(e.q, e.k, e.v)
    table = frame(at, "leak = 1 − row sum")
    np.testing.assert_allclose(table["row sum (bug)"].to_numpy(), bug.row_sums, atol=0)
    np.testing.assert_allclose(1.0 - table["row sum (bug)"].to_numpy(), table["leak = 1 − row sum"], atol=1e-15)
    assert [link.proto.page for link in at.get("page_link")] == ["causal"]


def test_same_pattern_different_outputs_for_the_playgrounds_sequence():
    seq = random_example(5, 3, 2, seed=4).seq
    at = open_page(PAGE, state={"seq": seq}, query={"seed": "3"})
    assert not at.exception and at.session_state["pitfalls_seed"] == 3
    twin = same_pattern_different_output(seq.q, seq.k, seq.v, 3)
    w_a, w_b = (heatmap_z(chart_by_key(at, f"pitfalls_heat_{x}")) for x in "AB")
    np.testing.assert_allclose(w_a, w_b, atol=1e-12)
    np.testing.assert_allclose(w_b, twin.weights_b, atol=1e-12)
    out_a, out_b = (heatmap_z(chart_by_key(at, f"pitfalls_out_{x}")) for x in "AB")
    assert np.abs(out_a - out_b).max() > 0.1
    caution = "The weights show which positions were read and how much, not what that meant or why."
    assert any(caution in i.value for i in at.info)


def test_a_bad_seed_in_the_url_warns():
    at = open_page(PAGE, query={"seed": "-5"})
    assert not at.exception and any("'seed'=-5 is outside" in w.value for w in at.warning)


def test_the_k_q_transpose_is_shown_beside_the_right_one_and_runs_where_q_k_cannot():
    seq = random_example(4, 3, 2, seed=0).seq  # n = 4, d_k = 3: Q K cannot run, K Qᵀ can
    at = open_page(PAGE, state={"pitfalls_seq": seq})
    assert not at.exception
    shown = heatmap_z(chart_by_key(at, "pitfalls_wrong_kq"))
    np.testing.assert_allclose(shown, key_query_attention(seq.q, seq.k, seq.v)[1], atol=1e-12)
    right = heatmap_z(chart_by_key(at, "pitfalls_right"))
    assert np.abs(shown - right).max() > 0.05  # it runs, and it differs from the correct weights
    checks = frame(at, "wrong: K Qᵀ")
    assert checks["wrong: K Qᵀ"].str.startswith("✅").tolist() == [True, True, False]  # only the prediction fails
    assert "does not run" in " ".join(w.value for w in at.warning)


# ---------------------------------------------------------------- every sentence true (issue #50)


def prose(at) -> str:
    return " ".join(m.value for m in at.markdown)


def test_the_section_names_jain_and_wallace_and_says_what_they_found_beside_what_the_demo_shows():
    at = open_page(PAGE)
    assert not at.exception
    text = prose(at)
    assert "Jain & Wallace (2019, 'Attention is not Explanation')" in text
    assert "The demo shows one direction: the *same* weights with *different* outputs" in text
    # their two main findings, said as theirs
    assert "**very different weights, the same prediction**" in text and "adversarial" in text
    assert "randomly permuting the learned weights often changed the prediction little" in text
    assert "gradient-based measures" in text and "leave-one-out measures" in text
    assert "recurrent (BiLSTM) encoder" in text and "Neither finding is computed on this page" in text
    assert "Wiegreffe & Pinter (2019, 'Attention is not not Explanation') replied" in text


def test_the_demo_is_what_the_text_says_same_weights_different_outputs():
    seq = random_example(5, 3, 2, seed=4).seq
    at = open_page(PAGE, state={"seq": seq}, query={"seed": "3"})
    twin = same_pattern_different_output(seq.q, seq.k, seq.v, 3)
    assert "Input **B** has different queries and keys (A's, turned by a random rotation R" in prose(at)
    assert np.linalg.det(twin.rotation) == pytest.approx(1.0)  # a rotation, as the formula says
    assert not np.allclose(twin.b[0], twin.a[0]) and not np.allclose(twin.b[1], twin.a[1])
    assert r"\det R = +1" in " ".join(t.value for t in at.latex)


@pytest.mark.parametrize("seed, sign", [(0, 1.0), (4, -1.0)])
def test_with_d_k_1_input_b_is_said_as_the_rotation_drawn(seed, sign):
    """With d_k = 1, R is ±1: with R = 1, B's queries and keys are A's, and the page must not say 'different'."""
    seq = TokenSequence(("a", "b", "c"), np.array([[1.0], [2.0], [0.5]]), np.array([[0.3], [1.0], [-1.0]]), np.eye(3))
    at = open_page(PAGE, state={"seq": seq}, query={"seed": str(seed)})
    assert not at.exception and not at.error
    twin = same_pattern_different_output(seq.q, seq.k, seq.v, seed)
    assert twin.rotation[0, 0] == sign
    text = prose(at)
    formula = " ".join(t.value for t in at.latex)
    assert "different queries and keys" not in text and r"\det R = +1" not in formula
    if sign > 0:
        assert "Input **B** has A's queries and keys (with d_k = 1 the only rotation is R = 1" in text
        np.testing.assert_array_equal(twin.b[0], twin.a[0])
        assert "(R = +1)" in formula
    else:
        assert "Input **B** has A's queries and keys times R = −1" in text
        np.testing.assert_array_equal(twin.b[0], -twin.a[0])
        assert "(R = -1)" in formula
    np.testing.assert_allclose(twin.weights_a, twin.weights_b, atol=1e-12)


def test_the_hand_example_s_answer_is_the_one_computed():
    at = open_page(PAGE)
    _, answer = transpose_hand_example()
    picks = ", ".join(f"query {i} key {j}" for i, j in enumerate(answer))
    assert f"each query must pick the key before it (mod 3): {picks}." in prose(at)
    assert answer == tuple((i - 1) % 3 for i in range(3))  # "the key before it (mod 3)"
    hand, _ = transpose_hand_example()
    weights = scaled_dot_product_attention(hand.seq.q, hand.seq.k, hand.seq.v)[1]
    assert tuple(weights.argmax(axis=1)) == answer


def test_the_leak_sentence_holds_for_every_row_of_the_table():
    at = open_page(PAGE)
    assert "the last row has no future, so it still sums to 1" in prose(at)
    e = leak_example().seq
    bug = mask_after_softmax(e.q, e.k, e.v)
    future = np.triu(bug.full_weights, k=1).sum(axis=1)  # the weight each row had on later positions
    assert np.all(bug.row_sums[future > 0] < 1) and future[-1] == 0
    assert bug.row_sums[-1] == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(bug.leak, future, atol=1e-15)


def test_a_symmetric_k_with_q_identity_fools_both_wrong_products_as_the_caption_says():
    at = open_page(PAGE)
    assert any("both wrong products give the right answer" in c.value for c in at.caption)
    at.text_area(key="pitfalls_seq_text_k").set_value("2 1 0; 1 2 1; 0 1 2").run()  # K = Kᵀ and Q = I
    assert not at.exception
    fooled = [w for w in at.warning if "cannot tell the right code from the wrong one" in w.value]
    assert len(fooled) == 2  # under Q K and under K Qᵀ
