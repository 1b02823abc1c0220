"""Class mode, a student's screens: the room's bar on every page (following the teacher, the question asked now
and the student's answer, the pause card), where the student is, and the join card of a link that failed.

Where a following student is: `APPLIED_KEY`, the room's view this student last moved to, is the one record; the
watcher (ui/classroom_push.py) moves the page when the room's view is another, and the bar checks the page it
drew (`SHOWN_KEY`, this run's page) against it only to redo a move that a run of the browser's overtook.
"""

from __future__ import annotations

import math
from urllib.parse import urlencode

import streamlit as st

from classroom import errors
from classroom.questions import answer_label, is_right, page_path, row_labels
from ui.checks import outcome_box
from ui.classroom_open_question import answers_open, asked_now, drawn_question, page_name
from ui.classroom_push import moved_here, redraw_in, room_state, screen_drawn
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
from ui.number_box import number_box
from ui.page_questions import questions_named
from ui.page_state import CURRENT_KEY, LOADED_KEY, PageState, declared, stop
from ui.safe_text import escape_markdown
from ui.streamlit_internals.browser import move_script
from ui.streamlit_internals.session import running_alone

FOLLOW_KEY = "class_following"
GATHER_KEY = "class_gather_seen"
APPLIED_KEY = "class_view_applied"  # the room view this student last moved to: where a following student is
PAUSED_KEY = "class_paused"
REMOVALS_KEY = "_class_removals_seen"  # the room's count of removed seats this student last checked its own against
MINE_KEY = "class_mine"  # {question id: this student's answer}
UNSENT_KEY = "class_unsent"  # {question id: an answer the store could not take}: said until it is sent
MOVE_KEY = "_class_move"  # the view the bar found: room_bar moves there after it
MOVED_KEY = "_class_moved"  # this run is the watcher's move of this student: its link goes to the browser
SHOWN_KEY = "_class_page_shown"  # the url_path of the page this student's last full run ran
SEEN_KEY = "_class_pages_seen"  # {url_path: the PageState of that page}
LEFT_BEHIND += [FOLLOW_KEY, GATHER_KEY, APPLIED_KEY, PAUSED_KEY, REMOVALS_KEY, MINE_KEY, NAME_CARD_KEY, UNSENT_KEY]


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
    st.session_state[SHOWN_KEY] = url_path
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
            st.markdown("## :material/visibility: Eyes on the teacher")
            st.markdown("The teacher has paused the class. This page comes back when the class resumes.")
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
        st.session_state[JOIN_CARD_KEY] = (code, "the teacher removed this seat from the room")
        st.rerun(scope="app")
    except errors.ClassroomError as err:
        leave(f"You are no longer in room {code}: {err}.")
        st.rerun(scope="app")


def _student_bar(pages: dict[str, list[st.Page]]):
    code = in_room()
    if not code or not is_student():
        return None
    state = _room_or_leave(code)
    asking = state.asking
    following = st.session_state.get(FOLLOW_KEY, True) or asking
    # the watcher moves a following student's page when the room's view changes, and reruns this bar when
    # anything else of the room does
    screen_drawn(
        store(),
        code,
        state.version,
        at=(st.session_state.get(APPLIED_KEY) or "") if following else None,
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
    if following and state.view and (state.view != st.session_state.get(APPLIED_KEY) or _move_lost(state.view)):
        if running_alone():
            # The browser moves itself, as its Back button would: a server-side switch requested from here
            # races the next tick of this fragment, whose request carries the old page and wins (Streamlit
            # 1.67 coalesces them); in Chromium the new page then lost its elements.
            st.session_state[APPLIED_KEY] = state.view
            st.html(move_script(state.view), unsafe_allow_javascript=True)
        else:
            st.session_state[MOVE_KEY] = state.view  # student_screens moves after the bar (never inside it)
    with st.container(border=True, key="class_bar"):
        message = st.session_state.pop(MESSAGE_KEY, None)
        if message:
            st.warning(escape_markdown(message), icon=":material/groups:")
        left, right = st.columns([3, 2], vertical_alignment="center")
        nickname = st.session_state.get(NICK_KEY)
        who = f" as {escape_markdown(nickname)}" if nickname else " (anonymous)"
        left.markdown(
            f":material/groups: **Room {code}**{who} · "
            + ("following the teacher" if following else "exploring on your own")
        )
        if following:
            right.button(
                "Stop following",
                key="class_unfollow",
                on_click=_set_follow,
                args=(False,),
                disabled=asking,
                help="While a question is open you stay on the teacher's page: it is what the question is about."
                if asking
                else "Explore other pages on your own; 'Follow the teacher' brings you back.",
            )
        else:
            right.button("Follow the teacher", key="class_follow", type="primary", on_click=_follow_again)
        if st.session_state.get(NAME_CARD_KEY) and not nickname:
            _name_card(code)
        if state.question is not None:
            answer_box(code, state.question)
    return state


student_bar = pushed_or_timed(_student_bar)  # pushed by the watcher, or on its safety timer


def _move_lost(view: str) -> bool:
    """Whether this browser is still on another page than the view it was sent to. A run its timer asks for
    while the move's run waits carries the old page, and Streamlit 1.67 lets the later request's page win
    (ScriptRequests coalesces them): the move is then made again."""
    shown = st.session_state.get(SHOWN_KEY)
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
        "Nickname (optional)",
        key="class_rename",
        max_chars=NICKNAME_CHARS,
        placeholder="stay anonymous: leave it empty",
        help="Your teacher sees it beside your answers, on their screen when they choose and in the answers file "
        "they download; other students do not, unless the teacher shows nicknames on a screen the class can see.",
    )
    with right.container(horizontal=True):
        st.button("Save", key="class_rename_save", on_click=_rename, args=(code,))
        st.button("No, thanks", key="class_rename_skip", on_click=lambda: st.session_state.pop(NAME_CARD_KEY, None))


def _rename(code: str) -> None:
    try:
        nickname = store().rename(code, st.session_state.get(SID_KEY), st.session_state.get("class_rename"))
        st.session_state[NICK_KEY] = nickname
    except errors.ClassroomError as err:
        st.session_state[MESSAGE_KEY] = f"Your nickname was not taken: {err}."
        return
    st.session_state.pop(NAME_CARD_KEY, None)


def answer_box(code: str, question) -> None:
    """The question asked now: the student's answer, changeable until the reveal, then the true value."""
    body, sid = question.body, st.session_state.get(SID_KEY)
    mine = st.session_state.setdefault(MINE_KEY, {})
    if question.id not in mine:
        try:
            mine[question.id] = store().my_answer(code, sid, question.id)
        except errors.ClassroomError:
            mine[question.id] = None
    st.markdown(f"**Question {question.number}:** {escape_markdown(body['prompt'])}")
    if isinstance(body.get("again_of"), int) and not question.revealed:
        st.caption(f"Asked again: answer afresh. Your first answer stays with question {question.number - 1}.")
    if question.revealed:
        shown = store().current_view(code) if body["kind"] == "build" else None
        show_reveal(body, question.truth, mine[question.id], shown)
        return
    if not answers_open(st, question, f"s{question.id}"):
        if mine[question.id] is not None:
            st.caption(f"Sent: {escape_markdown(answer_label(body, mine[question.id]))}.")
        return
    if body["kind"] == "build":
        build_box(code, question, mine[question.id])
        return
    key = f"class_answer_{question.id}"
    unsent = st.session_state.get(UNSENT_KEY, {}).get(question.id)
    chosen = unsent if unsent is not None else mine[question.id]  # what the box shows when it is drawn anew
    if body["kind"] == "row":
        row_editor(body, key, chosen)
    elif body["kind"] == "choice":
        options = list(range(len(body["options"])))
        st.radio(
            "Your answer",
            options,
            index=None if chosen is None else int(chosen),
            format_func=lambda i: body["options"][i],
            key=key,
            horizontal=True,
        )
    else:
        lo, hi = float(body["lo"]), float(body["hi"])
        if key not in st.session_state and chosen is not None:
            st.session_state[key] = float(chosen)
        number_box(
            st,
            f"Your answer (a number from {lo:g} to {hi:g})",
            key=key,
            min_value=lo,
            max_value=hi,
            optional=True,
            placeholder="type it, e.g. 0.35",
            help=f"Type the number you predict; within {body.get('tolerance', 0):g} of the true value counts as right.",
        )
    st.button("Send my answer", key=f"class_send_{question.id}", on_click=_send, args=(code, question.id, key))
    if unsent is not None:
        st.warning(
            f"Not sent: {escape_markdown(answer_label(body, unsent))}. Press **Send my answer** again"
            + (
                f" (the teacher has {escape_markdown(answer_label(body, mine[question.id]))})."
                if mine[question.id] is not None
                else "."
            )
        )
    if mine[question.id] is not None:
        said = escape_markdown(answer_label(body, mine[question.id]))
        until = "the time is up (or the reveal)" if question.closes_at is not None else "the reveal"
        st.caption(f"Sent: {said}. You can change it until {until}.")


def build_goal(body: dict):
    """The page of a build question's goal as this student's last run of it left it, and the goal's check:
    (PageState, check), or None while this student is on another page (the check reads that page's own values)."""
    source = body.get("source") or {}
    if page_name(st.session_state.get(SHOWN_KEY) or "") != source.get("page"):
        return None
    found = questions_named(str(source.get("page")))
    page = declared(found.prefix) if found is not None else None
    if page is None:
        return None
    try:
        question = found.by_kind(source.get("question"))
    except ValueError:
        return None
    return (page, question.check) if question.check is not None else None


def build_box(code: str, question, mine) -> None:
    """A build question: the goal checked live on this student's own page, and Submit, which sends the page's link
    and the server's verdict on it (never the browser's word)."""
    found = build_goal(question.body)
    on_it = page_name(st.session_state.get(SHOWN_KEY) or "") == (question.body.get("source") or {}).get("page")
    if found is None and on_it:
        # this run is the student's first of the challenge's page, whose state the page reads after this bar: the
        # watcher redraws the bar once the run has ended (a screen without a watcher, at its next run)
        st.caption("Opening the challenge on this page…")
        redraw_in(store(), 0.0)
    elif found is None:
        st.info("Go to the page the challenge is on (follow the teacher) to build it there.")
    else:
        page, check = found
        solved, said = check(question.body["goal"], page.values())
        (st.success if solved else st.caption)(escape_markdown(said[:1].upper() + said[1:]))
        st.button(
            "Submit my solution",
            key=f"class_submit_{question.id}",
            type="primary" if solved else "secondary",
            on_click=_submit,
            args=(code, question.id, question.body),
            help="Sends this page as it is now (its link) and the check's verdict; you can submit again until the "
            "teacher closes the challenge.",
        )
    if mine is not None:
        st.caption(f"Submitted: {'solved' if mine['solved'] else 'not solved yet'}. You can submit again.")


def _submit(code: str, qid: int, body: dict) -> None:
    found = build_goal(body)
    if found is None:
        st.session_state[MESSAGE_KEY] = "Nothing was sent: go to the page the challenge is on first."
        return
    page, check = found
    solved, said = check(body["goal"], page.values())
    view = challenge_path(body) + "?" + urlencode(page.full_query())
    try:
        store().answer(code, st.session_state.get(SID_KEY), qid, {"view": view, "solved": solved, "said": said})
    except errors.StoreUnavailable:
        st.session_state[MESSAGE_KEY] = "Your solution was not sent: the class's connection is lost for now."
        return
    except errors.ClassroomError as err:
        st.session_state[MESSAGE_KEY] = f"Your solution was not taken: {err}."
        return
    st.session_state.setdefault(MINE_KEY, {})[qid] = {"view": view, "solved": solved, "said": said}


def challenge_path(body: dict) -> str:
    """The path of a build challenge's page, as a solution's view names it."""
    return page_path(str((body.get("source") or {}).get("page")))


def row_editor(body: dict, key: str, chosen) -> None:
    """A row of weights, one slider per key, with its sum as the student drags; on Send the row is scaled to sum
    to 1 (`row_sent`), and the student sees that row before sending it."""
    n, labels = body["n"], row_labels(body)
    for j in range(n):
        if f"{key}_{j}" not in st.session_state:
            st.session_state[f"{key}_{j}"] = float(chosen[j]) if chosen is not None else 0.0
    columns = st.columns(min(n, 4))
    for j in range(n):
        columns[j % len(columns)].slider(labels[j], 0.0, 1.0, step=0.01, key=f"{key}_{j}")
    weights = [st.session_state[f"{key}_{j}"] for j in range(n)]
    total = sum(weights)
    if total > 0:
        sent = answer_label(body, row_sent(weights))
        st.caption(f"Sum: {total:.2f}. *Send my answer* sends this row scaled to sum to 1: {escape_markdown(sent)}.")
    else:
        st.caption("Sum: 0. Give at least one key some weight: a row of attention weights sums to 1.")


def row_sent(weights: list[float]) -> list[float] | None:
    """The row a student's sliders send: scaled to sum to 1 (None: every weight is 0, nothing to scale)."""
    total = math.fsum(weights)
    return [w / total for w in weights] if total > 0 else None


def _send(code: str, qid: int, key: str) -> None:
    value = st.session_state.get(key)
    if f"{key}_0" in st.session_state:  # a row question's sliders
        value = row_sent([st.session_state[k] for k in _row_keys(key)])
    if value is None:
        st.session_state[MESSAGE_KEY] = "Pick or type an answer first: nothing was sent."
        return
    try:
        store().answer(code, st.session_state.get(SID_KEY), qid, value)
    except errors.StoreUnavailable:
        # kept under the box until it is sent: a message alone would be gone with the next redraw of the bar
        st.session_state.setdefault(UNSENT_KEY, {})[qid] = value
        st.session_state[MESSAGE_KEY] = "Your answer was not sent: the class's connection is lost for now."
        return
    except errors.ClassroomError as err:
        st.session_state[MESSAGE_KEY] = f"Your answer was not taken: {err}."
        return
    st.session_state.setdefault(MINE_KEY, {})[qid] = value
    st.session_state.get(UNSENT_KEY, {}).pop(qid, None)


def _row_keys(key: str) -> list[str]:
    keys, j = [], 0
    while f"{key}_{j}" in st.session_state:
        keys.append(f"{key}_{j}")
        j += 1
    return keys


def show_reveal(body: dict, truth, mine, shown_view: str | None = None) -> None:
    """The answer and this student's own, once revealed; a build challenge's: whose solution the page shows
    (`shown_view`, the room's view: the one the teacher chose to show, if any)."""
    if body["kind"] == "build":
        if mine is not None and shown_view == mine["view"]:
            on_screen = " Every screen shows your solution now (without your name)."
        elif shown_view is not None and shown_view.partition("?")[0] == challenge_path(body):
            on_screen = " The page shows a classmate's solution, chosen by the teacher (no name), not yours."
        else:
            on_screen = ""
        if mine is None:
            st.info(f"The teacher has closed the challenge: you did not submit a solution.{on_screen}")
        else:
            outcome_box(
                st,
                bool(mine["solved"]),
                f"The challenge is closed. Your solution: {escape_markdown(mine['said'])}.{on_screen}",
            )
        return
    if truth is None:
        st.info("The teacher has closed this question.")
        return
    said = "no answer" if mine is None else answer_label(body, mine)
    shown = answer_label(body, truth)
    if body["kind"] == "choice" and isinstance(truth, list) and len(truth) > 1:
        shown += " (a tie: each of them is right)"
    elif body["kind"] == "number":
        shown = f"{truth:.3f} (within {body.get('tolerance', 0):g} counts as right)"
    elif body["kind"] == "row":
        labels = row_labels(body)
        shown = ", ".join(f"{label} {w:.2f}" for label, w in zip(labels, truth))
        shown += f" (each weight within {body.get('tolerance', 0):g} of it counts as right)"
        said = "no answer" if mine is None else ", ".join(f"{label} {w:.2f}" for label, w in zip(labels, mine))
    said = "You did not answer." if mine is None else f"You said {escape_markdown(said)}."
    text = f"The answer: **{escape_markdown(shown)}**. {said}"
    outcome_box(st, bool(is_right(body, truth, mine)), text)


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
        st.markdown(f":material/groups: **Could not join room {escape_markdown(code)}:** {escape_markdown(why)}.")
        st.caption("Check the code on the teacher's screen and type it here, or open the student link again.")
        left, mid, right = st.columns([2, 2, 2], vertical_alignment="bottom")
        left.text_input("Room code", key="class_card_code", max_chars=12, placeholder="e.g. K7PX3M")
        mid.text_input("Nickname (optional)", key="class_card_nickname", max_chars=24)
        with right.container(horizontal=True):
            st.button("Join", key="class_card_join", type="primary", on_click=_join_from_card)
            st.button("Dismiss", key="class_card_dismiss", on_click=lambda: st.session_state.pop(JOIN_CARD_KEY, None))


def _join_from_card() -> None:
    code = st.session_state.get("class_card_code", "")
    try:
        join(code, st.session_state.get("class_card_nickname") or None)
    except errors.ClassroomError as err:
        st.session_state[JOIN_CARD_KEY] = (str(code).strip()[:12] or "?", str(err))
