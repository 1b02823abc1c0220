"""The causal page's questions (ui/questions/causal.py): the weight a query gives a key with the mask on, and which
outputs change when one token changes, checked against plain numpy written here from the definitions; the page
hides the part that answers the open question, on every screen, until the reveal."""

from __future__ import annotations

import numpy as np
import pytest

from attention.sequence import TokenSequence
from classroom.questions import option_texts, prompt_text
from lessons.examples import random_example
from lessons.pitfalls import leak_example, randomise_at
from tests.apptest_helpers import chart_by_key, every_text, heatmap_z
from tests.apptest_helpers import table_with_column as frame
from tests.classroom_asking import ask, hidden_on, reveal
from ui.questions.causal import masked_weight, outputs_question, questions

PAGE = "pages/causal.py"
CHANGED_SEQ = random_example(5, 3, 2, seed=11).seq


def numpy_weights(seq: TokenSequence, causal: bool) -> np.ndarray:
    """softmax(Q Kᵀ / √d_k + M) from the definition, M = −∞ above the diagonal when `causal`."""
    scores = seq.q @ seq.k.T / np.sqrt(seq.q.shape[1])  # (n, n)
    if causal:
        scores = np.where(np.tril(np.ones(scores.shape, dtype=bool)), scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    return weights / weights.sum(axis=1, keepdims=True)


def numpy_moved(seq: TokenSequence, p: int, causal: bool) -> set[int]:
    """The outputs that move at all when row p of q, k and v gets this test's own new numbers."""
    rng = np.random.default_rng(2024)
    q, k, v = (a.copy() for a in (seq.q, seq.k, seq.v))
    for a in (q, k, v):
        a[p] += rng.uniform(0.5, 1.5, a.shape[1])
    new = TokenSequence(seq.tokens, q, k, v)
    before, after = numpy_weights(seq, causal) @ seq.v, numpy_weights(new, causal) @ new.v  # (n, d_v)
    return {int(i) for i in np.flatnonzero(np.any(before != after, axis=1))}


@pytest.mark.parametrize(
    ("seq", "query", "key"), [(leak_example().seq, 3, 1), (CHANGED_SEQ, 3, 3), (CHANGED_SEQ, 2, 0)]
)
def test_the_weight_is_the_masked_softmax_and_the_mask_off_row_renormalised(seq, query, key):
    body, truth = masked_weight(seq, query, key)
    assert truth == pytest.approx(numpy_weights(seq, True)[query, key], abs=1e-12)
    off = numpy_weights(seq, False)[query]
    assert truth == pytest.approx(off[key] / off[: query + 1].sum(), abs=1e-12)  # the idea the question asks about
    assert truth > off[key] + 0.01  # the mask changed the weight: the mask-off heatmap does not print the answer
    assert body["kind"] == "number" and (body["lo"], body["hi"], body["tolerance"]) == (0.0, 1.0, 0.05)
    tok = seq.tokens
    pair = (f"query {query} '{tok[query]}'", f"key {key} '{tok[key]}'")
    for named in (" ".join(tok), "causal mask on", "1/√d_k", *pair):
        assert named in prompt_text(body)
    assert len(prompt_text(body)) <= 300


def test_the_weights_the_page_already_says_are_not_asked():
    seq = leak_example().seq
    with pytest.raises(ValueError, match="query 0 sees only itself"):
        masked_weight(seq, 0, 0)
    with pytest.raises(ValueError, match="key 4 is after query 2"):
        masked_weight(seq, 2, 4)
    with pytest.raises(ValueError, match="from 0 to 5"):
        masked_weight(seq, 6, 0)
    (weight, _) = questions()
    values = {"seq": seq, "t": 2, "seed": 0}
    assert list(weight.picks[0].options(values)) == [1, 2, 3, 4, 5]  # query 0 is not offered
    one = TokenSequence(("only",), np.ones((1, 2)), np.ones((1, 2)), np.ones((1, 1)))
    with pytest.raises(ValueError, match="query 0 sees only itself"):
        weight.build({"seq": one, "t": 0, "seed": 0}, {"query": 0, "key": 0})


@pytest.mark.parametrize(("seq", "p", "causal", "label"), [
    (leak_example().seq, 2, True, "outputs 2…5"),
    (leak_example().seq, 2, False, "every output, 0…5"),
    (leak_example().seq, 5, True, "output 5 only"),
    (CHANGED_SEQ, 0, True, "outputs 0…4"),
    (CHANGED_SEQ, 3, True, "outputs 3…4"),
])  # fmt: skip
def test_the_outputs_that_change_are_the_token_and_the_ones_after_it_with_the_mask(seq, p, causal, label):
    body, truth = outputs_question(seq, p, causal, seed=7)
    moved = numpy_moved(seq, p, causal)
    assert moved == (set(range(p, seq.n)) if causal else set(range(seq.n)))
    assert [option_texts(body)[i] for i in truth] == [label]
    assert len(set(option_texts(body))) == len(option_texts(body)) >= 4 and all(
        len(o) <= 80 for o in option_texts(body)
    )
    tok = seq.tokens
    mask = "causal mask on" if causal else "mask off"
    for named in (" ".join(tok), mask, "1/√d_k", f"token {p} '{tok[p]}'", "its own random draw"):
        assert named in prompt_text(body)
    assert "seed" not in prompt_text(body)  # not the page's seed box: the question draws its own numbers


def test_the_change_is_token_p_alone_and_bad_tokens_are_refused():
    seq = leak_example().seq
    q, k, v = randomise_at(seq.q, seq.k, seq.v, 2, seed=3)
    for new, old in ((q, seq.q), (k, seq.k), (v, seq.v)):
        rows = np.flatnonzero(np.any(new != old, axis=1))
        assert rows.tolist() == [2]
    with pytest.raises(ValueError, match="outside 0..5"):
        outputs_question(seq, 6, True, 0)
    one = TokenSequence(("only",), np.ones((1, 2)), np.ones((1, 2)), np.ones((1, 1)))
    with pytest.raises(ValueError, match="single position there is only one output"):
        outputs_question(one, 0, True, 0)
    # the reason is the one output, not that nothing changes: with one position, output 0 does move
    assert numpy_moved(one, 0, True) == {0}


@pytest.mark.parametrize(("p", "causal"), [(2, True), (0, True), (4, False)])
def test_the_answer_and_the_prompt_do_not_depend_on_the_draw(p, causal):
    """The question draws its own new numbers (randomise_at), not the page's Randomise button: whichever draw, the
    same outputs change, and the prompt names no seed the class could look for on the page."""
    seq = leak_example().seq
    asked = [outputs_question(seq, p, causal, seed) for seed in (0, 1, 17, 9999)]
    assert len({tuple(truth) for _, truth in asked}) == 1
    assert len({prompt_text(body) for body, _ in asked}) == 1
    assert {body["source"]["seed"] for body, _ in asked} == {0, 1, 17, 9999}  # kept, to rebuild the question


def test_asked_in_a_room_the_masked_weights_are_hidden_until_the_reveal(room):
    teacher, student, _ = room
    teacher.switch_page("pages/causal.py").run()
    student.run()
    assert [t.value for t in student.title] == ["Causal masking"]
    question = ask(teacher, "weight", query=3, key=1)
    seq = leak_example().seq
    assert question.truth == pytest.approx(numpy_weights(seq, True)[3, 1], abs=1e-12)
    for screen in (student, teacher):
        screen.run()
        assert not screen.exception and hidden_on(screen)
        for key in ("causal_heat_on", "causal_heat_correct"):
            with pytest.raises(KeyError):
                chart_by_key(screen, key)
        chart_by_key(screen, "causal_heat_off")  # what the class reasons from stays
        assert "Nothing has changed since the snapshot" in every_text(screen)  # the other question's part stays
    reveal(teacher, question)
    student.run()
    assert not student.exception and not hidden_on(student)
    np.testing.assert_allclose(heatmap_z(chart_by_key(student, "causal_heat_on")), numpy_weights(seq, True), atol=1e-12)


def test_asked_in_a_room_the_check_is_hidden_until_the_reveal(room):
    teacher, student, _ = room
    teacher.switch_page("pages/causal.py").run()
    student.run()
    assert frame(student, "max |after − before|") is not None
    question = ask(teacher, "changes", token=2, mask=1)
    assert option_texts(question.body)[question.truth[0]] == "outputs 2…5" and len(question.truth) == 1
    for screen in (student, teacher):
        screen.run()
        assert not screen.exception and hidden_on(screen)
        with pytest.raises(StopIteration):
            frame(screen, "max |after − before|")
        with pytest.raises(KeyError):
            chart_by_key(screen, "causal_diff_bars")
        assert "Nothing has changed since the snapshot" not in every_text(screen)
        chart_by_key(screen, "causal_heat_on")  # the other question's answer is not hidden
        assert all(screen.button(key=f"causal_{b}").disabled for b in ("randomise", "snapshot", "restore"))
    reveal(teacher, question)
    student.run()
    assert not student.exception and not hidden_on(student)
    assert "Nothing has changed since the snapshot" in every_text(student)
    chart_by_key(student, "causal_diff_bars")
    assert not student.button(key="causal_randomise").disabled


def test_the_longest_labels_still_fit_a_prompt():
    seq = random_example(16, 3, 2, seed=1).seq.with_tokens(tuple(f"{i:02d}" + "x" * 22 for i in range(16)))
    weight_body, _ = masked_weight(seq, 15, 14)
    changes_body, _ = outputs_question(seq, 15, False, 9999)
    for body in (weight_body, changes_body):
        assert len(prompt_text(body)) <= 300 and "?" in prompt_text(body)
        assert "query 15" in prompt_text(body) or "token 15" in prompt_text(body)
