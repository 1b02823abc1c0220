"""Class mode under AppTest: the teacher's view (start, lead, pause, ask, reveal, export) and the student's
(join by link and by code, follow, the pause card, answer, the reveal, stop following and come back).

Each AppTest is one browser session; they share the store through ATTENTION_DB_URL (a temporary SQLite file).
AppTest does not tick an st.fragment's timer, so a student's screen is advanced with `.run()`, which runs
the same fragment inline.
"""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from attention import attention_steps
from classroom.questions import option_texts
from lessons.puzzles import PUZZLES_BY_ID
from tests.apptest_helpers import chart_by_key, every_text, open_page
from ui import classroom_session
from ui.classroom_ask import ask_box_key

CLASS = "pages/class.py"


@pytest.fixture(autouse=True)
def database(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_DB_URL", f"sqlite:///{tmp_path / 'class.db'}")
    yield
    classroom_session.forget_stores()


def start_room():
    teacher = open_page(CLASS)
    assert not teacher.exception
    teacher.button(key="class_start").click().run()
    assert not teacher.exception
    return teacher, teacher.session_state["class_room"]


def store():
    return classroom_session.store()


def test_start_a_room_shows_the_code_and_never_the_teacher_key():
    teacher, code = start_room()
    key = teacher.session_state["class_teacher_key"]
    assert len(code) == 6 and any(f">{code}</div>" in h.proto.body for h in teacher.get("html"))
    assert key not in every_text(teacher)
    assert not any(key in str(v) for v in teacher.query_params.values())  # nor in the teacher's link
    link = next(h.proto.body for h in teacher.get("html") if "class-student-link" in h.proto.body)
    assert f"room={code}" in link and key not in link
    assert len(teacher.get("image")) == 1  # the QR code (segno's PNG of that link, pages/class.py qr_png)
    store().check_teacher(code, key)  # the session holds the real key


def test_a_student_link_joins_the_room_and_follows_the_teacher():
    teacher, code = start_room()
    student = open_page("pages/playground.py", query={"room": code})
    assert not student.exception
    assert student.session_state["class_room"] == code and student.session_state["class_role"] == "student"
    assert f"Room {code}** (anonymous) · following the teacher" in every_text(student)
    assert store().state(code).seats == 1
    teacher.switch_page("pages/causal.py").run()
    view = store().current_view(code)
    assert view.startswith("/causal?")
    student.run()  # the follow fragment sees the new view and moves the student
    assert not student.exception
    assert [t.value for t in student.title] == ["Causal masking"]


def test_page_runs_in_a_room_reach_the_store_without_its_cache_lookup(monkeypatch, tmp_path):
    """A page run in a room asks for the store 4-6 times; after the first, none goes through st.cache_resource's
    lookup (~35 µs each): classroom_session.store keeps the last one."""
    teacher, code = start_room()
    student = open_page("pages/playground.py", query={"room": code})
    calls = []
    real = classroom_session._opened

    def counting(url):
        calls.append(url)
        return real(url)

    counting.clear = real.clear
    monkeypatch.setattr(classroom_session, "_opened", counting)
    teacher.switch_page("pages/causal.py").run()
    student.run()
    assert not student.exception and [t.value for t in student.title] == ["Causal masking"]
    assert calls == []
    monkeypatch.setenv("ATTENTION_DB_URL", f"sqlite:///{tmp_path / 'other.db'}")
    classroom_session.store()  # another database: opened through the cache, once
    assert len(calls) == 1


def test_the_followed_view_carries_the_teachers_state():
    teacher, code = start_room()
    student = open_page("pages/predict.py", query={"room": code})
    teacher.switch_page("pages/predict.py").run()
    teacher.selectbox(key="predict_puzzle").set_value("orthogonal").run()
    assert "puzzle=orthogonal" in store().current_view(code)
    student.run()
    assert student.selectbox(key="predict_puzzle").value == "orthogonal"
    teacher.selectbox(key="predict_puzzle").set_value("aligned").run()
    student.run()  # the same page, another state: the student's page reads the new link
    assert student.selectbox(key="predict_puzzle").value == "aligned"


def test_stop_following_then_come_back_and_gather():
    teacher, code = start_room()
    student = open_page("pages/playground.py", query={"room": code})
    student.button(key="class_unfollow").click().run()
    assert "exploring on your own" in every_text(student)
    teacher.switch_page("pages/heads.py").run()
    student.run()
    assert [t.value for t in student.title] != [t.value for t in teacher.title]  # stayed behind
    student.button(key="class_follow").click().run()
    assert [t.value for t in student.title] == [t.value for t in teacher.title]
    student.button(key="class_unfollow").click().run()
    teacher.switch_page(CLASS).run()
    teacher.button(key="class_dash_gather").click().run()
    student.run()
    assert "following the teacher" in every_text(student)


def test_pause_shows_every_student_the_card_until_the_teacher_resumes():
    teacher, code = start_room()
    student = open_page("pages/playground.py", query={"room": code})
    teacher.button(key="class_dash_pause").click().run()
    assert store().state(code).paused
    student.run()
    assert "Eyes on the teacher" in every_text(student) and not student.title  # the page is not drawn
    teacher.button(key="class_dash_resume").click().run()
    student.run()
    assert "Eyes on the teacher" not in every_text(student) and student.title


def test_join_by_code_with_a_nickname_and_refusals_are_shown():
    _, code = start_room()
    student = open_page(CLASS)
    student.text_input(key="class_join_code").set_value("ZZZZZZ")
    student.button(key="class_join").click().run()
    assert not student.exception and "no room with the code" in every_text(student)
    student.text_input(key="class_join_code").set_value(code.lower())
    student.text_input(key="class_join_nickname").set_value("**ada**")
    student.button(key="class_join").click().run()
    assert not student.exception and student.session_state["class_room"] == code
    assert "as \\*\\*ada\\*\\*" in every_text(student)  # shown as typed, not as bold markup
    student.button(key="class_leave").click().run()
    assert "class_room" not in student.session_state


def ask_on_predict(teacher, query: int = 1):
    teacher.switch_page("pages/predict.py").run()
    teacher.selectbox(key="predict_puzzle").set_value("aligned").run()
    teacher.session_state[ask_box_key(teacher.session_state)] = True  # the teacher opens the popover (a rerun)
    teacher.run()
    teacher.selectbox(key="class_ask_query_3").set_value(query).run()
    teacher.button(key="class_ask").click().run()
    assert not teacher.exception
    return store().state(teacher.session_state["class_room"]).question


def test_ask_answer_reveal_from_the_predict_page():
    teacher, code = start_room()
    students = [open_page("pages/playground.py", query={"room": code}) for _ in range(3)]
    question = ask_on_predict(teacher, query=1)
    p = PUZZLES_BY_ID["aligned"]
    truth = int(np.argmax(attention_steps(p.seq.q, p.seq.k, p.seq.v).weights[1]))
    assert option_texts(question.body)[0].startswith("k_0") and question.truth is None  # hidden from students
    for student, choice in zip(students, [truth, truth, 0]):
        student.run()
        student.radio(key=f"class_answer_{question.id}").set_value(choice)
        student.button(key=f"class_send_{question.id}").click().run()
        assert not student.exception and "Sent:" in every_text(student)
    students[2].radio(key=f"class_answer_{question.id}").set_value(2)  # a change of mind, before the reveal
    students[2].button(key=f"class_send_{question.id}").click().run()
    teacher.run()
    assert "**3** answered · 3 here" in every_text(teacher)
    bars = chart_by_key(teacher, f"class_dist_{question.id}")["data"][0]["y"]
    expected = [0, 0, 0]
    for choice in [truth, truth, 2]:
        expected[choice] += 1
    assert list(bars) == expected
    teacher.button(key=f"class_reveal_{question.id}").click().run()
    for student, right in zip(students, [True, True, truth == 2]):
        student.run()
        shown = student.success if right else student.error
        assert len(shown) == 1 and f"The answer: **{option_texts(question.body)[truth]}**" in shown[0].value
    teacher.run()
    assert chart_by_key(teacher, f"class_dist_{question.id}")["layout"]["annotations"][0]["text"].startswith("true: k_")
    exported = list(csv.DictReader(io.StringIO(store().export_csv(code, teacher.session_state["class_teacher_key"]))))
    assert len(exported) == 3 and {r["truth"] for r in exported} == {option_texts(question.body)[truth]}


def test_ask_a_weight_on_the_playground():
    teacher, code = start_room()
    student = open_page("pages/playground.py", query={"room": code})
    teacher.switch_page("pages/playground.py").run()
    n = len(teacher.session_state["seq"].tokens)
    assert not [b for b in teacher.button if b.key == "class_ask"]  # the popover closed: its controls not drawn
    teacher.session_state[ask_box_key(teacher.session_state)] = True  # the teacher opens the popover (a rerun)
    teacher.run()
    teacher.radio(key="class_ask_kind").set_value("weight").run()
    teacher.selectbox(key=f"class_ask_query_{n}").set_value(2).run()
    teacher.selectbox(key=f"class_ask_key_{n}").set_value(1).run()
    teacher.button(key="class_ask").click().run()
    assert not teacher.exception
    question = store().state(code).question
    assert question.body["kind"] == "number" and question.body["source"]["query"] == 2
    seq = teacher.session_state["seq"]
    expected = attention_steps(seq.q, seq.k, seq.v, causal=False, scale=True).weights[2, 1]
    key = teacher.session_state["class_teacher_key"]
    assert store().results(code, key, question.id).question.truth == pytest.approx(expected, abs=1e-12)
    assert teacher.session_state["class_ask_box"] is False  # asked: the popover closes, the page is in view again
    assert not [b for b in teacher.button if b.key == "class_ask"]  # and its controls are no longer drawn
    # The browser may still hold the old popover as open (the close was the server's) and send that back with the
    # teacher's next click: the popover after a question is another one, and stays closed on the projector.
    assert ask_box_key(teacher.session_state) == "class_ask_box_1"
    teacher.session_state["class_ask_box"] = True
    teacher.run()
    assert not teacher.exception and not [b for b in teacher.button if b.key == "class_ask"]
    student.run()
    student.button(key=f"class_send_{question.id}").click().run()  # nothing typed: nothing sent
    assert store().results(code, key, question.id).values == []
    assert "nothing was sent" in every_text(student)
    student.text_input(key=f"class_answer_{question.id}_box").input("4e-1").run()
    student.button(key=f"class_send_{question.id}").click().run()
    assert store().results(code, key, question.id).values == [0.4]  # as typed: 4e-1 is 0.4


def test_a_forged_cookie_or_link_gives_no_teacher_controls():
    teacher, code = start_room()
    student = open_page("pages/playground.py", query={"room": code, "class_teacher_key": "x", "role": "teacher"})
    assert student.session_state["class_role"] == "student"
    assert not [b for b in student.button if str(b.key).startswith(("class_pause", "class_gather", "class_reveal"))]


def test_a_closed_room_sends_its_students_out_with_a_message():
    teacher, code = start_room()
    student = open_page("pages/playground.py", query={"room": code})
    teacher.button(key="class_close").click().run()
    assert store().state(code).version >= 0, "asked first: nothing closed yet"
    teacher.button(key="class_confirm_close_yes").click().run()
    assert teacher.session_state["class_ended"] is True  # its teacher keeps the results
    student.run()
    assert not student.exception and "class_room" not in student.session_state
    assert "closed" in every_text(student)
    late = open_page("pages/playground.py", query={"room": code})
    assert "class_room" not in late.session_state and "Could not join room" in every_text(late)


@pytest.mark.parametrize("role", ["teacher", "student"])
def test_a_first_run_stopped_while_coming_back_to_the_room_comes_back_on_the_next(monkeypatch, role):
    """A browser that reconnects to a live worker (its own died) asks the new session for two runs at once:
    ui/reconnect.py's R, and Streamlit's own rerun of a run the lost worker cut off. Streamlit stops the first
    run at its next st call or session-state access; here it stops in the store's check of the class cookie.
    The session's next run must still bring the browser back into its room, as the same teacher or student."""
    import streamlit as st

    teacher, code = start_room()
    if role == "teacher":
        cookie = f"t.{code}.{teacher.session_state['class_teacher_key']}"
    else:
        sid = store().join(code)
        cookie = f"s.{code}.{sid}"
    real_store, calls = classroom_session.store, []

    def store_stopped_once():
        calls.append(1)
        if len(calls) == 1:
            st.rerun()  # what Streamlit raises at a yield point when a newer run is asked for
        return real_store()

    monkeypatch.setattr(classroom_session, "browser_cookie", lambda: cookie)
    monkeypatch.setattr(classroom_session, "store", store_stopped_once)
    back = open_page("pages/predict.py")
    assert not back.exception and calls  # the first run was stopped where it read the store
    entered = {k: back.session_state[k] for k in ("class_room", "class_role") if k in back.session_state}
    assert entered == {"class_room": code, "class_role": role}
    if role == "teacher":
        assert [b for b in back.button if b.key == "class_gather"]  # the teacher's controls are back
    else:
        assert back.session_state["class_sid"] == sid
        assert f"Room {code}** (anonymous) · following the teacher" in every_text(back)
    assert real_store().state(code).seats == (0 if role == "teacher" else 1)  # nobody joined twice


def _join_on_every_run(nickname: str) -> None:
    """A script that joins the room in session_state['code'] on every run: a Join delivered again."""
    import streamlit as st

    from ui.classroom_session import join

    join(st.session_state["code"], nickname)


def test_a_join_delivered_twice_seats_the_student_once():
    _, code = start_room()
    from streamlit.testing.v1 import AppTest

    student = AppTest.from_function(_join_on_every_run, args=("ada",), default_timeout=60)
    student.session_state["code"] = code
    student.run()
    seat = student.session_state["class_sid"]
    student.run()  # the same click again (pressed twice, or sent back by a run that was cut short)
    assert not student.exception
    assert student.session_state["class_sid"] == seat and store().state(code).seats == 1
    other = AppTest.from_function(_join_on_every_run, args=("bo",), default_timeout=60)
    other.session_state["code"] = code
    other.run()
    assert store().state(code).seats == 2  # another session is another student


def test_a_refused_question_is_said_in_the_open_popover():
    teacher, code = start_room()
    teacher.switch_page("pages/predict.py").run()
    teacher.session_state["class_teacher_key"] = "not-the-key"  # as if the room had been taken back elsewhere
    teacher.session_state[ask_box_key(teacher.session_state)] = True
    teacher.run()
    teacher.button(key="class_ask").click().run()
    assert not teacher.exception and store().state(code).question is None
    refused = [e.value for e in teacher.error if "Could not ask" in e.value]
    assert len(refused) == 1 and "not the teacher key" in refused[0]
    assert teacher.session_state["class_ask_box"] is True  # left open, with the reason in it
    teacher.run()
    assert not [e for e in teacher.error if "Could not ask" in e.value], "said once"
