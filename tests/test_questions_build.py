"""Build it (a question of kind `build`, asked from the Playground): each student edits their own copy of the
vectors towards a goal, checked live on their screen and again by the server when they submit; the teacher sees
how many solved it and the solutions, anonymous, and can show one to the class."""

from __future__ import annotations

from urllib.parse import parse_qsl

import numpy as np
import pytest

from attention import attention_steps
from attention.sequence import TokenSequence
from classroom import errors
from classroom.questions import check_question, check_truth, is_right, prompt_text
from tests.apptest_helpers import chart_by_key, every_text, open_page
from tests.classroom_asking import ask, store
from ui.questions.playground import check_goal

TOKENS = ("a", "b", "c")


def values(q, k, causal=False, scale=True) -> dict:
    q, k = np.array(q, dtype=float), np.array(k, dtype=float)
    return {"seq": TokenSequence(TOKENS[: len(q)], q, k, k.copy()), "causal": causal, "scale": scale}


def attend_goal(query=2, key=0, causal=False, scale=True) -> dict:
    return {"name": "attend", "query": query, "key": key, "at_least": 0.8, "causal": causal, "scale": scale}


def test_the_attend_goal_is_solved_exactly_when_the_weight_reaches_its_bound():
    far = values([[0, 0], [0, 0], [3, 0]], [[3, 0], [0, 0], [0, 0]])
    weight = attention_steps(far["seq"].q, far["seq"].k, far["seq"].v).weights[2, 0]
    assert weight >= 0.8
    assert check_goal(attend_goal(), far) == (True, f"solved: {weight:.2f} ≥ 0.8")
    near = values([[0, 0], [0, 0], [1, 0]], [[1, 0], [0, 0], [0, 0]])
    weight = attention_steps(near["seq"].q, near["seq"].k, near["seq"].v).weights[2, 0]
    solved, said = check_goal(attend_goal(), near)
    assert weight < 0.8 and not solved and f"{weight:.2f}, below 0.8" in said
    assert check_goal(attend_goal(), {**far, "scale": False})[1].startswith("not yet: set the switches")
    short = values([[1, 0], [0, 1]], [[1, 0], [0, 1]])
    assert "needs a query 2 and a key 0" in check_goal(attend_goal(), short)[1]


def test_the_previous_and_tie_goals():
    goal = {"name": "previous", "causal": True, "scale": True}
    # every query i >= 1 matches key i - 1 best: k_{i-1} = q_i
    shifted = values([[0, 0], [4, 0], [0, 4]], [[4, 0], [0, 4], [0, 0]], causal=True)
    assert check_goal(goal, shifted) == (True, "solved: every query from 1 to 2 attends most to the key just before it")
    same = values([[0, 0], [4, 0], [0, 4]], [[0, 0], [4, 0], [0, 4]], causal=True)
    solved, said = check_goal(goal, same)
    assert not solved and said == "not yet: query 1 attends most to key 1, not to key 0"
    tie = {"name": "tie", "query": 1, "causal": False, "scale": True}
    tied = values([[0, 0], [1, 1], [0, 0]], [[1, 0], [0, 1], [-1, -1]])
    assert check_goal(tie, tied)[0]
    apart = values([[0, 0], [1, 0], [0, 0]], [[1, 0], [0, 1], [-1, -1]])
    assert not check_goal(tie, apart)[0]


@pytest.mark.parametrize(
    "value",
    [
        {"view": "/?a=1", "solved": "yes", "said": "solved"},  # a forged verdict: not the server's true or false
        {"view": "/?a=1", "solved": 1, "said": "solved"},
        {"view": "//evil.example/x", "solved": True, "said": "solved"},
        {"view": "https://evil.example/", "solved": True, "said": "solved"},
        {"view": "/?a=\n1", "solved": True, "said": "solved"},
        {"view": "/?a=1", "solved": True, "said": ""},
        {"view": "/?a=1", "solved": True, "said": "x" * 301},
        {"view": "/?a=1", "solved": True},
        {"view": "/?a=1", "solved": True, "said": "s", "name": "Ada"},
        "/?a=1",
        None,
    ],
)
def test_a_solution_is_refused_unless_it_is_a_view_and_the_servers_verdict(value):
    from classroom.questions import check_answer

    body = check_question({"kind": "build", "prompt": "Build it", "goal": attend_goal()})
    with pytest.raises(errors.InvalidAnswer):
        check_answer(body, value)


def test_a_solution_is_a_view_of_the_challenges_page():
    from classroom.questions import check_answer

    for page, ok, other in (("playground", "/?q=1", "/heads?d_model=8"), ("causal", "/causal?t=1", "/?q=1")):
        source = {"page": page, "question": "build_x"}
        body = check_question({"kind": "build", "prompt": "Build it", "goal": attend_goal(), "source": source})
        assert check_answer(body, {"view": ok, "solved": True, "said": "solved"})["view"] == ok
        with pytest.raises(errors.InvalidAnswer, match=f"a view of the challenge's page \\({page}\\)"):
            check_answer(body, {"view": other, "solved": True, "said": "solved"})


def test_a_build_question_has_a_goal_and_no_true_value():
    body = check_question({"kind": "build", "prompt": "Build it", "goal": attend_goal()})
    with pytest.raises(errors.InvalidQuestion, match="goal"):
        check_question({"kind": "build", "prompt": "Build it"})
    with pytest.raises(errors.InvalidAnswer, match="no true value"):
        check_truth(body, True)
    assert is_right(body, None, {"view": "/", "solved": True, "said": "s"}) is True
    assert is_right(body, None, {"view": "/", "solved": False, "said": "s"}) is False


def test_a_class_builds_the_teacher_sees_the_solutions_and_shows_one(room):
    teacher, student, code = room
    other = open_page("pages/playground.py", query={"room": code})
    teacher.switch_page("pages/playground.py").run()
    question = ask(teacher, "build_attend", query=2, key=0)
    assert question.body["kind"] == "build" and question.body["goal"]["query"] == 2 and question.truth is None
    for screen in (student, other):
        screen.run()
        assert "Not yet\\: query 2 gives key 0 a weight of" in every_text(screen)
        assert not screen.toggle(key="pg_causal").disabled  # nothing is held: each student edits their own page
    student.text_area(key="seq_text_q").set_value("0 0; 0 0; 5 0; 0 0").run()
    student.text_area(key="seq_text_k").set_value("5 0; 0 0; 0 0; 0 0").run()
    assert [s.value for s in student.success if s.value.startswith("Solved")] == ["Solved\\: 1.00 ≥ 0.8"]
    student.button(key=f"class_submit_{question.id}").click().run()
    other.button(key=f"class_submit_{question.id}").click().run()
    assert not student.exception and not other.exception
    key = teacher.session_state["class_teacher_key"]
    solutions = store().results(code, key, question.id).values
    assert [s["solved"] for s in solutions] == [True, False]
    mine = dict(parse_qsl(solutions[0]["view"].partition("?")[2]))
    assert solutions[0]["view"].startswith("/?") and "5" in mine["q"]  # the page's link, with the student's vectors
    teacher.run()
    assert "**1** solved · **1** submitted, not solved yet" in every_text(teacher)
    assert "Solution 1 · solved" in every_text(teacher) and "Solution 2 · not yet" in every_text(teacher)
    teacher.button(key=f"class_show_{question.id}_0").click().run()
    teacher.run()
    assert not teacher.exception and "Solution 1 · solved · shown" in every_text(teacher)
    assert "Solution 2 · not yet · shown" not in every_text(teacher)
    np.testing.assert_array_equal(teacher.session_state["seq"].q[2], [5.0, 0.0])  # the projector shows it
    assert store().current_view(code) == solutions[0]["view"]
    other.run()
    other.run()
    np.testing.assert_array_equal(other.session_state["seq"].k[0], [5.0, 0.0])  # and so does every screen
    assert store().results(code, key, question.id).question.revealed
    student.run()
    assert [s.value for s in student.success if "challenge is closed" in s.value] == [
        "The challenge is closed. Your solution: solved\\: 1.00 ≥ 0.8. Every screen shows your solution now "
        "(without your name)."
    ]
    other.run()
    assert "The page shows a classmate's solution, chosen by the teacher (no name), not yours" in every_text(other)


def test_the_leak_goal_is_solved_exactly_when_the_bug_loses_that_much_of_the_querys_weight():
    from lessons.pitfalls import mask_after_softmax
    from ui.questions.causal import check_leak

    goal = {"name": "leak", "query": 0, "at_least": 0.5}
    ahead = values([[4, 0], [0, 0], [0, 0]], [[0, 0], [4, 0], [0, 0]])  # query 0 looks at key 1, after it
    leak = mask_after_softmax(ahead["seq"].q, ahead["seq"].k, ahead["seq"].v).leak[0]
    row = "query 0's leak (row 0 of the leak table, from 0)"
    assert leak >= 0.5 and check_leak(goal, ahead) == (True, f"solved: {row} is {leak:.3f} ≥ 0.5")
    behind = values([[4, 0], [0, 0], [0, 0]], [[4, 0], [0, 0], [0, 0]])  # it looks at itself: little to lose
    leak = mask_after_softmax(behind["seq"].q, behind["seq"].k, behind["seq"].v).leak[0]
    solved, said = check_leak(goal, behind)
    assert leak < 0.5 and not solved and said == f"not yet: {row} is {leak:.3f}, below 0.5"
    even = values([[0, 0], [0, 0], [0, 0]], [[0, 0], [0, 0], [0, 0]])  # q·k = 0 everywhere: leak 2/3 = 0.6667
    assert check_leak({**goal, "at_least": 0.66671}, even)[1] == f"not yet: {row} is 0.666667, below 0.66671"
    assert "needs a token after query 2" in check_leak({**goal, "query": 2}, behind)[1]


def test_a_class_builds_a_leak_on_the_causal_page(room):
    """The second page with a challenge: each student edits their own copy of the causal page's sequence."""
    teacher, student, code = room
    teacher.switch_page("pages/causal.py").run()
    question = ask(teacher, "build_leak", query=4)
    assert question.body["goal"] == {"name": "leak", "query": 4, "at_least": 0.5}
    assert "leaks at least 0.5 of query 4's weight (row 4 of section 3's leak table" in prompt_text(question.body)
    student.run()
    assert [t.value for t in student.title] == [t.value for t in teacher.title]  # the class follows onto the page
    assert "Opening the challenge on this page" in every_text(student)  # its bar ran before the page's first run
    student.switch_page("pages/causal.py")  # AppTest runs the page it was opened on unless told: as the browser is
    student.run()  # the watcher's redraw of the bar, once that run has ended
    assert "Not yet\\: query 4's leak (row 4 of the leak table, from 0) is 0.071, below 0.5" in every_text(student)
    student.text_area(key="causal_seq_text_q").set_value("0 0 0; 0 0 0; 0 0 0; 0 0 0; 5 0 0; 0 0 0").run()
    student.text_area(key="causal_seq_text_k").set_value("0 0 0; 0 0 0; 0 0 0; 0 0 0; 0 0 0; 5 0 0").run()
    assert [s.value for s in student.success if s.value.startswith("Solved")] == [
        "Solved\\: query 4's leak (row 4 of the leak table, from 0) is 1.000 ≥ 0.5"
    ]
    student.button(key=f"class_submit_{question.id}").click().run()
    assert not student.exception
    key = teacher.session_state["class_teacher_key"]
    (solution,) = store().results(code, key, question.id).values
    assert solution["solved"] and solution["view"].startswith("/causal?")
    teacher.run()
    assert "**1** solved" in every_text(teacher) and "Solution 1 · solved" in every_text(teacher)
    assert not teacher.exception
    laptop = open_page("pages/class.py")  # another tab of the teacher's (a new session, by the cookie)
    laptop.session_state["class_room"], laptop.session_state["class_role"] = code, "teacher"
    laptop.session_state["class_teacher_key"] = key
    laptop.run()
    assert chart_by_key(laptop, f"class_solution_{question.id}_0")["data"][0]["type"] == "heatmap"  # never ran /causal
    with pytest.raises(ValueError, match="already true on this page"):  # query 0 already leaks 0.84 by default
        ask_refused(teacher, "build_leak", query=0)


def ask_refused(teacher, kind: str, **picks: int) -> None:
    """What the teacher's Ask box says when the choice cannot be asked: raised as the ValueError it says."""
    from ui.classroom_ask import ask_box_key

    teacher.session_state[ask_box_key(teacher.session_state)] = True
    teacher.run()
    teacher.radio(key="class_ask_kind").set_value(kind).run()
    for name, value in picks.items():
        (box,) = [s for s in teacher.selectbox if str(s.key).startswith(f"class_ask_{name}_")]
        box.set_value(value).run()
    said = [w.value for w in teacher.warning if w.value.startswith("Cannot ask this now")]
    if said:
        raise ValueError(said[0].replace("\\", ""))
