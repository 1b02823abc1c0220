"""Class mode, the teacher's bar and leading the class: the room's bar on every page of the teacher's (who is here,
the lead, the pause, the question asked now with its results, compact), 'Ask the class' under it after the page, the
view the teacher chose opened before the page (a solution shown, a lesson's step), and the teacher's view made the
room's from the tab that leads. ui/classroom_room.py draws these around every page (app.py), the dashboard
(pages/class.py) included. The results panel is ui/classroom_results.py, a teacher's actions
ui/classroom_teacher_actions.py, the room's seats and files ui/classroom_roster.py.
"""

from __future__ import annotations

import streamlit as st

from classroom import errors
from locales import tr
from ui.classroom_ask import ask_controls
from ui.classroom_lesson import lesson_controls
from ui.classroom_open_question import asked_now, drawn_question, held_for_teacher
from ui.classroom_push import caught_up, screen_drawn
from ui.classroom_results import here_text, results_panel
from ui.classroom_session import (
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
from ui.classroom_teacher_actions import LEAD_NOW_KEY, LED_KEY, teacher_action
from ui.declared import PAGES, declared_page
from ui.page_state import LOADED_KEY
from ui.safe_text import escape_markdown
from ui.streamlit_internals.session import running_alone

LEADS_KEY = "_class_leads"  # whether this tab may move the class now (it leads, and no question holds the view)
ASK_SLOT_KEY = "_class_ask_slot"  # where this run draws 'Ask the class', after the page
WAS_LEADER_KEY = "_class_was_leader"  # the store named this tab the leader at the bar's last run
LEFT_BEHIND += [LEADS_KEY, ASK_SLOT_KEY, WAS_LEADER_KEY]
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
