"""The pitfalls page's questions (ui/questions/pitfalls.py): the key that wins a row of softmax(K Qᵀ/√d_k), and what
a row sums to when the future is masked after the softmax, checked against plain numpy written here from the
definitions; the page hides the part that answers the open question, on every screen, until the reveal."""

from __future__ import annotations

import numpy as np
import pytest

from attention.sequence import TokenSequence
from classroom.questions import option_texts, prompt_text
from lessons.examples import random_example
from lessons.pitfalls import key_query_attention, transpose_hand_example
from tests.apptest_helpers import chart_by_key, heatmap_z
from tests.apptest_helpers import table_with_column as frame
from tests.classroom_asking import ask, hidden_on, reveal
from ui.questions.pitfalls import leaked_row_sum, questions, transpose_argmax

PAGE = "pages/pitfalls.py"
HAND = transpose_hand_example()[0].seq
CHANGED_SEQ = random_example(5, 3, 2, seed=4).seq  # n = 5, d_k = 3: Q K does not run, K Qᵀ does


def softmax_rows(scores: np.ndarray) -> np.ndarray:
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    return weights / weights.sum(axis=1, keepdims=True)


def numpy_kq(seq: TokenSequence) -> np.ndarray:
    """softmax(K Qᵀ / √d_k), from the definition."""
    return softmax_rows(seq.k @ seq.q.T / np.sqrt(seq.q.shape[1]))  # (n, n)


def numpy_right(seq: TokenSequence) -> np.ndarray:
    """softmax(Q Kᵀ / √d_k), no mask."""
    return softmax_rows(seq.q @ seq.k.T / np.sqrt(seq.q.shape[1]))  # (n, n)


@pytest.mark.parametrize(("seq", "query"), [(HAND, 0), (HAND, 1), (HAND, 2), (CHANGED_SEQ, 0), (CHANGED_SEQ, 3)])
def test_the_winning_key_is_the_argmax_of_k_q_transposed(seq, query):
    body, truth = transpose_argmax(seq, query)
    expected = int(np.argmax(numpy_kq(seq)[query]))
    assert truth == [expected]
    assert expected == int(np.argmax((seq.q @ seq.k.T)[:, query]))  # column `query` of the right scores
    assert body["kind"] == "choice" and len(option_texts(body)) == seq.n
    tok = seq.tokens
    for named in (" ".join(tok), "softmax(K Qᵀ/√d_k)", "no mask", f"query {query} ('{tok[query]}')"):
        assert named in prompt_text(body)
    assert len(prompt_text(body)) <= 300


def test_the_kq_prompt_asks_for_a_column_of_the_row_the_code_uses_as_the_querys_weights():
    """Row i of K Qᵀ is key i against every query; the code still weighs the values with it as query i's weights,
    column j weighing v_j: the prompt asks which column of that row is largest, not which key a query picks."""
    body, truth = transpose_argmax(CHANGED_SEQ, 1)
    assert "uses its row 1 as the weights of query 1" in prompt_text(body)
    assert "Which column (key position) is largest there?" in prompt_text(body)
    assert "In the weights it gives query" not in prompt_text(body)
    scores, weights, output = key_query_attention(CHANGED_SEQ.q, CHANGED_SEQ.k, CHANGED_SEQ.v)
    np.testing.assert_allclose(output[1], weights[1] @ CHANGED_SEQ.v)  # row 1 weighs the values for output 1
    np.testing.assert_allclose(scores[1], CHANGED_SEQ.k[1] @ CHANGED_SEQ.q.T / np.sqrt(3))  # key 1, every query
    assert truth == [int(np.argmax(weights[1]))] and option_texts(body)[truth[0]].startswith(f"k_{truth[0]} ")
    longest = random_example(16, 3, 2, seed=1).seq.with_tokens(tuple(f"{i:02d}" + "x" * 22 for i in range(16)))
    assert len(prompt_text(transpose_argmax(longest, 15)[0])) <= 300


def test_on_the_hand_example_k_q_transposed_picks_the_key_after_not_before():
    picks = [transpose_argmax(HAND, i)[1] for i in range(3)]
    assert picks == [[1], [2], [0]]  # the right product picks (2, 0, 1): the bug is caught by the hand example
    assert [int(np.argmax(row)) for row in numpy_right(HAND)] == [2, 0, 1]


@pytest.mark.parametrize(("seq", "query"), [(HAND, 1), (CHANGED_SEQ, 1), (CHANGED_SEQ, 2), (CHANGED_SEQ, 3)])
def test_the_row_sum_is_what_is_left_of_the_unmasked_row(seq, query):
    body, truth = leaked_row_sum(seq, query)
    full = numpy_right(seq)[query]
    assert truth == pytest.approx(full[: query + 1].sum(), abs=1e-12)
    assert truth < 1 - 0.01  # something leaked: the answer is not the 1 a correct mask gives
    assert body["kind"] == "number" and (body["lo"], body["hi"], body["tolerance"]) == (0.0, 1.0, 0.05)
    tok = seq.tokens
    for named in (" ".join(tok), "1/√d_k", "softmax over every key", f"row {query} ('{tok[query]}')"):
        assert named in prompt_text(body)
    assert len(prompt_text(body)) <= 300


def test_the_answers_the_page_already_says_are_not_asked_and_bad_queries_are_refused():
    # row 0's sum is its weight on key 0 (1 / (2 + e^√3) on paper): one cell of the Right heatmap, on screen
    assert numpy_right(HAND)[0, 0] == pytest.approx(1 / (2 + np.exp(np.sqrt(3))), abs=1e-12)
    with pytest.raises(ValueError, match="row 0 keeps only its weight on key 0"):
        leaked_row_sum(HAND, 0)
    with pytest.raises(ValueError, match="last row has no future"):
        leaked_row_sum(HAND, 2)
    with pytest.raises(ValueError, match="outside 0..2"):
        transpose_argmax(HAND, 3)
    one = TokenSequence(("only",), np.ones((1, 2)), np.ones((1, 2)), np.ones((1, 1)))
    for build in (transpose_argmax, leaked_row_sum):
        with pytest.raises(ValueError, match="one position"):
            build(one, 0)
    kq, leak = questions()
    values = {"seq": CHANGED_SEQ, "seed": 0}
    assert list(kq.picks[0].options(values)) == [0, 1, 2, 3, 4]
    assert list(leak.picks[0].options(values)) == [1, 2, 3]  # neither row 0 nor the last row is offered
    assert list(leak.picks[0].options({"seq": HAND, "seed": 0})) == [1]
    with pytest.raises(ValueError, match="one position"):
        leak.build({"seq": one, "seed": 0}, {"query": 0})
    two = random_example(2, 3, 2, seed=1).seq  # row 0 prints its sum, row 1 has no future: query 0 says why
    assert list(leak.picks[0].options({"seq": two, "seed": 0})) == [0]
    with pytest.raises(ValueError, match="at least 3 positions"):
        leak.build({"seq": two, "seed": 0}, {"query": 0})


def test_asked_in_a_room_the_wrong_products_are_hidden_until_the_reveal(room):
    teacher, student, _ = room
    teacher.switch_page("pages/pitfalls.py").run()
    student.run()
    assert [t.value for t in student.title] == ["Pitfalls"]
    question = ask(teacher, "kq", query=0)
    assert question.truth == [1]
    for screen in (student, teacher):
        screen.run()
        assert not screen.exception and hidden_on(screen)
        for key in ("pitfalls_wrong_kq", "pitfalls_wrong"):  # with Q = I, Q K = K Qᵀ: both show the answer
            with pytest.raises(KeyError):
                chart_by_key(screen, key)
        with pytest.raises(StopIteration):
            frame(screen, "wrong: K Qᵀ")  # its hand-example row names the keys K Qᵀ picks
        chart_by_key(screen, "pitfalls_right")  # what the class reasons from stays
        frame(screen, "row sum (bug)")  # the other question's part stays
    reveal(teacher, question)
    student.run()
    assert not student.exception and not hidden_on(student)
    np.testing.assert_allclose(heatmap_z(chart_by_key(student, "pitfalls_wrong_kq")), numpy_kq(HAND), atol=1e-12)
    assert "queries pick keys (1, 2, 0)" in frame(student, "wrong: K Qᵀ")["wrong: K Qᵀ"].iloc[2]


def test_asked_in_a_room_the_leak_table_is_hidden_until_the_reveal(room):
    teacher, student, _ = room
    teacher.switch_page("pages/pitfalls.py").run()
    student.run()
    question = ask(teacher, "leak", query=1)
    assert question.truth == pytest.approx(numpy_right(HAND)[1, :2].sum(), abs=1e-12)
    for screen in (student, teacher):
        screen.run()
        assert not screen.exception and hidden_on(screen)
        with pytest.raises(StopIteration):
            frame(screen, "row sum (bug)")
        chart_by_key(screen, "pitfalls_wrong_kq")  # the other question's answer is not hidden
    reveal(teacher, question)
    student.run()
    assert not student.exception and not hidden_on(student)
    assert frame(student, "row sum (bug)")["row sum (bug)"].size == 6  # the Causal masking page's sequence
