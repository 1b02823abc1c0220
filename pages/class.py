"""Teach a class: start a room (code, student link, QR code), or join one; the teacher's dashboard."""

import html
import io

import segno
import streamlit as st

from ui.state import require_app_entry

require_app_entry()

from classroom import errors
from classroom.store import NICKNAME_CHARS
from ui.classroom_push import screen_drawn
from ui.classroom_room import (
    MESSAGE_KEY,
    NICK_KEY,
    ROOM_KEY,
    TEACHER_KEY,
    become_teacher,
    in_room,
    is_teacher,
    join,
    leave,
    pushed_or_timed,
    results_panel,
    store,
)
from ui.page_state import PageState
from ui.presenter import page_link
from ui.safe_text import escape_markdown

# Nothing of this page goes into a link: a room is joined by its code, and the teacher's controls are not
# shareable at all (ui/classroom_room.py says where they live).
STATE = PageState("class")
LINK_CSS = "<style>.class-link{word-break:break-all;font-size:1.1rem;user-select:all}</style>"


def student_link(code: str) -> str:
    """The link a student opens: the app's first page, in the room. It names the room and nothing else."""
    url = st.context.url if isinstance(st.context.url, str) else ""  # AppTest has no browser to ask
    return page_link(url, "", {"room": code}, st.get_option("server.baseUrlPath"))


def qr_png(link: str) -> bytes:
    """The QR code of `link` as a PNG, large enough to scan from the back of a room."""
    png = io.BytesIO()
    segno.make(link, error="m").save(png, kind="png", scale=10, border=2)
    return png.getvalue()


def start_room() -> None:
    try:
        room = store().create_room()
    except errors.ClassroomError as err:
        st.session_state[MESSAGE_KEY] = f"Could not start a room: {err}."
        return
    become_teacher(room.code, room.teacher_key)


def take_back() -> None:
    code, key = st.session_state.get("class_reclaim_code", ""), st.session_state.get("class_reclaim_key", "")
    try:
        store().check_teacher(code, key.strip())
    except (errors.ClassroomError, PermissionError) as err:
        st.session_state[MESSAGE_KEY] = f"Could not take back the room: {err}."
        return
    from classroom.store import normalise_code

    become_teacher(normalise_code(code), key.strip())


def join_room() -> None:
    try:
        join(st.session_state.get("class_join_code", ""), st.session_state.get("class_join_nickname") or None)
    except errors.ClassroomError as err:
        st.session_state[MESSAGE_KEY] = f"Could not join: {err}."


def teacher_action(action: str) -> None:
    code, key = in_room(), st.session_state.get(TEACHER_KEY)
    try:
        if action == "close":
            store().close(code, key)
            leave(f"Room {code} is closed.")
        elif action in ("pause", "resume"):
            store().pause(code, key, action == "pause")
        elif action == "gather":
            store().gather(code, key)
    except (errors.ClassroomError, PermissionError) as err:
        st.session_state[MESSAGE_KEY] = f"That did not work: {err}."


def outside_a_room() -> None:
    st.markdown(
        "Class mode puts a whole class on the same screen: the students' browsers follow the teacher's page, "
        "the teacher can pause everyone, ask the class a question from the Predict page or the Playground, "
        "and watch the answers arrive."
    )
    teach, learn = st.columns(2, gap="large")
    with teach:
        st.subheader("Teach")
        st.button("Start a room", key="class_start", type="primary", icon=":material/add:", on_click=start_room)
        with st.expander("Take back a room (after switching browsers)"):
            st.caption("Type the room's code and the teacher key from the file you downloaded when you started it.")
            st.text_input("Your room's code", key="class_reclaim_code", max_chars=12)
            st.text_input("Teacher key", key="class_reclaim_key", type="password", max_chars=64)
            st.button("Take back the room", key="class_reclaim", on_click=take_back)
    with learn:
        st.subheader("Join a class")
        st.text_input("Room code", key="class_join_code", max_chars=12, placeholder="e.g. K7PX3M")
        st.text_input(
            "Nickname (optional)",
            key="class_join_nickname",
            max_chars=NICKNAME_CHARS,
            help="Leave it empty to stay anonymous. Only the teacher can see nicknames, and only on their screen.",
        )
        st.button("Join", key="class_join", type="primary", icon=":material/login:", on_click=join_room)


def teacher_dashboard(code: str) -> None:
    link = student_link(code)
    left, right = st.columns([3, 2], gap="large")
    with left:
        st.metric("Join code", code)
        st.markdown("**Student link** (opens the app in this room)")
        st.html(f"{LINK_CSS}<div class='class-link' data-testid='class-student-link'>{html.escape(link)}</div>")
        st.caption("Students open the link or scan the code, or type the join code on this page.")
        buttons = st.container(horizontal=True)
        state = store().state(code)
        if state.paused:
            buttons.button(
                "Resume the class", key="class_dash_resume", type="primary", on_click=teacher_action, args=("resume",)
            )
        else:
            buttons.button("Pause the class", key="class_dash_pause", on_click=teacher_action, args=("pause",))
        buttons.button("Gather everyone", key="class_dash_gather", on_click=teacher_action, args=("gather",))
        buttons.download_button(
            "Answers as CSV",
            store().export_csv(code, st.session_state[TEACHER_KEY]),
            file_name=f"room-{code}-answers.csv",
            mime="text/csv",
            key="class_csv",
            icon=":material/download:",
        )
        buttons.button("Close the room", key="class_close", on_click=teacher_action, args=("close",))
    with right:
        png = qr_png(link)
        st.image(png, width=300, caption="Scan to join")
        st.download_button("QR code as PNG", png, file_name=f"room-{code}.png", mime="image/png", key="class_qr_png")
    with st.expander("Your teacher key (keep it; never project it)"):
        st.markdown(
            "This browser keeps your controls over a reload. To take the room back from another browser, you need "
            "the teacher key: download it now. It is never shown on screen or put in a link."
        )
        st.download_button(
            "Download the teacher key",
            f"Room {code}\nTeacher key: {st.session_state[TEACHER_KEY]}\n"
            "Take back the room on the app's 'Teach a class' page.\n",
            file_name=f"room-{code}-teacher-key.txt",
            key="class_key_file",
            icon=":material/key:",
        )
    st.subheader("Answers")
    live_answers(code)


@pushed_or_timed
def live_answers(code: str) -> None:
    """The question asked now, redrawn when a student joins or answers or the room changes (the watcher
    pushes it: ui/classroom_push.py); earlier questions below."""
    key = st.session_state.get(TEACHER_KEY)
    if not is_teacher():
        return
    try:
        asked = store().questions(code, key)
        state = store().state(code)
    except (errors.ClassroomError, PermissionError) as err:
        st.warning(escape_markdown(str(err)))
        return
    screen_drawn(store(), code, state.version, activity=state.activity)
    st.caption(f"{state.joined} students joined.")
    if state.question is not None:
        results_panel(code, key, state.question.id)
    else:
        st.info(
            "No question is open. Go to the Predict page or the Playground and press **Ask the class** "
            "in the room bar.",
            icon=":material/quiz:",
        )
    earlier = [q for q in asked if state.question is None or q.id != state.question.id]
    if earlier:
        with st.expander(f"Earlier questions ({len(earlier)})"):
            for q in reversed(earlier):
                st.markdown(f"{q.number}. {escape_markdown(q.body['prompt'])}" + (" (revealed)" if q.revealed else ""))


def student_panel(code: str) -> None:
    nickname = st.session_state.get(NICK_KEY)
    st.markdown(
        f"You are in room **{code}**" + (f" as **{escape_markdown(nickname)}**." if nickname else ", anonymous.")
    )
    st.markdown("The bar at the top of every page shows whether you follow the teacher, and the teacher's questions.")
    st.button("Leave the room", key="class_leave", on_click=leave, args=(f"You left room {code}.",))


STATE.load()
st.title("Teach a class")
code = st.session_state.get(ROOM_KEY)
if code and is_teacher():
    teacher_dashboard(code)
elif code:
    student_panel(code)
else:
    outside_a_room()
