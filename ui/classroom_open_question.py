"""Class mode's open question, on every page: the page it is about is held to the view it was asked on and hides
its answer until the reveal (`hold_for_question`, `answer_hidden`, `hidden_answer_card`), and its answers close by
themselves when its time is up (`answers_open`). Who is who, and the store, are ui/classroom_session.py's."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl

import streamlit as st

from locales import tr
from ui.classroom_push import redraw_in
from ui.classroom_session import ASKED_KEY, DRAWN_QUESTION_KEY, NOT_A_VIEW, store
from ui.page_state import hold


def asked_now(state) -> tuple | None:
    """What a page must hold for the room `state`: the open question's (id, view); None when none is open or the
    open one names no view (then no page is held, and a question arriving redraws the room's bar alone)."""
    if state is None or not state.asking:
        return None
    view = state.question.body.get("view")
    return (state.question.id, view) if isinstance(view, str) else None


def held_for_teacher(state, url_path: str):
    """The room as the teacher's screen on `url_path` holds its page by: while the students go at their own pace,
    the open question of a step about this page (the class's own step first), so that no screen of the teacher's,
    which may be the projected one, shows its answer before the reveal; otherwise the room as it is."""
    if state is None or not state.paced:
        return state
    here = [
        step
        for step, question in sorted(state.step_questions.items())
        if not question.revealed and str(question.body.get("view", "")).partition("?")[0].strip("/") == url_path
    ]
    return state.on_step(state.lesson_step if state.lesson_step in here else (here[0] if here else None))


def drawn_question() -> tuple | None:
    return st.session_state.get(DRAWN_QUESTION_KEY)


def hold_for_question(state, url_path: str, teacher: bool) -> None:
    """Before the page runs: while a question about it is open, the page is held to the view it was asked on (its
    controls cannot change the state the answer was computed from) and hides the answer (`asked_here`)."""
    asked = asked_now(state)
    st.session_state[DRAWN_QUESTION_KEY] = asked
    st.session_state.pop(ASKED_KEY, None)
    hold(None)
    if asked is None:
        return
    path, _, query = asked[1].partition("?")
    if path.strip("/") != url_path or state.question.body.get("kind") == "build":
        return  # a build question holds nothing and hides nothing: each student edits their own copy of the page
    question = state.question
    if state.paced and question.step is not None and teacher:  # open on a lesson step, for students at their own pace
        note = tr(
            "Question {number} is open on step {step} for the students at their own pace: this page stays as the step "
            "set it, and hides the answer, until you reveal it (on *Teach a class*).",
            number=question.number,
            step=question.step + 1,
        )
    elif state.paced and question.step is not None:
        note = tr(
            "Question {number} is open on step {step} for the students at their own pace: this page stays as the step "
            "set it, and hides the answer, until the teacher reveals it.",
            number=question.number,
            step=question.step + 1,
        )
    elif teacher:
        note = tr(
            "Question {number} is open: this page stays as it was when you asked, and hides the answer, until you "
            "reveal it to the class (or end the question).",
            number=question.number,
        )
    else:
        note = tr(
            "Question {number} is open: this page stays as the teacher asked it, and hides the answer, until the "
            "teacher reveals it (or ends the question).",
            number=question.number,
        )
    hold({k: v for k, v in parse_qsl(query) if k not in NOT_A_VIEW}, note)
    st.session_state[ASKED_KEY] = {**question.body.get("source", {}), "number": question.number}


def asked_here() -> dict | None:
    """What the class is being asked about the page running now (its question's source: the page, the kind, the
    query, the key...), or None: the page hides that answer until the reveal."""
    return st.session_state.get(ASKED_KEY)


def page_name(url_path: str) -> str:
    """The name a question's source gives the page at `url_path` (the Playground is at /)."""
    return url_path.strip("/") or "playground"


def answer_hidden(page: str, kind: str | None = None) -> bool:
    """Whether the page `page` hides what answers the class's question now: one about it is open (its question
    `kind`, if given), or might be (the classroom's database does not answer: then every kind is hidden)."""
    asked = asked_here()
    if asked is None or asked.get("page") != page:
        return False
    return kind is None or bool(asked.get("unknown")) or asked.get("question") == kind


def hidden_answer_card(where, what: str) -> None:
    """In `where` (st or a container), instead of `what` (the part of the page that holds the answer): that it comes
    back with the reveal (or, while class mode cannot reach its database, with the connection)."""
    asked = asked_here() or {}
    if asked.get("unknown"):
        where.info(
            tr(
                "Hidden while class mode cannot reach its database (a question may be open): {what}. It comes back "
                "when the connection does.",
                what=what,
            ),
            icon=":material/visibility_off:",
        )
        return
    number = asked.get("number")
    if number:
        text = tr(
            "Hidden while the class answers question {number}: {what}. It comes back when the teacher reveals the "
            "answer or ends the question.",
            number=number,
            what=what,
        )
    else:
        text = tr(
            "Hidden while the class answers the open question: {what}. It comes back when the teacher reveals the "
            "answer or ends the question.",
            what=what,
        )
    where.info(text, icon=":material/visibility_off:")


TIMES = (0, 30, 60, 120, 300)  # the Ask box's choices of a time for answers, s (0: none)


def time_text(seconds: int) -> str:
    if not seconds:
        return tr("no time limit")
    if seconds < 60:
        # Translators: a time for answers in seconds: "30 s"
        return tr("{seconds} s", seconds=seconds)
    # Translators: a time for answers in minutes: "2 min"
    return tr("{minutes} min", minutes=seconds // 60)


def answers_open(where, question, key: str) -> bool:
    """Whether `question`'s answers are still open by its time (always, without one). With a time, says so in
    `where`: a line counting down in the browser while it runs, "time is up" after. The screen drawing it is redrawn
    by this process's watcher when the time is up, so that its answer controls close then, not at its next run."""
    if question.closes_at is None:
        return True
    left = question.closes_at - store().clock()
    if left <= 0:
        where.caption(":material/timer_off: " + tr("Time is up: the answers to this question are closed."))
        return False
    ident = f"attn-timer-{re.sub(r'[^A-Za-z0-9_-]', '', key)}"
    where.html(
        f'<div id="{ident}" style="font-size:0.9rem">'
        + tr("Answers close in {time}", time=f"<b>{round(left) // 60}:{round(left) % 60:02d}</b>")
        + "</div><script>(() => { const end = Date.now() + "
        f"{int(left * 1000)}; const el = document.getElementById('{ident}');"
        " const tick = () => { if (!el || !el.isConnected) return; const s = Math.max(0, Math.round((end - Date.now())"
        " / 1000)); el.querySelector('b').textContent = Math.floor(s / 60) + ':' + String(s % 60).padStart(2, '0');"
        " if (s > 0) setTimeout(tick, 1000); else el.textContent = "
        + _js_text(tr("Time is up: the answers are closed."))
        + "; };"
        " tick(); })();"
        "</script>",
        unsafe_allow_javascript=True,
    )
    redraw_in(store(), left + 0.25)
    return True


def _js_text(text: str) -> str:
    """`text` as a JavaScript string literal in single quotes, inside an HTML script element (a message of ours)."""
    escaped = text.replace("\\", "\\\\").replace("'", "\\'").replace("<", "\\x3c")
    return f"'{escaped}'"
