"""pages/causal.py under AppTest: the mask, the live invariance check, and the after-softmax bug."""

import numpy as np

from attention import scaled_dot_product_attention
from attention.sequence import TokenSequence
from lessons.examples import random_example
from lessons.pitfalls import invariance_check, leak_example, mask_after_softmax
from tests.apptest_helpers import chart_by_key, heatmap_z, open_page
from tests.apptest_helpers import table_with_column as frame
from ui.url import encode_sequence

PAGE = "pages/causal.py"


def test_mask_off_and_on_and_the_minus_infinity_scores():
    at = open_page(PAGE)
    assert not at.exception and not at.error
    e = leak_example().seq
    np.testing.assert_allclose(
        heatmap_z(chart_by_key(at, "causal_heat_off")), scaled_dot_product_attention(e.q, e.k, e.v)[1], atol=1e-12
    )
    on = heatmap_z(chart_by_key(at, "causal_heat_on"))
    assert np.all(np.triu(on, 1) == 0.0) and np.allclose(on.sum(axis=1), 1.0)
    scores = chart_by_key(at, "causal_masked_scores")["data"][0]
    text = np.array(scores["text"])
    assert np.all(text[np.triu_indices(6, 1)] == "−∞") and not np.any(text[np.tril_indices(6)] == "−∞")


def test_randomising_later_tokens_passes_the_check_exactly():
    at = open_page(PAGE)
    at.slider(key="causal_t").set_value(2).run()
    before = at.session_state["causal_seq"]
    at.button(key="causal_randomise").click().run()
    assert not at.exception
    after = at.session_state["causal_seq"]
    assert np.array_equal(after.q[:3], before.q[:3]) and not np.array_equal(after.q[3:], before.q[3:])
    assert any("Check passed" in s.value and "later positions moved" in s.value for s in at.success)
    table = frame(at, "max |after − before|")
    assert list(table["max |after − before|"][:3]) == ["0", "0", "0"]  # exactly 0, not "small"
    assert all(float(x) > 0 for x in table["max |after − before|"][3:])  # non-zero after t
    assert list(table["check"]) == ["✅", "✅", "✅", "—", "—", "—"]
    core = invariance_check((before.q, before.k, before.v), (after.q, after.k, after.v), 2)
    assert core.passed and np.all(core.diff[:3] == 0.0) and np.all(core.diff[3:] > 0.0)
    assert at.session_state["causal_seed"] == 1  # the next press gives new numbers


def test_editing_an_early_token_fails_the_check_and_says_why():
    at = open_page(PAGE)
    at.slider(key="causal_t").set_value(3).run()
    at.button(key="causal_snapshot").click().run()
    seq = at.session_state["causal_seq"]
    q = seq.q.copy()
    q[1] += 0.5  # position 1 is at or before t: its output may move, so the check must fail
    at.text_area(key="causal_seq_text_q").set_value("\n".join(" ".join(map(str, r)) for r in q)).run()
    assert not at.exception
    assert any("Check failed" in e.value and "changed position 1 itself" in e.value for e in at.error)
    assert frame(at, "max |after − before|")["check"][1] == "❌"
    at.button(key="causal_restore").click().run()
    assert at.session_state["causal_seq"].equals(seq)


def test_after_softmax_row_sums_differ_from_one_by_the_core_leak():
    seq = random_example(5, 3, 2, seed=11).seq
    at = open_page(PAGE, query=encode_sequence(seq))
    assert not at.exception and not at.warning
    table = frame(at, "row sum (bug)")
    bug = mask_after_softmax(seq.q, seq.k, seq.v)
    np.testing.assert_allclose(1.0 - table["row sum (bug)"].to_numpy(), bug.leak, atol=1e-15)
    np.testing.assert_allclose(table["leak = 1 − row sum"].to_numpy(), bug.leak, atol=0)
    np.testing.assert_allclose(table["row sum (correct)"].to_numpy(), 1.0, atol=1e-12)
    assert np.all(bug.leak[:-1] > 0.01)  # the bug is visible, not a rounding error
    np.testing.assert_allclose(heatmap_z(chart_by_key(at, "causal_heat_bug")), bug.weights, atol=1e-12)


def test_url_state_and_bad_values():
    at = open_page(PAGE, query={"t": "4", "seed": "17"})
    assert at.slider(key="causal_t").value == 4 and at.session_state["causal_seed"] == 17
    at = open_page(PAGE, query={"t": "99", "seed": "x", "q": "1,2;nan"})
    assert not at.exception and at.slider(key="causal_t").value == 2
    texts = " ".join(w.value for w in at.warning)
    assert "'t'=99 is outside" in texts and "'seed' should be a whole number" in texts and "could not be used" in texts


def test_a_url_with_labels_only_relabels_the_page_example():
    e = leak_example().seq
    labels = " ".join(f"w{i}" for i in range(len(e.tokens)))
    at = open_page(PAGE, query={"tokens": labels})
    seq = at.session_state["causal_seq"]
    assert not at.exception and not at.warning and seq.tokens == tuple(labels.split())
    assert np.array_equal(seq.q, np.array(e.q, dtype=float))  # the page's own example's vectors


def test_one_or_two_positions_do_not_crash():
    seq = TokenSequence(("only",), np.ones((1, 2)), np.ones((1, 2)), np.ones((1, 1)))
    at = open_page(PAGE, state={"causal_seq": seq})
    assert not at.exception and any("at least 2 positions" in i.value for i in at.info)
    two = TokenSequence(("a", "b"), np.eye(2), np.eye(2), np.ones((2, 1)))
    at = open_page(PAGE, state={"causal_seq": two})  # a slider from 0 to 0 is impossible: t is fixed at 0
    at.button(key="causal_randomise").click().run()
    assert not at.exception and any("Check passed" in s.value for s in at.success)


def test_a_small_leak_looks_like_noise_and_the_check_still_catches_it():
    at = open_page(PAGE)
    assert not at.exception
    table = frame(at, "largest leak")
    assert table["check"].tolist() == ["✅ passed", "❌ failed: the future leaked"]
    prose = " ".join(m.value for m in at.markdown)
    assert "the leak is at most **3.6%**" in prose  # (5 - 0) / (e^(12/√6) + 5)


def test_the_two_masks_have_two_symbols():
    at = open_page(PAGE)
    formulas = [latex.value for latex in at.get("latex")]  # M is added (0 or -inf), B multiplies (0 or 1)
    assert any(r"+ M\right)" in f and r"-\infty" in f for f in formulas)
    assert any(r"\odot B" in f and r"\begin{cases} 1" in f for f in formulas)


def test_a_shorter_sequence_holds_t_at_its_last_position_and_gives_it_back():
    at = open_page(PAGE, query=encode_sequence(random_example(6, 3, 2, seed=1).seq))
    at.slider(key="causal_t").set_value(4).run()
    at.session_state["causal_seq"] = random_example(4, 3, 2, seed=2).seq
    at.run()
    assert not at.exception and at.slider(key="causal_t").value == 2 and at.slider(key="causal_t").max == 2
    assert any("position t lowered from 4 to 2" in c.value for c in at.caption)
    at.session_state["causal_seq"] = random_example(6, 3, 2, seed=3).seq
    at.run()
    assert at.slider(key="causal_t").value == 4 and not any("position t" in c.value for c in at.caption)


def test_a_sequence_that_arrives_by_a_link_is_the_checks_new_before():
    """A student's edit of position 0 fails the check (it is not after t); a sequence the page then takes from a
    link (the class's move, a solution shown: the page reads its link again) is compared with itself, not with the
    snapshot of the student's own vectors."""
    from ui.page_state import LOADED_KEY

    at = open_page("pages/causal.py")
    at.text_area(key="causal_seq_text_q").set_value("9 9 9; 0 0 0; 0 0 0; 0 0 0; 0 0 0; 0 0 0").run()
    assert any("Check failed" in e.value for e in at.error)
    at.session_state[LOADED_KEY] = set()  # what following the class does before the page runs (classroom_student)
    at.run()
    assert not any("Check failed" in e.value for e in at.error)
    np.testing.assert_array_equal(at.session_state["causal_before"].q, at.session_state["causal_seq"].q)
