"""Class mode, a student's screens: the room's bar on every page (following the teacher, the question asked now,
the pause card), where the student is, and the join card of a link that failed. The student's answer, in the bar, is
ui/classroom_student_answer.py's.

Where a following student is: `APPLIED_KEY`, the room's view this student last moved to, is the one record; the
watcher (ui/classroom_push.py) moves the page when the room's view is another, and the bar checks the page it
drew (`PAGE_RUN_KEY`, this run's page) against it only to redo a move that a run of the browser's overtook.
"""

from __future__ import annotations

import streamlit as st

from classroom import errors
from locales import tr
from ui.classroom_open_question import asked_now, drawn_question
from ui.classroom_push import moved_here, room_state, screen_drawn
from ui.classroom_session import (
    JOIN_CARD_KEY,
    LEFT_BEHIND,
    MESSAGE_KEY,
    NAME_CARD_KEY,
    NICK_KEY,
    SID_KEY,
    Move,
    in_room,
    is_student,
    join,
    leave,
    outage,
    pushed_or_timed,
    resolve,
    store,
)
from ui.classroom_student_answer import PAGE_RUN_KEY, answer_box
from ui.classroom_student_pace import own_step, own_step_controls, passed_box, went_past
from ui.page_state import CURRENT_KEY, LOADED_KEY, PageState, stop
from ui.safe_text import escape_markdown
from ui.streamlit_internals.browser import move_script
from ui.streamlit_internals.session import running_alone

FOLLOW_KEY = "class_following"
GATHER_KEY = "class_gather_seen"
APPLIED_KEY = "class_view_applied"  # the room view this student last moved to: where a following student is
PAUSED_KEY = "class_paused"
REMOVALS_KEY = "_class_removals_seen"  # the room's count of removed seats this student last checked its own against
MOVE_KEY = "_class_move"  # the view the bar found: room_bar moves there after it
MOVED_KEY = "_class_moved"  # this run is the watcher's move of this student: its link goes to the browser
SEEN_KEY = "_class_pages_seen"  # {url_path: the PageState of that page}
LEFT_BEHIND += [FOLLOW_KEY, GATHER_KEY, APPLIED_KEY, PAUSED_KEY, REMOVALS_KEY, NAME_CARD_KEY]


def go(view: str, pages: dict[str, list[st.Page]]) -> None:
    """Move this student's browser to `view`: the page reads its whole state from the new link."""
    move = _arrive(view, pages)
    if move is not None:
        st.switch_page(move.page, query_params=move.query)


def _arrive(view: str, pages: dict[str, list[st.Page]]) -> Move | None:
    """Before this student's next run of the page of `view`: that page reads its whole state from the link."""
    st.session_state[APPLIED_KEY] = view
    move = resolve(view, pages)
    if move is None:
        return None
    st.session_state[LOADED_KEY] = set()  # every page reads its link again on its next run
    page = st.session_state.get(SEEN_KEY, {}).get(move.page.url_path)
    if page is not None:
        # A page this browser has shown: its widgets' values, which the browser sends with its runs, would
        # win over the link on the page's first run (ui.page_state.browser_widget_keys); they go, so the
        # link decides.
        for key in page.state_keys():
            st.session_state.pop(key, None)
    return move


def student_screens(url_path: str, pages: dict[str, list[st.Page]]):
    """A student's part of every page: the room's bar, and the pause card instead of the page while the class is
    paused. Returns the room's state as the bar drew it."""
    moved = moved_here()  # this run is the watcher's move of this student (taken before its screens are let go)
    st.session_state[PAGE_RUN_KEY] = url_path
    if moved is not None and st.session_state.get(FOLLOW_KEY, True):
        target = resolve(moved, pages)
        if target is not None and target.page.url_path == url_path:
            # This run is the watcher's move to the teacher's view (ui/classroom_push.py): its page and query are
            # the view's; the page reads them as a link it was sent to, and the link goes to the browser after.
            _arrive(moved, pages)
            st.session_state[MOVED_KEY] = True
    state = student_bar(pages)
    move = st.session_state.pop(MOVE_KEY, None)
    if move is not None:
        go(move, pages)
    if st.session_state.get(PAUSED_KEY):
        with st.container(border=True, key="class_pause_card"):
            st.markdown("## :material/visibility: " + tr("Eyes on the teacher"))
            st.markdown(tr("The teacher has paused the class. This page comes back when the class resumes."))
        stop()
    return state


def _room_or_leave(code: str):
    """The room's state for this student; None (the screen draws nothing more) when the database does not answer;
    the session leaves the room when it has ended or no longer knows this seat."""
    try:
        state = room_state(store(), code)
        if state.removals != st.session_state.get(REMOVALS_KEY):
            store().student(code, st.session_state.get(SID_KEY))  # still a seat of the room?
            st.session_state[REMOVALS_KEY] = state.removals
        return state
    except errors.StoreUnavailable as err:
        outage(err)
        st.rerun(scope="app")  # the outage card, on the whole page
    except errors.UnknownStudent:
        leave()
        st.session_state[JOIN_CARD_KEY] = (code, tr("the teacher removed this seat from the room"))
        st.rerun(scope="app")
    except errors.ClassroomError as err:
        leave(tr("You are no longer in room {code}: {error}.", code=code, error=str(err)))
        st.rerun(scope="app")


def _student_bar(pages: dict[str, list[st.Page]]):
    code = in_room()
    if not code or not is_student():
        return None
    state = _room_or_leave(code)
    mine, reached = own_step(code, state) if state.paced else (None, None)
    state = state.on_step(mine)  # at their own pace: the question of this student's step is the one asked
    asking = state.asking
    following = st.session_state.get(FOLLOW_KEY, True) or asking or mine is not None
    # where this student's page belongs: their own step's view at their own pace, else the teacher's
    target = state.steps[mine].view if mine is not None else state.view
    # the watcher moves a following student's page when the room's view changes, and reruns this bar when
    # anything else of the room does
    screen_drawn(
        store(),
        code,
        state.version,
        at=(st.session_state.get(APPLIED_KEY) or "") if following and not state.paced else None,
        seat=st.session_state.get(SID_KEY),
    )
    if state.paused != st.session_state.get(PAUSED_KEY):
        st.session_state[PAUSED_KEY] = state.paused
        if running_alone():
            st.rerun(scope="app")  # the whole page: the pause card replaces it, or it comes back
    if running_alone() and asked_now(state) != drawn_question():
        st.rerun(scope="app")  # a question opened or was revealed: the page holds or shows its answer
    if st.session_state.get(GATHER_KEY) is None:
        st.session_state[GATHER_KEY] = state.gather
    elif state.gather > st.session_state[GATHER_KEY]:
        st.session_state[GATHER_KEY] = state.gather
        st.session_state[FOLLOW_KEY] = True  # the teacher gathered the class (asking a question gathers too)
        following = True
    if following and target and (target != st.session_state.get(APPLIED_KEY) or _move_lost(target)):
        if running_alone():
            # The browser moves itself, as its Back button would: a server-side switch requested from here
            # races the next tick of this fragment, whose request carries the old page and wins (Streamlit
            # 1.67 coalesces them); in Chromium the new page then lost its elements.
            st.session_state[APPLIED_KEY] = target
            st.html(move_script(target), unsafe_allow_javascript=True)
        else:
            st.session_state[MOVE_KEY] = target  # student_screens moves after the bar (never inside it)
    with st.container(border=True, key="class_bar"):
        message = st.session_state.pop(MESSAGE_KEY, None)
        if message:
            st.warning(escape_markdown(message), icon=":material/groups:")
        left, right = st.columns([3, 2], vertical_alignment="center")
        nickname = st.session_state.get(NICK_KEY)
        if nickname:
            who = tr("**Room {code}** as {nickname}", code=code, nickname=escape_markdown(nickname))
        else:
            who = tr("**Room {code}** (anonymous)", code=code)
        if mine is not None:
            doing = tr("going through the lesson at your own pace")
        else:
            doing = tr("following the teacher") if following else tr("exploring on your own")
        left.markdown(f":material/groups: {who} · {doing}")
        if mine is not None:
            own_step_controls(code, state, mine, reached)
        elif following:
            right.button(
                tr("Stop following"),
                key="class_unfollow",
                on_click=_set_follow,
                args=(False,),
                disabled=asking,
                help=tr("While a question is open you stay on the teacher's page: it is what the question is about.")
                if asking
                else tr("Explore other pages on your own; 'Follow the teacher' brings you back."),
            )
        else:
            right.button(tr("Follow the teacher"), key="class_follow", type="primary", on_click=_follow_again)
        if st.session_state.get(NAME_CARD_KEY) and not nickname and not asking:  # an open question comes first
            _name_card(code)
        if went_past(code, state, reached):
            passed_box(code, state.question)
        elif state.question is not None:
            answer_box(code, state.question)
    return state


student_bar = pushed_or_timed(_student_bar)  # pushed by the watcher, or on its safety timer


def _move_lost(view: str) -> bool:
    """Whether this browser is still on another page than the view it was sent to. A run its timer asks for
    while the move's run waits carries the old page, and Streamlit 1.67 lets the later request's page win
    (ScriptRequests coalesces them): the move is then made again."""
    shown = st.session_state.get(PAGE_RUN_KEY)
    return shown is not None and shown != view.partition("?")[0].strip("/")


def _set_follow(on: bool) -> None:
    st.session_state[FOLLOW_KEY] = on


def _follow_again() -> None:
    st.session_state[FOLLOW_KEY] = True
    st.session_state[APPLIED_KEY] = None  # move to the teacher's view on this run


def _name_card(code: str) -> None:
    """A student who joined by the link, anonymous: one offer of a nickname (the teacher sees it; other students
    never do), until they save one or say no."""
    left, right = st.columns([3, 2], vertical_alignment="bottom")
    from classroom.schema import NICKNAME_CHARS

    left.text_input(
        tr("Nickname (optional)"),
        key="class_rename",
        max_chars=NICKNAME_CHARS,
        placeholder=tr("stay anonymous: leave it empty"),
        help=tr(
            "Your teacher sees it beside your answers, on their screen when they choose and in the answers file "
            "they download; other students do not, unless the teacher shows nicknames on a screen the class can see."
        ),
    )
    with right.container(horizontal=True):
        st.button(tr("Save"), key="class_rename_save", on_click=_rename, args=(code,))
        st.button(tr("No, thanks"), key="class_rename_skip", on_click=lambda: st.session_state.pop(NAME_CARD_KEY, None))


def _rename(code: str) -> None:
    try:
        nickname = store().rename(code, st.session_state.get(SID_KEY), st.session_state.get("class_rename"))
        st.session_state[NICK_KEY] = nickname
    except errors.ClassroomError as err:
        st.session_state[MESSAGE_KEY] = tr("Your nickname was not taken: {error}.", error=str(err))
        return
    st.session_state.pop(NAME_CARD_KEY, None)


def after_student_page(url_path: str) -> None:
    """After every page of a student: the browser remembers the page's declared state, so that following the
    teacher back to that page lets the link decide; a page the watcher ran sends its link to the browser."""
    if isinstance(page := st.session_state.get(CURRENT_KEY), PageState):
        st.session_state.setdefault(SEEN_KEY, {})[url_path] = page
    if st.session_state.pop(MOVED_KEY, False):
        # The browser moved to this page without its link (a run the server started: Streamlit's client puts the
        # page's path in the address with the query it had); the page's link goes to it now, even when it is the
        # one the run was given.
        st.query_params.from_dict(st.query_params.to_dict())


# ------------------------------------------------------------------ a join that failed
def join_card() -> None:
    """A link that could not join (a wrong, closed or full room, a removed seat): why, and a box for the right code,
    until the student joins or dismisses it."""
    found = st.session_state.get(JOIN_CARD_KEY)
    if not found or in_room():
        return
    code, why = found
    with st.container(border=True, key="class_join_card"):
        st.markdown(
            ":material/groups: "
            + tr("**Could not join room {code}:** {why}.", code=escape_markdown(code), why=escape_markdown(why))
        )
        st.caption(tr("Check the code on the teacher's screen and type it here, or open the student link again."))
        left, mid, right = st.columns([2, 2, 2], vertical_alignment="bottom")
        left.text_input(tr("Room code"), key="class_card_code", max_chars=12, placeholder=tr("e.g. K7PX3M"))
        mid.text_input(tr("Nickname (optional)"), key="class_card_nickname", max_chars=24)
        with right.container(horizontal=True):
            # Translators: a button: join the class's room
            st.button(tr("Join"), key="class_card_join", type="primary", on_click=_join_from_card)
            st.button(
                tr("Dismiss"), key="class_card_dismiss", on_click=lambda: st.session_state.pop(JOIN_CARD_KEY, None)
            )


def _join_from_card() -> None:
    code = st.session_state.get("class_card_code", "")
    try:
        join(code, st.session_state.get("class_card_nickname") or None)
    except errors.ClassroomError as err:
        st.session_state[JOIN_CARD_KEY] = (str(code).strip()[:12] or "?", str(err))
