"""pages/pitfalls.py under AppTest: right vs wrong transpose, the leak numbers, and one pattern, two outputs."""

import numpy as np

from attention import scaled_dot_product_attention
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
