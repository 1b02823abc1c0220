"""A whole lesson under AppTest (issue #44): nothing on a student's page or the projected tab shows an open
question's answer, the page stays in the state the question was asked in, a tie is right, closing keeps the
answers for their teacher, signing out, one leading tab, the join card, here-now counts and removed seats, and a
database that stops answering.

Each AppTest is one browser session; they share the store through ATTENTION_DB_URL.
"""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import update

from attention import attention_steps
from classroom.questions import prompt_text
from classroom.schema import students
from harness.postgres import Postgres
from lessons.puzzles import PUZZLES_BY_ID
from tests.apptest_helpers import chart_by_key, every_text, open_page, plotly_values
from ui import classroom_session
from ui.classroom_ask import ask_box_key

CLASS = "pages/class.py"


pytestmark = pytest.mark.usefixtures("class_database")  # tests/conftest.py


def store():
    return classroom_session.store()


def start_room():
    teacher = open_page(CLASS)
    teacher.button(key="class_start").click().run()
    assert not teacher.exception
    return teacher, teacher.session_state["class_room"]


def ask(teacher, page: str, kind: str = "argmax", query: int = 0, key: int = 0):
    """The teacher asks the class from `page` (the Playground or the Predict page)."""
    teacher.switch_page(page).run()
    n = len(teacher.session_state["seq"].tokens) if page.endswith("playground.py") else 3
    teacher.session_state[ask_box_key(teacher.session_state)] = True
    teacher.run()
    if page.endswith("playground.py"):
        teacher.radio(key="class_ask_kind").set_value(kind).run()
    teacher.selectbox(key=f"class_ask_query_{n}").set_value(query).run()
    if kind == "weight":
        teacher.selectbox(key=f"class_ask_key_{n}").set_value(key).run()
    teacher.button(key="class_ask").click().run()
    assert not teacher.exception
    return store().state(teacher.session_state["class_room"]).question


def heatmap_rows(at):
    """The Playground's heatmap: its weights (z), cell texts and hover texts, row by row."""
    fig = chart_by_key(at, "pg_heatmap")
    trace = next(t for t in fig["data"] if t.get("type") == "heatmap")
    return plotly_values(trace["z"]), trace.get("text"), trace["customdata"]


def test_an_open_question_is_hidden_on_every_students_playground_and_the_projected_tab():
    teacher, code = start_room()
    student = open_page("pages/playground.py", query={"room": code})
    west = 3  # the default example's query 3 'west'
    question = ask(teacher, "pages/playground.py", query=west)
    assert prompt_text(question.body).startswith(
        "Playground, tokens 'north east south west' (no mask, scaled by 1/√d_k): which key will query 3 'west'"
    )
    seq = teacher.session_state["seq"]
    weights = attention_steps(seq.q, seq.k, seq.v).weights
    student.run()
    for at in (student, teacher):
        z, text, hover = heatmap_rows(at)
        assert np.isnan(z[west]).all() and not np.isnan(np.delete(z, west, axis=0)).any()
        assert text[west] == ["?"] * len(seq.tokens)
        assert all("hidden until the teacher reveals" in h and "weight =" not in h for h in hover[west])
        assert all(f"weight = {weights[0, j]:.3f}" in hover[0][j] for j in range(len(seq.tokens)))
        assert at.toggle(key="pg_causal").disabled and at.toggle(key="pg_scale").disabled
        assert "stays as" in every_text(at) and "hides the answer" in every_text(at)
    teacher.session_state["pg_steps"] = True  # the seven matrices, opened
    teacher.run()
    tables = [df.value for df in teacher.dataframe]
    assert any((t.iloc[west] == "?").all() for t in tables if t.shape[0] == len(seq.tokens) and "north" in t.columns)
    teacher.button(key=f"class_reveal_{question.id}").click().run()
    student.run()
    for at in (student, teacher):
        z, _, _ = heatmap_rows(at)
        np.testing.assert_allclose(z, weights, atol=1e-12)
        assert not at.toggle(key="pg_causal").disabled


def test_a_query_with_the_same_vector_as_the_asked_one_is_hidden_too():
    # the default example's queries 0 'north' and 1 'east' both look north: row 1 would give row 0's answer away
    teacher, code = start_room()
    student = open_page("pages/playground.py", query={"room": code})
    seq = teacher.session_state["seq"]
    assert np.array_equal(seq.q[0], seq.q[1]) and not np.array_equal(seq.q[0], seq.q[2])
    ask(teacher, "pages/playground.py", query=0)
    student.run()
    for at in (student, teacher):
        z, text, _ = heatmap_rows(at)
        assert np.isnan(z[[0, 1]]).all() and not np.isnan(z[[2, 3]]).any()
        assert text[1] == ["?"] * len(seq.tokens)


def test_the_page_stays_in_the_state_the_question_was_asked_in_until_the_reveal():
    teacher, code = start_room()
    student = open_page("pages/playground.py", query={"room": code})
    question = ask(teacher, "pages/playground.py", kind="weight", query=2, key=1)
    assert prompt_text(question.body).startswith(
        "Playground, tokens 'north east south west' (no mask, scaled by 1/√d_k): what weight will query 2"
    )
    assert "causal=0" in question.body["view"] and store().current_view(code) == question.body["view"]
    student.run()
    student.session_state["pg_causal"] = True  # a student turning the mask on anyway (the switch is disabled)
    student.run()
    assert student.session_state["pg_causal"] is False and student.toggle(key="pg_causal").value is False
    teacher.switch_page("pages/heads.py").run()  # the teacher looks elsewhere: the class stays
    assert store().current_view(code) == question.body["view"]
    student.run()
    assert [t.value for t in student.title] == ["Attention playground"]
    assert "the class stays on the page it was asked on" in every_text(teacher)
    teacher.switch_page("pages/playground.py").run()
    teacher.button(key=f"class_reveal_{question.id}").click().run()
    teacher.switch_page("pages/heads.py").run()  # revealed: the class follows again
    student.run()
    assert [t.value for t in student.title] == [t.value for t in teacher.title]


def test_a_student_who_stopped_following_is_gathered_by_a_question_and_cannot_leave_it():
    teacher, code = start_room()
    student = open_page("pages/playground.py", query={"room": code})
    student.button(key="class_unfollow").click().run()
    teacher.switch_page("pages/heads.py").run()
    question = ask(teacher, "pages/playground.py", query=1)
    student.run()
    assert "following the teacher" in every_text(student)
    assert student.button(key="class_unfollow").disabled
    assert np.isnan(heatmap_rows(student)[0][1]).all()
    assert question is not None


def test_the_predict_pages_own_check_waits_for_the_class():
    teacher, code = start_room()
    student = open_page("pages/predict.py", query={"room": code})
    question = ask(teacher, "pages/predict.py", query=1)
    student.run()
    assert student.selectbox(key="predict_puzzle").disabled
    for i in range(3):
        student.selectbox(key=f"predict_guess_0_3_{i}").set_value(0).run()
    assert student.button(key="predict_reveal").disabled
    assert "waits for the class's" in every_text(student)
    puzzle = PUZZLES_BY_ID[student.session_state["predict_puzzle"]]
    seq = puzzle.seq  # the page's own record of a reveal (pages/predict.py, fingerprint), as if pressed before
    student.session_state["predict_revealed"] = (
        puzzle.id,
        seq.tokens,
        seq.q.tobytes(),
        seq.q.shape,
        seq.k.tobytes(),
        seq.k.shape,
    )
    student.run()
    assert not [c for c in student.get("plotly_chart") if c.proto.id.endswith("-predict_heatmap")]
    teacher.switch_page("pages/predict.py").run()
    assert teacher.button(key="predict_reveal").disabled  # the projected tab's own check waits too
    teacher.button(key=f"class_reveal_{question.id}").click().run()
    student.run()
    assert [c for c in student.get("plotly_chart") if c.proto.id.endswith("-predict_heatmap")]


@pytest.mark.parametrize("pick, right", [(0, True), (1, True), (2, False)])
def test_every_tied_key_is_marked_right(pick, right):
    """The default example's query 3 'west' weighs 'north' (k_0) and 'east' (k_1) alike."""
    teacher, code = start_room()
    student = open_page("pages/playground.py", query={"room": code})
    question = ask(teacher, "pages/playground.py", query=3)
    assert store().results(code, teacher.session_state["class_teacher_key"], question.id).question.truth[:2] == [0, 1]
    student.run()
    student.radio(key=f"class_answer_{question.id}").set_value(pick)
    student.button(key=f"class_send_{question.id}").click().run()
    teacher.switch_page("pages/playground.py").run()
    teacher.button(key=f"class_reveal_{question.id}").click().run()
    student.run()
    shown = student.success if right else student.error
    assert len(shown) == 1 and "k_0 'north' or k_1 'east' (a tie" in shown[0].value
    colours = chart_by_key(teacher, f"class_dist_{question.id}")["data"][0]["marker"]["color"]
    assert colours[0] == colours[1] != colours[2]


def test_closing_asks_first_offers_the_answers_and_keeps_them_for_the_teacher():
    teacher, code = start_room()
    student = open_page("pages/playground.py", query={"room": code})
    question = ask(teacher, "pages/playground.py", query=0)
    student.run()
    student.radio(key=f"class_answer_{question.id}").set_value(0)
    student.button(key=f"class_send_{question.id}").click().run()
    teacher.switch_page(CLASS).run()
    teacher.button(key="class_close").click().run()
    assert [b for b in teacher.get("download_button") if b.proto.id.endswith("class_csv_before_close")]
    assert store().state(code).question is not None, "nothing closed before the teacher says yes"
    teacher.button(key="class_confirm_close_no").click().run()
    teacher.button(key="class_close").click().run()
    teacher.button(key="class_confirm_close_yes").click().run()
    assert "has ended" in every_text(teacher) and "kept for you until" in every_text(teacher)
    key = teacher.session_state["class_teacher_key"]
    assert "student 1" in store().export_csv(code, key)
    # another browser takes the ended room back with the key file
    other = open_page(CLASS)
    other.text_input(key="class_reclaim_code").set_value(code)
    other.text_input(key="class_reclaim_key").set_value(key)
    other.button(key="class_reclaim").click().run()
    assert not other.exception and "has ended" in every_text(other)
    other.button(key="class_delete").click().run()
    other.button(key="class_confirm_delete_yes").click().run()
    assert "class_room" not in other.session_state and "deleted" in every_text(other)
    with pytest.raises(Exception, match="no room"):
        store().export_csv(code, key)


def test_signing_out_hands_the_controls_back_and_the_room_goes_on():
    teacher, code = start_room()
    student = open_page("pages/playground.py", query={"room": code})
    key = teacher.session_state["class_teacher_key"]
    teacher.button(key="class_sign_out").click().run()
    assert [b for b in teacher.get("download_button") if b.proto.id.endswith("class_key_file_before_sign_out")]
    teacher.button(key="class_confirm_sign_out_yes").click().run()
    assert "class_room" not in teacher.session_state and "signed out" in every_text(teacher)
    assert "attention_class=; path=/; max-age=0" in "".join(h.proto.body for h in teacher.get("html")), "forgotten"
    store().check_teacher(code, key)  # the room goes on
    student.run()
    assert "following the teacher" in every_text(student)
    teacher.text_input(key="class_reclaim_code").set_value(code)
    teacher.text_input(key="class_reclaim_key").set_value(key)
    teacher.button(key="class_reclaim").click().run()
    assert teacher.session_state["class_room"] == code


def test_one_tab_leads_the_class_and_another_can_take_the_lead():
    projector, code = start_room()
    key = projector.session_state["class_teacher_key"]
    student = open_page("pages/playground.py", query={"room": code})
    projector.switch_page("pages/causal.py").run()
    assert store().current_view(code).startswith("/causal")
    laptop = open_page(CLASS)  # the teacher's second tab (here: taking the room back by its key)
    laptop.text_input(key="class_reclaim_code").set_value(code)
    laptop.text_input(key="class_reclaim_key").set_value(key)
    laptop.button(key="class_reclaim").click().run()
    laptop.switch_page("pages/heads.py").run()
    assert store().current_view(code).startswith("/heads"), "the tab that took the room back leads"
    projector.switch_page("pages/block.py").run()
    assert store().current_view(code).startswith("/heads"), "the other tab no longer moves the class"
    assert "another tab leads" in every_text(projector)
    projector.button(key="class_take_lead").click().run()
    assert store().current_view(code).startswith("/block")
    laptop.run()
    assert "another tab leads" in every_text(laptop)
    student.run()
    assert [t.value for t in student.title] == ["The transformer block"]


def test_a_link_that_cannot_join_keeps_saying_why_with_a_box_for_the_right_code():
    _, code = start_room()
    lost = open_page("pages/playground.py", query={"room": "ZZZZZZ"})
    assert "Could not join room ZZZZZZ" in every_text(lost)
    lost.run()
    lost.run()  # later runs (the grid's signal, a click elsewhere) keep it until the student acts
    assert "Could not join room ZZZZZZ" in every_text(lost)
    lost.text_input(key="class_card_code").set_value(code.lower())
    lost.button(key="class_card_join").click().run()
    assert lost.session_state["class_room"] == code and "Could not join" not in every_text(lost)
    gone = open_page("pages/playground.py", query={"room": "ZZZZZZ"})
    gone.button(key="class_card_dismiss").click().run()
    assert "Could not join" not in every_text(gone)


def test_a_student_by_link_is_offered_a_nickname_once():
    teacher, code = start_room()
    key = teacher.session_state["class_teacher_key"]
    student = open_page("pages/playground.py", query={"room": code})
    student.text_input(key="class_rename").set_value("Ada")
    student.button(key="class_rename_save").click().run()
    assert "as Ada" in every_text(student) and store().student(code, student.session_state["class_sid"]) == "Ada"
    assert not [t for t in student.text_input if t.key == "class_rename"]
    shy = open_page("pages/playground.py", query={"room": code})
    shy.button(key="class_rename_skip").click().run()
    assert not [t for t in shy.text_input if t.key == "class_rename"] and "(anonymous)" in every_text(shy)
    # while a question is open the offer waits (on a phone it pushed the question half a screen down), then comes back
    later = open_page("pages/playground.py", query={"room": code})
    store().ask(code, key, {"kind": "choice", "prompt": "Which?", "options": ["x", "y"]})
    later.run()
    assert not [t for t in later.text_input if t.key == "class_rename"] and "Which?" in every_text(later)
    store().end_question(code, key)
    later.run()
    assert [t for t in later.text_input if t.key == "class_rename"]


def test_the_teacher_sees_who_is_here_now_beside_every_seat_and_removes_one():
    teacher, code = start_room()
    ada = open_page("pages/playground.py", query={"room": code})
    gone = open_page("pages/playground.py", query={"room": code})
    with store().engine.begin() as conn:  # the second browser left a while ago
        conn.execute(update(students).where(students.c.id == gone.session_state["class_sid"]).values(seen_at=1.0))
    teacher.run()
    assert "1 here (2 seats in all)" in every_text(teacher)
    teacher.session_state["class_show_names"] = False
    teacher.run()
    assert "Seat 2 · last seen" in every_text(teacher) and "Seat 1 · here now" in every_text(teacher)
    teacher.button(key="class_remove_2").click().run()
    assert store().state(code).seats == 1
    gone.run()
    assert "class_room" not in gone.session_state and "removed this seat" in every_text(gone)
    ada.run()
    assert ada.session_state["class_room"] == code


def test_a_database_that_cannot_be_used_leaves_every_page_working(monkeypatch):
    monkeypatch.setenv("ATTENTION_DB_URL", "postgresql+psycopg://u:secretpw@127.0.0.1:9/db")
    classroom_session.forget_stores()
    student = open_page("pages/playground.py", query={"room": "ABCDEF"})
    assert not student.exception and [t.value for t in student.title] == ["Attention playground"]
    assert "cannot reach its database" in every_text(student) and "secretpw" not in every_text(student)
    teacher = open_page(CLASS)
    teacher.button(key="class_start").click().run()
    assert not teacher.exception and "Could not start a room" in every_text(teacher)
    assert "secretpw" not in every_text(teacher) and "Connection refused" in every_text(teacher)


def test_students_come_back_by_themselves_after_postgresql_restarts(monkeypatch):
    """PostgreSQL stops mid-question and starts again: no screen crashes, none shows the open question's answer while
    nobody can tell whether a question is open (a reloaded student's included), an answer sent meanwhile is said to
    be unsent until it is, and everyone is back in the room by themselves."""
    server = Postgres()
    try:
        monkeypatch.setenv("ATTENTION_DB_URL", server.new_database())
        classroom_session.forget_stores()
        teacher, code = start_room()
        student = open_page("pages/playground.py", query={"room": code})
        question = ask(teacher, "pages/playground.py", query=2)
        student.run()
        sid = student.session_state["class_sid"]
        server.pg_ctl("stop")
        student.radio(key=f"class_answer_{question.id}").set_value(0)
        student.button(key=f"class_send_{question.id}").click().run()
        assert not student.exception and [t.value for t in student.title] == ["Attention playground"]
        assert "connection to room" in every_text(student) and student.session_state["class_room"] == code
        assert np.isnan(heatmap_rows(student)[0]).all(), "every row hidden: nobody can tell which is asked"
        teacher.run()
        assert not teacher.exception and "cannot reach its database" in every_text(teacher)
        assert np.isnan(heatmap_rows(teacher)[0]).all()
        monkeypatch.setattr(classroom_session, "browser_cookie", lambda: f"s.{code}.{sid}")
        reloaded = open_page("pages/playground.py")  # the student reloads while the database is down
        assert not reloaded.exception and np.isnan(heatmap_rows(reloaded)[0]).all()
        assert "connection to room" in every_text(reloaded) and "postgresql" not in every_text(reloaded)
        server.pg_ctl("start")
        student.run()  # the card's look finds the database again: the page runs in the room again
        assert "connection to room" not in every_text(student)
        assert f"Question {question.number}" in every_text(student) and "Not sent: k_0" in every_text(student)
        z = heatmap_rows(student)[0]
        assert np.isnan(z[2]).all() and not np.isnan(np.delete(z, 2, axis=0)).any(), "the asked row only, again"
        student.button(key=f"class_send_{question.id}").click().run()
        assert store().results(code, teacher.session_state["class_teacher_key"], question.id).values == [0]
        assert "Not sent" not in every_text(student) and "Sent: k_0" in every_text(student)
    finally:
        classroom_session.forget_stores()
        server.stop()


def test_the_revealed_count_of_right_answers_is_the_right_ones_only():
    teacher, code = start_room()
    students = [open_page("pages/playground.py", query={"room": code}) for _ in range(3)]
    question = ask(teacher, "pages/playground.py", query=0)  # query 0 'north': its truth, one key
    truth = store().results(code, teacher.session_state["class_teacher_key"], question.id).question.truth
    wrong = next(j for j in range(4) if j not in truth)
    for student, pick in zip(students, [truth[0], wrong, wrong]):
        student.run()
        student.radio(key=f"class_answer_{question.id}").set_value(pick)
        student.button(key=f"class_send_{question.id}").click().run()
    teacher.run()
    teacher.button(key=f"class_reveal_{question.id}").click().run()
    assert "revealed: **1** of 3 right" in every_text(teacher)


def test_an_answer_the_store_refuses_is_never_shown_as_sent():
    teacher, code = start_room()
    student = open_page("pages/playground.py", query={"room": code})
    question = ask(teacher, "pages/playground.py", query=0)
    student.run()
    store().reveal(code, teacher.session_state["class_teacher_key"], question.id)  # behind the student's back
    student.radio(key=f"class_answer_{question.id}").set_value(1)
    student.button(key=f"class_send_{question.id}").click().run()
    text = every_text(student)
    assert "Sent:" not in text and "not taken" in text
    assert "You did not answer" in text, "the reveal shows what the store holds, not the refused click"


def test_a_teacher_whose_class_is_held_by_a_question_writes_no_lead(monkeypatch):
    from classroom.store import Store

    teacher, code = start_room()
    ask(teacher, "pages/playground.py", query=0)
    calls = []
    real = Store.lead

    def spy(self, *args, **kwargs):
        calls.append(args)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Store, "lead", spy)
    teacher.switch_page("pages/heads.py").run()
    teacher.run()
    assert calls == [] and teacher.session_state["_class_leads"] is False


def test_a_student_who_had_stopped_following_still_follows_while_a_question_is_open():
    teacher, code = start_room()
    student = open_page("pages/playground.py", query={"room": code})
    question = ask(teacher, "pages/playground.py", query=0)
    student.run()
    student.session_state["class_following"] = False  # a late 'Stop following' that got through
    student.run()
    assert "following the teacher" in every_text(student) and f"Question {question.number}" in every_text(student)
    assert [t.value for t in student.title] == ["Attention playground"]


def test_a_page_parameter_named_like_a_class_link_parameter_follows_the_teacher():
    """The causal page's own `t` (the position after which tokens change) reaches a following student: only the
    student link's own parameters (room, join) are left out of a view."""
    teacher, code = start_room()
    student = open_page("pages/playground.py", query={"room": code})
    store().lead(code, teacher.session_state["class_teacher_key"], "/causal?t=1&seed=3")
    student.run()
    assert [t.value for t in student.title] == ["Causal masking"]
    assert (student.session_state["causal_t"], student.session_state["causal_seed"]) == (1, 3)
