"""Class mode, a teacher's actions: the one place they are carried out (teacher_action, the callback of the
buttons of the teacher's bar, ui/classroom_teacher.py, of the results panel, ui/classroom_results.py, and of the
dashboard, pages/class.py), and the teacher's yes to those that cannot be undone (confirm_box and ask_to, which the
dashboard draws and calls).
"""

from __future__ import annotations

import streamlit as st

from classroom import errors
from locales import tr
from ui.classroom_session import (
    ENDED_KEY,
    LEFT_BEHIND,
    MESSAGE_KEY,
    become_ended_teacher,
    in_room,
    leave,
    store,
    tab_id,
    teacher_key,
)

LED_KEY = "class_view_led"  # the view this teacher last made the room's
CONFIRM_KEY = "class_confirm"  # "close", "sign_out" or "delete": the action waiting for the teacher's yes
LEAD_NOW_KEY = "_class_lead_now"  # this tab has just taken the lead: its page runs whole, and leads
LEFT_BEHIND += [LED_KEY, CONFIRM_KEY]


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
