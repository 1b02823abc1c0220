"""Predict the row (a question of kind `row`, asked from the Playground): each student sets a whole row of weights
with one slider per key, sees its sum, and sends it scaled to sum to 1; the teacher sees the class's rows and their
mean row as a small heatmap, and on Reveal the true row beside them and the class's most common miss in words."""

from __future__ import annotations

import numpy as np
import pytest

from attention import attention_steps
from classroom.questions import prompt_text
from tests.apptest_helpers import chart_by_key, every_text, heatmap_z, open_page
from tests.classroom_asking import ask, reveal, store
from ui.classroom_questions import common_miss, row_question
from ui.safe_text import escape_markdown


def set_row(student, question, weights) -> None:
    student.run()
    for j, w in enumerate(weights):
        student.slider(key=f"class_answer_{question.id}_{j}").set_value(w)
    student.run()


def send(student, question) -> None:
    student.button(key=f"class_send_{question.id}").click().run()
    assert not student.exception


def test_the_class_predicts_a_row_and_the_teacher_sees_every_row_the_mean_and_the_truth(room):
    teacher, student, code = room
    other = open_page("pages/playground.py", query={"room": code})
    teacher.switch_page("pages/playground.py").run()
    seq = teacher.session_state["seq"]
    n = len(seq.tokens)
    question = ask(teacher, "row", query=2)
    truth = attention_steps(seq.q, seq.k, seq.v, causal=False, scale=True).weights[2]
    np.testing.assert_allclose(question.truth, truth, atol=1e-12)
    assert (
        question.body["n"] == n and "query 2" in prompt_text(question.body) and "no mask" in prompt_text(question.body)
    )
    first = [0.0] * n
    first[0], first[1] = 0.5, 0.3  # sums to 0.8: sent as 0.625, 0.375
    set_row(student, question, first)
    assert "Sum: 0.80" in every_text(student) and "sum to 1: 0.62, 0.37, 0.00" in every_text(student)
    send(student, question)
    key = teacher.session_state["class_teacher_key"]
    sent = store().results(code, key, question.id).values
    np.testing.assert_allclose(sent, [[0.625, 0.375] + [0.0] * (n - 2)], atol=1e-12)
    set_row(other, question, [0.0] * n)
    assert "Give at least one key some weight" in every_text(other)
    send(other, question)  # nothing to scale: nothing sent
    assert len(store().results(code, key, question.id).values) == 1
    other.slider(key=f"class_answer_{question.id}_{n - 1}").set_value(1.0).run()
    send(other, question)
    teacher.run()
    figure = chart_by_key(teacher, f"class_dist_{question.id}")
    rows = figure["data"][0]["z"]
    assert figure["data"][0]["y"] == ["answer 1", "answer 2", "class mean"]
    np.testing.assert_allclose(rows[2], np.mean(rows[:2], axis=0))
    assert rows[1][n - 1] == 1.0
    reveal(teacher, question)
    figure = chart_by_key(teacher, f"class_dist_{question.id}")
    assert figure["data"][0]["y"][-1] == "true row"
    np.testing.assert_allclose(figure["data"][0]["z"][-1], truth, atol=1e-12)
    miss = common_miss(question.body, sent + [[0.0] * (n - 1) + [1.0]], question.truth)
    assert miss and escape_markdown(miss) in every_text(teacher)
    student.run()
    assert len(student.error) == 1 and "each weight within 0.1" in student.error[0].value


def test_the_row_is_hidden_on_every_screen_while_the_class_predicts_it(room):
    teacher, student, code = room
    teacher.switch_page("pages/playground.py").run()
    ask(teacher, "row", query=2)
    for screen in (teacher, student):
        screen.run()
        z = heatmap_z(chart_by_key(screen, "pg_heatmap"))
        assert np.isnan(z[2]).all() and not np.isnan(np.delete(z, 2, axis=0)).any(), "the asked row only"


def test_the_most_common_miss_names_the_key_the_students_and_why():
    from attention.sequence import TokenSequence

    q = np.array([[1.0, 0.0], [0.0, 1.0]])
    k = np.array([[2.0, 0.0], [-1.0, 0.0], [0.0, 0.5]])
    seq = TokenSequence(("a", "b", "c"), np.vstack([q, [[1.0, 1.0]]]), k, k)
    body, truth = row_question(seq, 0, causal=False, scale=False, source={})
    assert body["source"]["scores"] == [2.0, -1.0, 0.0]
    over_b = [[0.5, 0.4, 0.1], [0.6, 0.3, 0.1], [0.8, 0.15, 0.05]]  # the truth: 0.84, 0.04, 0.11
    said = common_miss({**body, "tolerance": 0.1}, over_b, truth)
    assert said == (  # k_1: 3 over by more than 0.1; k_0: only 2 under
        "3 of 3 gave k_1 'b' more weight than it gets by more than 0.1: 0.28 on average, 0.04 in truth. Its score, "
        "-1.00, is 3.00 below the row's largest, 2.00."
    )
    assert common_miss({**body, "tolerance": 0.1}, [truth], truth) is None
    near = [[round(truth[0] - 0.09, 6), round(truth[1] + 0.05, 6), round(truth[2] + 0.04, 6)]]
    assert common_miss({**body, "tolerance": 0.1}, near, truth) is None  # every weight within the tolerance
    top = common_miss({**body, "tolerance": 0.1}, [[1.0, 0.0, 0.0]], truth)
    assert top.startswith("1 of 1 gave k_0 'a' more weight") and "the next is only 2.00 below it" in top
    k = np.array([[2.0, 0.0], [0.0, 2.0], [0.0, 0.5]])  # k_0 and k_1 score 2 each for q = (1, 1): a tie
    both = TokenSequence(("a", "b", "c"), np.array([[1.0, 1.0]] * 3), k, k)
    tied, tied_truth = row_question(both, 0, causal=False, scale=False, source={})
    said = common_miss({**tied, "tolerance": 0.1}, [[1.0, 0.0, 0.0]], tied_truth)
    assert "Its score, 2.00, ties for the row's largest: the tied keys share the weight." in said
    assert "next is only" not in said
    masked, masked_truth = row_question(seq, 1, causal=True, scale=False, source={})  # q_1 = (0, 1): scores 0, 0
    assert masked["source"]["scores"] == [0.0, 0.0, None] and masked_truth == [0.5, 0.5, 0.0]
    said = common_miss(masked, [[0.4, 0.3, 0.3]], masked_truth)
    assert said == (  # k_2 and k_1 are each missed by one answer: k_2's gap, 0.30, is the larger
        "1 of 1 gave k_2 'c' more weight than it gets by more than 0.1: 0.30 on average, 0.00 in truth. It is "
        "masked: its score is −∞, so its weight is exactly 0."
    )
    with pytest.raises(ValueError, match="outside"):
        row_question(seq, 3, causal=False, scale=False, source={})


def test_the_figures_shared_between_sessions_give_no_answer_and_no_edit_to_another_screen(room):
    """Figures are built once per inputs and shared by every session of the process (ui.charts.cached_figure): a
    screen outside the room that drew the same view first leaves the full heatmap in that cache, and one that edits
    its own vectors leaves its own. Neither reaches the class: the asked row stays hidden on the student's screen,
    whose weights are the teacher's; the screen outside keeps its full heatmap, and the editor its own weights."""
    from attention.sequence import TokenSequence

    teacher, student, code = room
    teacher.switch_page("pages/playground.py").run()
    seq = teacher.session_state["seq"]
    truth = attention_steps(seq.q, seq.k, seq.v, causal=False, scale=True).weights
    alone = open_page("pages/playground.py")  # the same view, outside the room: drawn first, in full
    np.testing.assert_allclose(heatmap_z(chart_by_key(alone, "pg_heatmap")), truth, atol=1e-12)
    edited = TokenSequence(seq.tokens, seq.q[::-1].copy(), seq.k, seq.v)
    editor = open_page("pages/playground.py", state={"seq": edited})
    own = attention_steps(edited.q, edited.k, edited.v, causal=False, scale=True).weights
    np.testing.assert_allclose(heatmap_z(chart_by_key(editor, "pg_heatmap")), own, atol=1e-12)
    assert not np.allclose(own, truth)
    ask(teacher, "row", query=2)
    student.run()
    z = heatmap_z(chart_by_key(student, "pg_heatmap"))
    assert np.isnan(z[2]).all(), "the asked row, hidden"
    np.testing.assert_allclose(np.delete(z, 2, axis=0), np.delete(truth, 2, axis=0), atol=1e-12)  # the teacher's
    alone.run()
    np.testing.assert_allclose(heatmap_z(chart_by_key(alone, "pg_heatmap")), truth, atol=1e-12)
    editor.run()
    np.testing.assert_allclose(heatmap_z(chart_by_key(editor, "pg_heatmap")), own, atol=1e-12)
