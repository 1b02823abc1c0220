"""Teach a class: start a room (code, student link, QR code), or join one; the teacher's dashboard."""

import functools
import html
import io
import os

import segno
import streamlit as st

from ui.shared_state import is_presenting, require_app_entry

require_app_entry()

from classroom import errors
from classroom.questions import prompt_text
from classroom.schema import NICKNAME_CHARS
from locales import num, sentence_space, tr, tr_n
from ui.classroom_lesson import lesson_picker
from ui.classroom_lesson import start as start_lesson
from ui.classroom_push import screen_drawn
from ui.classroom_results import results_panel, step_answers, step_question_panels
from ui.classroom_roster import answers_button, keep_note, key_file_button, seats_list, when
from ui.classroom_session import (
    COOKIE_HOURS,
    ENDED_KEY,
    LINK_TOKEN,
    MESSAGE_KEY,
    NICK_KEY,
    become_ended_teacher,
    become_teacher,
    in_room,
    is_teacher,
    join,
    leave,
    pushed_or_timed,
    store,
    teacher_key,
)
from ui.classroom_teacher_actions import CONFIRM_KEY, ask_to, confirm_box, teacher_action
from ui.lesson_alone import alone_picker
from ui.lesson_editor import lesson_editor
from ui.page_state import PageState
from ui.safe_text import escape_markdown
from ui.student_link import LISTEN_ENV, PUBLIC_URL_ENV, lan_ip, student_link

# Nothing of this page goes into a link: a room is joined by its code, and the teacher's controls are not
# shareable at all (ui/classroom_session.py says where they live).
STATE = PageState("class")
LINK_CSS = "<style>.class-link{word-break:break-all;font-size:1.1rem;user-select:all}</style>"
# The join code and the QR code are read from the back of the room: large, and larger on the projector.
CODE_CSS = (
    "<style>.class-code{font-size:clamp(2.5rem,7vw,4.5rem);font-weight:700;letter-spacing:.18em;"
    "font-family:monospace;line-height:1.1}</style>"
)
PRESENT_CODE_CSS = "<style>.class-code{font-size:clamp(3rem,14vh,7rem)}</style>"


def room_link(code: str, token: str):
    """The student link (the app's first page, in the room, with the room's link token) and what it is."""
    listen = os.environ.get(LISTEN_ENV, "") or str(st.get_option("server.address") or "")
    return student_link(
        st.context.url if isinstance(st.context.url, str) else "",  # AppTest has no browser to ask
        {"room": code, LINK_TOKEN: token} if token else {"room": code},
        public_url=os.environ.get(PUBLIC_URL_ENV, ""),
        listen=listen,
        base_path=st.get_option("server.baseUrlPath"),
        lan=lan_ip(),
    )


def qr_png(link: str) -> bytes:
    """The QR code of `link` as a PNG, large enough to scan from the back of a room."""
    png = io.BytesIO()
    segno.make(link, error="m").save(png, kind="png", scale=10, border=2)
    return png.getvalue()


def start_room() -> None:
    try:
        room = store().create_room()
        become_teacher(room.code, room.teacher_key)
    except errors.ClassroomError as err:
        st.session_state[MESSAGE_KEY] = tr("Could not start a room: {error}.", error=err)


def take_back() -> None:
    from classroom.codes import normalise_code

    code = normalise_code(st.session_state.get("class_reclaim_code", ""))
    key = st.session_state.get("class_reclaim_key", "").strip()
    try:
        store().check_teacher(code, key)
        become_teacher(code, key)
    except (errors.RoomClosed, errors.RoomExpired):
        try:
            store().ended(code, key)
            become_ended_teacher(code, key)
        except (errors.ClassroomError, PermissionError) as err:
            st.session_state[MESSAGE_KEY] = tr("Could not take back the room: {error}.", error=err)
    except (errors.ClassroomError, PermissionError) as err:
        st.session_state[MESSAGE_KEY] = tr("Could not take back the room: {error}.", error=err)


def join_room() -> None:
    try:
        join(st.session_state.get("class_join_code", ""), st.session_state.get("class_join_nickname") or None)
    except errors.ClassroomError as err:
        st.session_state[MESSAGE_KEY] = tr("Could not join: {error}.", error=err)


def outside_a_room() -> None:
    st.markdown(
        tr(
            "Class mode puts a whole class on the same screen: the students' browsers follow the teacher's page, "
            "the teacher can pause everyone, ask the class a question from any lesson page, "
            "and watch the answers arrive."
        )
    )
    teach, learn = st.columns(2, gap="large")
    with teach:
        # Translators: a heading: the teacher's side of the page (beside "Join a class")
        st.subheader(tr("Teach"))
        st.button(tr("Start a room"), key="class_start", type="primary", icon=":material/add:", on_click=start_room)
        with st.expander(tr("Take back a room (after switching browsers, or after it ended)")):
            st.caption(
                tr(
                    "Type the room's code and the teacher key from the file you downloaded when you started it. A "
                    "room that has ended gives back its answers while they are kept."
                )
            )
            # a form: both boxes are sent with the click, wherever the focus was (a password box's eye button
            # keeps the focus inside the box, and its text would not be sent before the click)
            with st.form("class_reclaim_form", border=False):
                st.text_input(tr("Your room's code"), key="class_reclaim_code", max_chars=12)
                st.text_input(tr("Teacher key"), key="class_reclaim_key", type="password", max_chars=64)
                st.form_submit_button(tr("Take back the room"), key="class_reclaim", on_click=take_back)
    with learn:
        st.subheader(tr("Join a class"))
        with st.form("class_join_form", border=False):  # Enter in a box joins; both boxes go with the click
            st.text_input(
                tr("Room code"), key="class_join_code", max_chars=12, placeholder=tr("e.g. {code}", code="K7PX3M")
            )
            st.text_input(
                tr("Nickname (optional)"),
                key="class_join_nickname",
                max_chars=NICKNAME_CHARS,
                help=tr(
                    "Leave it empty to stay anonymous. Your teacher sees nicknames beside the answers (on their "
                    "screen when they choose, and in the answers file they download); other students do not, unless "
                    "the teacher shows nicknames on a screen the class can see."
                ),
            )
            st.form_submit_button(
                tr("Join"), key="class_join", type="primary", icon=":material/login:", on_click=join_room
            )
        alone_picker()
    lesson_editor()


def teacher_dashboard(code: str) -> None:
    key = teacher_key()
    state = store().state(code)
    link = room_link(code, state.link_token)
    st.html(CODE_CSS + (PRESENT_CODE_CSS if is_presenting() else ""))
    left, right = st.columns([3, 2], gap="large")
    with left:
        st.markdown(tr("**Join code**"))
        st.html(f"<div class='class-code' data-testid='class-join-code'>{html.escape(code)}</div>")
        st.markdown(tr("**Student link** (opens the app in this room)"))
        st.html(f"{LINK_CSS}<div class='class-link' data-testid='class-student-link'>{html.escape(link.url)}</div>")
        st.caption(
            tr(
                "{note} Students open the link or scan the code, or type the join code on this page.",
                note=escape_markdown(link.note),
            )
        )
        if link.problem:
            st.warning(escape_markdown(link.problem), icon=":material/wifi_off:")
        buttons = st.container(horizontal=True)
        if state.paused:
            buttons.button(
                tr("Resume the class"),
                key="class_dash_resume",
                type="primary",
                on_click=teacher_action,
                args=("resume",),
            )
        else:
            buttons.button(tr("Pause the class"), key="class_dash_pause", on_click=teacher_action, args=("pause",))
        buttons.button(tr("Gather everyone"), key="class_dash_gather", on_click=teacher_action, args=("gather",))
        with buttons:
            answers_button(code, key)
        buttons.button(tr("Close the room…"), key="class_close", on_click=ask_to, args=("close",))
        buttons.button(tr("Sign out…"), key="class_sign_out", on_click=ask_to, args=("sign_out",))
    with right:
        png = qr_png(link.url)
        st.image(png, width=360 if is_presenting() else 300, caption=tr("Scan to join"))
        st.download_button(
            tr("QR code as PNG"), png, file_name=f"room-{code}.png", mime="image/png", key="class_qr_png"
        )
    confirm = st.session_state.get(CONFIRM_KEY)
    if confirm == "close":
        confirm_box(
            "close",
            tr(
                "**Close room {code}?** Students can no longer follow you or answer. Download the answers first if "
                "you want them now; they also stay downloadable for {days} days after: from this browser for its "
                "cookie's {hours} hours, then with the teacher key file.",
                code=code,
                days=num(store().limits.keep_days, "g"),
                hours=COOKIE_HOURS,
            ),
            tr("Close the room"),
            extra=lambda: answers_button(code, key, tr("Download the answers first"), "class_csv_before_close"),
        )
    elif confirm == "sign_out":
        confirm_box(
            "sign_out",
            tr(
                "**Sign out of room {code} in this browser?** The room goes on and the class keeps its place; this "
                "tab forgets the teacher key and the browser's cookie goes. Another tab of this room that is still "
                "open keeps its controls until you sign out there too, or close it. To take the room back, here or on "
                "another computer, you need the teacher key file.",
                code=code,
            ),
            tr("Sign out"),
            extra=lambda: key_file_button(code, key, "class_key_file_before_sign_out"),
        )
    if not lesson_picker(code, key, state.paced):  # while a lesson runs, its bar leads: no second lesson to edit
        lesson_editor(start=functools.partial(start_lesson, code, key))
    with st.expander(tr("Your teacher key (keep it; never project it)")):
        st.markdown(
            tr(
                "This browser keeps your controls over a reload. To take the room back from another browser, you need "
                "the teacher key: download it now. It is never shown on screen or put in a link. On a shared "
                "computer, **Sign out…** when you are done."
            )
        )
        key_file_button(code, key)
    st.caption(keep_note())
    live_answers(code)


def _live_answers(code: str) -> None:
    """The seats, and the question asked now, redrawn when a student joins or answers or the room changes (the
    watcher pushes it: ui/classroom_push.py); earlier questions below."""
    key = teacher_key()
    if not is_teacher() or st.session_state.get(ENDED_KEY):
        return
    try:
        asked = store().questions(code, key)
        state = store().state(code)
    except (errors.ClassroomError, PermissionError) as err:
        st.warning(escape_markdown(str(err)))
        return
    screen_drawn(store(), code, state.version, activity=state.activity)
    with st.expander(tr("Seats ({seats}; {here} here now)", seats=state.seats, here=state.here)):
        seats_list(code, key)
    # Translators: a heading: the answers of the class
    st.subheader(tr("Answers"))
    current = state.question.id if state.question is not None else None
    # the lesson's questions students answered at their own pace that nobody has revealed yet
    left_open = {
        n: q
        for n, q in state.step_questions.items()
        if not q.revealed and q.id != current and not state.paced and store().results(code, key, q.id).answered
    }
    if state.paced:
        step_answers(code, key, state)
    elif state.question is not None:
        results_panel(code, key, state.question.id)
    else:
        st.info(
            tr("No question is open. Go to a lesson page and press **Ask the class**, under the room bar."),
            icon=":material/quiz:",
        )
    if left_open and not state.paced:
        st.markdown(
            tr(
                "**Answered at the students' own pace, not revealed yet:** each reveal goes into the answers file; "
                "the class sees it when it comes to that step again."
            )
        )
        step_question_panels(code, key, left_open)
    shown = {current, *(q.id for q in (state.step_questions if state.paced else left_open).values())}
    shown |= {q.id for q in state.step_questions.values() if not q.revealed}  # a step's, not asked yet in class
    earlier_questions([q for q in asked if q.id not in shown])


live_answers = pushed_or_timed(_live_answers)


def earlier_questions(earlier) -> None:
    if earlier:
        with st.expander(tr("Earlier questions ({n})", n=len(earlier))):
            for q in reversed(earlier):
                prompt = escape_markdown(prompt_text(q.body))
                if q.revealed:
                    st.markdown(tr("{number}. {prompt} (revealed)", number=q.number, prompt=prompt))
                else:
                    st.markdown(tr("{number}. {prompt}", number=q.number, prompt=prompt))


def ended_room(code: str) -> None:
    """A room that has ended, for its teacher: when, until when its answers are kept, and what is left to do."""
    key = teacher_key()
    try:
        ended = store().ended(code, key)
        asked = store().questions(code, key)
    except (errors.ClassroomError, PermissionError) as err:
        leave(tr("Room {code} is gone: {error}.", code=code, error=err))
        st.rerun()
    if ended.closed:
        how = tr(
            "Room **{code}** has ended (closed at {time}): nobody can join or answer any more.",
            code=code,
            time=when(ended.ended_at),
        )
    else:
        how = tr(
            "Room **{code}** has ended (expired at {time}): nobody can join or answer any more.",
            code=code,
            time=when(ended.ended_at),
        )
    # Translators: "{n} question(s)", the {questions} of "Its {questions} and the answers of its {seats}..."
    questions = tr_n("{n} question", "{n} questions", ended.questions, n=ended.questions)
    # Translators: "{n} seat(s)", the {seats} of "Its {questions} and the answers of its {seats}..."
    seats = tr_n("{n} seat", "{n} seats", ended.seats, n=ended.seats)
    kept = tr(
        "Its {questions} and the answers of its {seats} are kept for you until **{time}**, then deleted.",
        questions=questions,
        seats=seats,
        time=when(ended.kept_until),
    )
    st.markdown(how + sentence_space() + kept)
    with st.container(horizontal=True):
        answers_button(code, key)
        st.button(tr("Delete them now…"), key="class_delete", on_click=ask_to, args=("delete",))
        st.button(
            tr("Forget this room here"),
            key="class_done",
            on_click=leave,
            help=tr("This browser leaves the room's results (its cookie goes); the teacher key file takes you back."),
        )
    if st.session_state.get(CONFIRM_KEY) == "delete":
        confirm_box(
            "delete",
            tr("**Delete room {code} and every answer in it, now?** This cannot be undone.", code=code),
            tr("Delete everything"),
            extra=lambda: answers_button(code, key, tr("Download the answers first"), "class_csv_before_delete"),
        )
    for q in asked:
        label = tr("Question {number}: {prompt}", number=q.number, prompt=prompt_text(q.body))
        with st.expander(label if len(label) <= 200 else label[:199] + "…"):
            results_panel(code, key, q.id, compact=True)


def student_panel(code: str) -> None:
    nickname = st.session_state.get(NICK_KEY)
    if nickname:
        st.markdown(tr("You are in room **{code}** as **{nickname}**.", code=code, nickname=escape_markdown(nickname)))
    else:
        st.markdown(tr("You are in room **{code}**, anonymous.", code=code))
    st.markdown(
        tr("The bar at the top of every page shows whether you follow the teacher, and the teacher's questions.")
    )
    st.button(tr("Leave the room"), key="class_leave", on_click=leave, args=(tr("You left room {code}.", code=code),))


STATE.load()
st.title(tr("Teach a class"))
code = in_room()
try:
    if code and is_teacher() and st.session_state.get(ENDED_KEY):
        ended_room(code)
    elif code and is_teacher():
        teacher_dashboard(code)
    elif code:
        student_panel(code)
    else:
        outside_a_room()
except errors.StoreUnavailable as err:
    st.warning(
        tr("Class mode cannot reach its database: {error}.", error=escape_markdown(str(err))),
        icon=":material/cloud_off:",
    )
