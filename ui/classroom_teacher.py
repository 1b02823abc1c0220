"""Class mode, the teacher's screens: the room's bar on every page (who is here, the lead, the pause, the question
asked now and its answers), the one place a teacher's action is carried out, the results panel, and leading the
class from the tab that leads. The dashboard on /class (pages/class.py) draws its parts from here too.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

import streamlit as st

from classroom import errors
from classroom.questions import answer_label, is_right, prompt_text
from locales import marked, num, tr
from ui.classroom_ask import ask_controls
from ui.classroom_lesson import lesson_controls
from ui.classroom_open_question import answers_open, asked_now, drawn_question, held_for_teacher
from ui.classroom_push import caught_up, screen_drawn
from ui.classroom_questions import common_miss, distribution_figure
from ui.classroom_session import (
    COOKIE_HOURS,
    ENDED_KEY,
    LEFT_BEHIND,
    MESSAGE_KEY,
    SHOW_KEY,
    become_ended_teacher,
    in_room,
    is_teacher,
    leave,
    outage,
    pushed_or_timed,
    resolve,
    store,
    tab_id,
    teacher_key,
    teacher_view,
)
from ui.declared import PAGES, declared_page
from ui.page_questions import questions_named
from ui.page_state import LOADED_KEY
from ui.safe_text import escape_markdown
from ui.streamlit_internals.session import running_alone

LED_KEY = "class_view_led"  # the view this teacher last made the room's
LEADS_KEY = "_class_leads"  # whether this tab may move the class now (it leads, and no question holds the view)
NAMES_KEY = "class_show_names"
CONFIRM_KEY = "class_confirm"  # "close", "sign_out" or "delete": the action waiting for the teacher's yes
SHOWN_SOLUTION_KEY = "_class_shown"  # {question id: the view of the solution this teacher showed last}
ASK_SLOT_KEY = "_class_ask_slot"  # where this run draws 'Ask the class', after the page
LEAD_NOW_KEY = "_class_lead_now"  # this tab has just taken the lead: its page runs whole, and leads
WAS_LEADER_KEY = "_class_was_leader"  # the store named this tab the leader at the bar's last run
LEFT_BEHIND += [LED_KEY, LEADS_KEY, CONFIRM_KEY, ASK_SLOT_KEY, WAS_LEADER_KEY, SHOWN_SOLUTION_KEY]
NOT_LED = {"class"}  # the teacher's dashboard is not a view to send the class to


def teacher_screens(url_path: str):
    """A teacher's part of every page: the room's bar, and on a page that declares questions, 'Ask the class'.
    Returns the room's state as the bar drew it (None: the room has ended, or this session is no longer its
    teacher)."""
    if st.session_state.get(ENDED_KEY):
        st.info(
            tr("Room {code} has ended: its answers are on *Teach a class*.", code=in_room()), icon=":material/history:"
        )
        return None
    state = teacher_bar(url_path)
    if is_teacher():
        # filled after the page (ask_after_page), if it declares questions: they are built from the page's declared
        # state, which a session's first run of the page has read only then
        st.session_state[ASK_SLOT_KEY] = st.empty()
    return state


def ask_after_page(url_path: str) -> None:
    """'Ask the class' in its place under the bar, once the page has run (a full run of an asking page)."""
    slot = st.session_state.pop(ASK_SLOT_KEY, None)
    if slot is not None and is_teacher() and not st.session_state.get(ENDED_KEY):
        with slot.container():
            ask_controls(url_path, in_room(), teacher_key(), store())


def _teacher_bar(url_path: str):
    """Who is here, the lead, the pause, the question asked now: redrawn by the watcher when a student joins or
    answers or the room changes."""
    code, key = in_room(), teacher_key()
    if not code or not is_teacher() or st.session_state.get(ENDED_KEY):
        return None
    try:
        state = store().state(code)
    except errors.StoreUnavailable as err:
        outage(err)
        st.rerun(scope="app")
    except (errors.RoomClosed, errors.RoomExpired):
        become_ended_teacher(code, key)
        st.rerun(scope="app")
    except (errors.ClassroomError, PermissionError) as err:
        leave(tr("Room {code} ended: {error}.", code=code, error=err))
        st.rerun(scope="app")
    # None: the tab that led has gone (a reload, a closed tab, its worker died); the next of the teacher's tabs whose
    # page runs leads (a reload's new session, at once; another tab, at its next click)
    leads = state.leader in (None, tab_id())
    st.session_state[LEADS_KEY] = leads and not state.asking
    handed = state.leader == tab_id() and not st.session_state.get(WAS_LEADER_KEY)  # the store gave it the lead
    st.session_state[WAS_LEADER_KEY] = state.leader == tab_id()
    if running_alone() and (st.session_state.pop(LEAD_NOW_KEY, False) or handed):
        st.rerun(scope="app")  # this tab now leads: the whole page runs, and its view becomes the room's
    held = held_for_teacher(state, url_path)  # what the page holds by: the room's question, or a step's
    if running_alone() and asked_now(held) != drawn_question():
        st.rerun(scope="app")  # a question opened or was revealed: the page holds or shows its answer
    if running_alone() and st.session_state.get(SHOW_KEY):
        st.rerun(scope="app")  # Show this one, on a challenge already closed: the page opens the solution
    with st.container(border=True, key="class_teacher_bar"):
        screen_drawn(
            store(), code, state.version, activity=state.activity, leader=tab_id() if leads else None, tab=tab_id()
        )
        message = st.session_state.pop(MESSAGE_KEY, None)
        if message:
            st.warning(escape_markdown(message), icon=":material/groups:")
        here = here_text(state.here, state.seats)
        if state.paused:
            summary = tr("**Room {code}** · {here} · **paused**", code=code, here=here)
        elif state.paced:
            summary = tr("**Room {code}** · {here} · the students go at their own pace", code=code, here=here)
        elif leads:
            summary = tr("**Room {code}** · {here} · the class follows this tab", code=code, here=here)
        else:
            summary = tr("**Room {code}** · {here} · **another tab leads**", code=code, here=here)
        summary = ":material/co_present: " + summary
        if url_path in NOT_LED:  # the dashboard below has the controls
            st.markdown(summary)
            lead_button(leads)
            if state.lesson_step is not None:
                lesson_controls(state, url_path, code, key)
            return held
        left, mid, right = st.columns([3, 1, 1], vertical_alignment="center")
        left.markdown(summary)
        if state.paused:
            mid.button(tr("Resume"), key="class_resume", type="primary", on_click=teacher_action, args=("resume",))
        else:
            mid.button(tr("Pause"), key="class_pause", on_click=teacher_action, args=("pause",))
        right.button(
            # Translators: a button: bring every student back to following the teacher
            tr("Gather"),
            key="class_gather",
            on_click=teacher_action,
            args=("gather",),
            help=tr("Bring every student back to following you (those who stopped following too)."),
        )
        lead_button(leads)
        if state.lesson_step is not None:
            lesson_controls(state, url_path, code, key)
        if state.asking and state.question.body.get("kind") == "build":
            st.caption(
                tr(
                    "Challenge {number} is open: each student edits their own copy of the page until you close it.",
                    number=state.question.number,
                )
            )
        elif state.asking:
            st.caption(
                tr(
                    "Question {number} is open: the class stays on the page it was asked on, as it was asked, until "
                    "you reveal the answer or end the question.",
                    number=state.question.number,
                )
            )
        if state.question is not None:
            results_panel(code, key, state.question.id, compact=True)
    return held


teacher_bar = pushed_or_timed(_teacher_bar)


def here_text(here: int, seats: int) -> str:
    """Who is in the room, as the teacher reads it: students here now, and seats ever made when there are more."""
    if seats == here:
        return tr("{here} here", here=here)
    return tr("{here} here ({seats} seats in all)", here=here, seats=seats)


def lead_button(leads: bool) -> None:
    if not leads:
        st.caption(
            tr(
                "The class follows another of your tabs: the one that started the room, took it back, or last pressed "
                "'Lead from this tab' (or reloaded while it led). If that tab's server process has just stopped, this "
                "tab takes over within half a minute."
            )
        )
        st.button(
            tr("Lead from this tab"),
            key="class_take_lead",
            on_click=teacher_action,
            args=("lead",),
            help=tr(
                "The class will follow this tab from now on; your other tabs keep their controls but stop moving "
                "the class."
            ),
        )


def teacher_action(action: str) -> None:
    """Every action of a teacher's, from the bar or the dashboard (a button's callback)."""
    code, key = in_room(), teacher_key()
    try:
        if action in ("pause", "resume"):
            store().pause(code, key, action == "pause")
        elif action == "gather":
            store().gather(code, key)
        elif action == "end":
            store().end_question(code, key)
        elif action == "lead":
            store().take_lead(code, key, tab_id())
            st.session_state.pop(LED_KEY, None)  # this tab's view becomes the room's on the page's next run ...
            st.session_state[LEAD_NOW_KEY] = True  # ... which the bar asks for at once
        elif action == "close":
            store().close(code, key)
            become_ended_teacher(code, key)
        elif action == "sign_out":
            if not st.session_state.get(ENDED_KEY):
                store().take_lead(code, key, None)  # no tab leads: the next to come back takes the lead
            leave(
                tr(
                    "You signed out of room {code} in this browser. The room goes on; the key file takes it back.",
                    code=code,
                )
            )
        elif action == "delete":
            store().delete_room(code, key)
            leave(tr("Room {code} and all its answers are deleted.", code=code))
        st.session_state.pop(CONFIRM_KEY, None)
    except (errors.ClassroomError, PermissionError) as err:
        st.session_state[MESSAGE_KEY] = tr("That did not work: {error}.", error=err)


def results_panel(code: str, key: str, qid: int, compact: bool = False, step: bool = False) -> None:
    """Here, answered, the distribution (anonymous), Reveal, and the nicknames only if the teacher asks. A `step`
    question (open on its lesson step while students go at their own pace) is revealed, never asked again or ended:
    those act on the whole class's question."""
    try:
        res = store().results(code, key, qid, names=st.session_state.get(NAMES_KEY, False))
    except (errors.ClassroomError, PermissionError) as err:
        st.warning(escape_markdown(str(err)))
        return
    q = res.question
    prompt, here = escape_markdown(prompt_text(q.body)), here_text(res.here, res.seats)
    if q.revealed and q.truth is not None:
        right = sum(bool(is_right(q.body, q.truth, v)) for v in res.values)
        summary = tr(
            "**Question {number}:** {prompt} · **{answered}** answered · {here} · revealed: **{right}** of {answered} "
            "right",
            number=q.number,
            prompt=prompt,
            answered=res.answered,
            here=here,
            right=right,
        )
    else:
        summary = tr(
            "**Question {number}:** {prompt} · **{answered}** answered · {here}",
            number=q.number,
            prompt=prompt,
            answered=res.answered,
            here=here,
        )
    st.markdown(summary)
    from ui.charts import chart  # here: ui.charts imports plotly helpers only pages with charts need

    if not q.revealed:
        answers_open(st, q, f"t{qid}")
    truth = q.truth if q.revealed else None
    first = _first_vote(code, key, q.body)
    if q.body["kind"] == "build":
        build_gallery(code, key, q, res, compact)
    elif first is None:
        chart(st, distribution_figure(q.body, res.values, truth), key=f"class_dist_{qid}", export=False)
    else:  # asked again: the first vote beside this one, on the same scale
        before, after = st.columns(2)
        before.markdown(
            tr(
                "**First vote** (question {number}): {answered} answered",
                number=first.question.number,
                answered=first.answered,
            )
        )
        chart(before, distribution_figure(q.body, first.values, truth), key=f"class_dist_first_{qid}", export=False)
        after.markdown(tr("**After discussion**: {answered} answered", answered=res.answered))
        chart(after, distribution_figure(q.body, res.values, truth), key=f"class_dist_{qid}", export=False)
    if q.body["kind"] == "row" and q.revealed:
        miss = common_miss(q.body, res.values, q.truth)
        st.markdown(
            escape_markdown(miss) if miss else tr("The class's mean row is within the tolerance of the true row.")
        )
    with st.container(horizontal=True):
        if not q.revealed:
            build = q.body["kind"] == "build"
            st.button(
                tr("Close the challenge") if build else tr("Reveal the answer to the class"),
                key=f"class_reveal_{qid}",
                type="primary",
                on_click=_reveal,
                args=(code, key, qid),
                help=tr("End the submissions: each student sees their own verdict.")
                if build
                else tr(
                    "End the answers and show the true value on every screen, and on the page the question is about."
                ),
            )
            if first is None and res.answered and q.body["kind"] != "build" and not step:
                st.button(
                    tr("Ask again"),
                    key=f"class_again_{qid}",
                    on_click=_ask_again,
                    args=(code, key, qid),
                    help=tr(
                        "Peer instruction: let the class discuss, then ask the same question again, without "
                        "revealing it. You see the two votes side by side; the first one stays in the answers file."
                    ),
                )
        if not step:
            st.button(
                tr("End question"),
                key=f"class_end_{qid}",
                on_click=teacher_action,
                args=("end",),
                help=tr(
                    "Take the question off the students' screens without revealing it: the page shows its answer "
                    "again on every screen; its answers stay in the CSV, without a true value."
                ),
            )
    if not compact:
        st.toggle(
            tr("Show nicknames"),
            key=NAMES_KEY,
            help=tr(
                "Nicknames beside the answers, on this screen: if this screen is projected, the class sees them. "
                "Students' screens never show them; the answers file always has them."
            ),
        )
        if res.names is not None:
            st.dataframe(
                {
                    # Translators: a table's column header
                    tr("student"): [n or tr("(anonymous)") for n in res.names],
                    # Translators: a table's column header
                    tr("answer"): [answer_label(q.body, v) for v in res.values],
                },
                hide_index=True,
            )


def step_answers(code: str, key: str, state) -> None:
    """While the students go through the lesson at their own pace (the dashboard's Answers): how many are on each
    step, and each step's question with its answers and its Reveal."""
    counts = store().step_counts(code, key)
    st.dataframe(
        {
            # Translators: a table's column header: the lesson's step
            tr("step"): [f"{n + 1}" for n in range(len(state.steps))],
            # Translators: a table's column header: the step's title
            tr("title"): [step.title for step in state.steps],
            # Translators: a table's column header: how many students are on this step now
            tr("here on it"): counts,
            # Translators: a table's column header
            tr("question"): [
                tr("question {number}", number=q.number) if (q := state.step_questions.get(n)) else ""
                for n in range(len(counts))
            ],
        },
        hide_index=True,
        key="class_step_counts",
    )
    step_question_panels(code, key, state.step_questions)


def step_question_panels(code: str, key: str, asked: dict) -> None:
    """Each of the lesson's questions `asked` ({step: question}), in an expander: its answers and its Reveal."""
    for n, question in sorted(asked.items()):
        if question.revealed:
            label = tr("Step {step}: question {number} (revealed)", step=n + 1, number=question.number)
        else:
            label = tr("Step {step}: question {number} (open)", step=n + 1, number=question.number)
        with st.expander(label):
            results_panel(code, key, question.id, compact=True, step=True)


GALLERY = 24  # the solutions a build question's gallery shows at most, solved ones first
SOLUTION_CAPTIONS = {  # (solved, shown on the class's screens now): a solution's caption in the gallery
    (True, False): marked("Solution {number} · solved"),
    (False, False): marked("Solution {number} · not yet"),
    (True, True): marked("Solution {number} · solved · shown"),
    (False, True): marked("Solution {number} · not yet · shown"),
}


def build_gallery(code: str, key: str, q, res, compact: bool) -> None:
    """A build question's results: how many solved it, and the solutions, anonymous, each as a small picture with
    Show this one (the class's view becomes that solution)."""
    solved = sum(bool(v["solved"]) for v in res.values)
    st.markdown(
        tr(
            "**{solved}** solved · **{unsolved}** submitted, not solved yet · {waiting} here have not submitted",
            solved=solved,
            unsolved=res.answered - solved,
            waiting=max(res.here - res.answered, 0),
        )
    )
    source = q.body.get("source") or {}
    declared_questions = questions_named(str(source.get("page")))
    # the page's declared state decodes a solution's view whether or not this tab has run that page
    page = declared_questions.state if declared_questions else None
    try:
        question = declared_questions.by_kind(source.get("question")) if declared_questions else None
    except ValueError:
        question = None
    # the solution this teacher showed (the room's view follows it only once the page has run), else the room's
    on_screen = st.session_state.get(SHOWN_SOLUTION_KEY, {}).get(q.id) or (
        store().current_view(code) if q.revealed else None
    )
    shown = sorted(enumerate(res.values), key=lambda item: not item[1]["solved"])[: GALLERY // (2 if compact else 1)]
    columns = st.columns(4)
    for place, (i, solution) in enumerate(shown):
        with columns[place % len(columns)]:
            st.caption(tr(SOLUTION_CAPTIONS[bool(solution["solved"]), solution["view"] == on_screen], number=i + 1))
            if question is not None and question.preview is not None and page is not None:
                from ui.charts import square_chart  # as in results_panel

                values, _ = page.decode_link(solution["view"])
                figure = question.preview(q.body["goal"], values)
                square_chart(st, figure, key=f"class_solution_{q.id}_{i}", export=False)
            st.button(
                tr("Show this one"),
                key=f"class_show_{q.id}_{i}",
                on_click=_show_solution,
                args=(code, key, q.id, solution["view"]),
                help=tr(
                    "This solution on your screen and every student's, without its author's name; it closes the "
                    "challenge."
                ),
            )


def _show_solution(code: str, key: str, qid: int, view: str) -> None:
    """Show this one: the challenge closes (its submissions end), and this screen opens the solution's view on its
    next run, which makes it the class's (lead_class)."""
    try:
        if not store().results(code, key, qid).question.revealed:
            store().reveal(code, key, qid)
    except (errors.ClassroomError, PermissionError) as err:
        st.session_state[MESSAGE_KEY] = tr("Could not show it: {error}.", error=err)
        return
    st.session_state[SHOW_KEY] = view
    st.session_state[SHOWN_SOLUTION_KEY] = {qid: view}  # bounded: the last question's only


def open_shown_solution(pages) -> None:
    """Before the page, on the teacher's screen: open the view the teacher chose (a solution to show, a lesson's
    step): its page reads the whole view from the link, as a student's page does when it follows."""
    view = st.session_state.pop(SHOW_KEY, None)
    move = resolve(view, pages) if view else None
    if move is None:
        return
    st.session_state[LOADED_KEY] = set()
    name = move.page.url_path or "playground"
    page = declared_page(name).state if name in PAGES else None
    for state_key in page.state_keys() if page is not None else ():
        st.session_state.pop(state_key, None)  # the link decides, not this screen's widgets
    st.switch_page(move.page, query_params=move.query)


def _first_vote(code: str, key: str, body: dict):
    """The results of the question this one asks again (None: it is asked for the first time, or they cannot be
    read)."""
    first = body.get("again_of")
    if not isinstance(first, int) or isinstance(first, bool):
        return None
    try:
        return store().results(code, key, first)
    except (errors.ClassroomError, PermissionError):
        return None


def _ask_again(code: str, key: str, qid: int) -> None:
    """The same question again (its prompt, its view and its true value), as a new question: the class answers it
    afresh, and the first vote stays with the first."""
    try:
        asked = store().results(code, key, qid).question
        store().ask(code, key, {**asked.body, "again_of": qid}, truth=asked.truth)
    except (errors.ClassroomError, PermissionError, ValueError) as err:
        st.session_state[MESSAGE_KEY] = tr("Could not ask again: {error}.", error=err)


def _reveal(code: str, key: str, qid: int) -> None:
    try:
        store().reveal(code, key, qid)
    except (errors.ClassroomError, PermissionError) as err:
        st.session_state[MESSAGE_KEY] = tr("Could not reveal: {error}.", error=err)


# ------------------------------------------------------------------ leading the class
def lead_class(url_path: str) -> None:
    """A teacher's view becomes the room's, if it changed and this tab leads (after every page, and after a section
    of a page ran alone: app.py). While a question is open the class stays on its view (the store keeps it)."""
    if url_path in NOT_LED or st.session_state.get(ENDED_KEY) or not st.session_state.get(LEADS_KEY, True):
        return
    view = teacher_view(url_path)
    if view == st.session_state.get(LED_KEY):
        return
    try:
        version = store().lead(in_room(), teacher_key(), view, tab_id())
    except errors.InvalidView as err:
        st.warning(tr("The class cannot follow this view: {error}.", error=err), icon=":material/link_off:")
        return
    except errors.StoreUnavailable as err:
        outage(err)
        return
    except (errors.ClassroomError, PermissionError):
        return  # the room ended meanwhile: the bar says so on the next run
    if version is not None:
        st.session_state[LED_KEY] = view
        caught_up(store(), version)  # the teacher's bar need not be pushed for the teacher's own move


# ------------------------------------------------------------------ the dashboard's parts (pages/class.py)
def when(seconds: float) -> str:
    """A time as the dashboard says it: UTC, named as such."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M UTC")


def keep_note() -> str:
    return tr(
        "A room's answers are kept for {days} days after it ends (closed, or expired {room_hours} hours after it "
        "started), then deleted with everything else of the room. This browser remembers the room for {hours} hours; "
        "after that, the teacher key file takes you back to it.",
        days=num(store().limits.keep_days, "g"),
        room_hours=num(store().limits.room_hours, "g"),
        hours=COOKIE_HOURS,
    )


def confirm_box(action: str, question: str, yes: str, extra=None) -> None:
    """The teacher's yes to an action that cannot be undone, with what to do first (`extra`, drawn in the box)."""
    with st.container(border=True, key=f"class_confirm_{action}"):
        st.markdown(question)
        if extra is not None:
            extra()
        with st.container(horizontal=True):
            st.button(yes, key=f"class_confirm_{action}_yes", type="primary", on_click=teacher_action, args=(action,))
            st.button(
                tr("Cancel"), key=f"class_confirm_{action}_no", on_click=lambda: st.session_state.pop(CONFIRM_KEY)
            )


def ask_to(action: str) -> None:
    st.session_state[CONFIRM_KEY] = action


def answers_button(code: str, key: str, label: str | None = None, button_key: str = "class_csv") -> None:
    """The answers file's download (`label`: the button's, translated; "Answers as CSV" when not given)."""
    st.download_button(
        label or tr("Answers as CSV"),
        lambda: store().export_csv(code, key),
        file_name=f"room-{code}-answers.csv",
        mime="text/csv",
        key=button_key,
        icon=":material/download:",
        on_click="ignore",
        help=tr("Every question and every answer, with nicknames and seat numbers; times in UTC."),
    )


def key_file_button(code: str, key: str, button_key: str = "class_key_file") -> None:
    st.download_button(
        tr("Download the teacher key"),
        f"Room {code}\nTeacher key: {key}\nTake back the room on the app's 'Teach a class' page.\n",
        file_name=f"room-{code}-teacher-key.txt",
        key=button_key,
        icon=":material/key:",
        on_click="ignore",
    )


def seats_list(code: str, key: str) -> None:
    """Every seat of the room: seats, not people (a browser that cleared its cookies joined again as another seat),
    each with a button to remove it and its answers."""
    seats = store().seats(code, key)
    names = st.session_state.get(NAMES_KEY, False)
    st.caption(
        tr(
            "One line per seat. A browser that cleared its cookies, or a student on two devices, has two seats: remove "
            "the one left empty (its answers go with it). A removed student can join again."
        )
    )
    if not seats:
        st.markdown(tr("Nobody has joined yet."))
    now = time.time()
    for seat in seats:
        left, right = st.columns([4, 1], vertical_alignment="center")
        name = f" · {escape_markdown(seat.nickname)}" if names and seat.nickname else ""
        if seat.here:
            # Translators: {nickname} is empty, or " · " and the student's nickname (shown when the teacher asks)
            line = tr(
                "Seat {number}{nickname} · here now · {answers} answered",
                number=seat.number,
                nickname=name,
                answers=seat.answers,
            )
        else:
            # Translators: {nickname} is empty, or " · " and the student's nickname (shown when the teacher asks)
            line = tr(
                "Seat {number}{nickname} · last seen {minutes} min ago · {answers} answered",
                number=seat.number,
                nickname=name,
                minutes=max(0, round((now - seat.seen_at) / 60)),
                answers=seat.answers,
            )
        left.markdown(line)
        right.button(tr("Remove"), key=f"class_remove_{seat.number}", on_click=_remove, args=(code, key, seat.number))


def _remove(code: str, key: str, number: int) -> None:
    try:
        store().remove_seat(code, key, number)
    except (errors.ClassroomError, PermissionError) as err:
        st.session_state[MESSAGE_KEY] = tr("Could not remove seat {number}: {error}.", number=number, error=err)
