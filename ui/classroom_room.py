"""Class mode in the browser: which room this session is in and as whom, the room bar every page shows,
following the teacher, the pause card, and a student's answer. The rules live in classroom.store.

Who is who, and how it survives a reload or the loss of a worker:
- The teacher key exists in three places only: the server's session (st.session_state), a cookie of the
  teacher's browser (`attention_class`, SameSite=Strict, 12 hours, written by a small script: never in a
  link), and the key file the teacher may download from /class. It is never in the address bar, a link,
  a QR code or anything drawn on screen, so projecting the screen shows nothing a student could use.
- A reload, or a worker that died (the proxy sends the browser to another), starts a new session: its first
  run reads the cookie (st.context.cookies), checks the key against the store, and the teacher has the
  controls back. In another browser, the teacher types the room code and the key from the file
  ("Take back a room" on /class).
- A student's browser keeps its student id in the same cookie, so a reload rejoins as the same student
  (one answer each still holds). The student link carries only `room=CODE`.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode

import streamlit as st

from classroom import errors
from classroom.codes import normalise_code
from ui.checks import check_box
from ui.classroom_ask import ask_controls
from ui.classroom_push import bar_gone, caught_up, moved_here, room_state, screen_drawn, watched
from ui.classroom_questions import distribution_figure
from ui.page_state import CURRENT_KEY, LOADED_KEY, PageState, stop
from ui.safe_text import escape_markdown
from ui.streamlit_internals.browser import move_script
from ui.streamlit_internals.session import running_alone
from ui.url import Slots

ROOM_KEY = "class_room"  # the room code this session is in
ROLE_KEY = "class_role"  # "teacher" or "student"
TEACHER_KEY = "class_teacher_key"
SID_KEY = "class_sid"
NICK_KEY = "class_nickname"
FOLLOW_KEY = "class_following"
GATHER_KEY = "class_gather_seen"
APPLIED_KEY = "class_view_applied"  # the room view this student last moved to
LED_KEY = "class_view_led"  # the view this teacher last made the room's
PAUSED_KEY = "class_paused"
ENTERED_KEY = "_class_entered"  # the link and cookie were read (first run of the session)
MESSAGE_KEY = "class_message"  # why the session left a room or could not join, shown once
MINE_KEY = "class_mine"  # {question id: this student's answer}
MOVE_KEY = "_class_move"  # the view the follow fragment found: room_bar moves there
MOVED_KEY = "_class_moved"  # this run is the watcher's move of this student: its link goes to the browser
SHOWN_KEY = "_class_page_shown"  # the url_path of the page this student's last full run ran
SEEN_KEY = "_class_pages_seen"  # {url_path: the PageState of that page}, for a student
CLEAR_COOKIE_KEY = "_class_clear_cookie"  # this session left a room: its browser forgets it
COOKIE = "attention_class"
COOKIE_HOURS = 12


def _safety_seconds() -> float:
    """ATTENTION_CLASS_SAFETY_S, within 5 s and an hour (30 s if unset or not a number). The browser tests set
    an hour, so that a student who follows within their wait can only have been pushed."""
    try:
        seconds = float(os.environ.get("ATTENTION_CLASS_SAFETY_S", "30"))
    except ValueError:
        seconds = 30.0
    return min(max(seconds, 5.0), 3600.0) if seconds == seconds else 30.0


# A room's screens rerun when the room changes: this process's watcher pushes them (ui/classroom_push.py): a
# following student's page moves with the teacher, a student's bar redraws for a pause or a question, the
# teacher's bar and dashboard for a join or an answer; a push lost in a race with the browser's own run is sent
# again. A screen the watcher cannot hold (a full watcher; AppTest, without a server) reruns on this timer instead.
SAFETY_S = _safety_seconds()


def pushed_or_timed(body):
    """Two fragments of `body`: pushed by the watcher (no timer: a screen that nothing changed costs nothing), and
    the same on the safety timer. `fragment(watched)` is the one for this session now."""
    pushed, timed = st.fragment(body), st.fragment(run_every=SAFETY_S)(body)

    @functools.wraps(body)
    def draw(*args, **kwargs):
        return (pushed if watched(store()) else timed)(*args, **kwargs)

    return draw


NOT_LED = {"class"}  # the teacher's dashboard is not a view to send the class to
_COOKIE_VALUE = re.compile(r"^(t|s)\.([A-Z0-9]{6})\.([A-Za-z0-9_-]{20,64})$")


# one store per database URL; a server is configured with one (a test may switch): 4 leave room, not growth
@st.cache_resource(max_entries=4, show_spinner=False)
def _open(url: str | None):
    from classroom.store import open_store  # SQLAlchemy: imported by the first session in a room (1 s)

    return open_store(url)


# The store of the URL asked for last, in front of _open's cache: a room's page run asks for the store 4-6 times
# (the bar, its fragment, the watcher's calls), and each call of an st.cache_resource function costs ~35 µs
# (hashing its argument, the cache's lookup and statistics) where this costs a comparison.
_last: tuple[str | None, object] | None = None


def store():
    """The classroom store of this server: ATTENTION_DB_URL, or Streamlit's secrets, or the SQLite file."""
    global _last
    url, last = configured_url(), _last
    if last is not None and last[0] == url:
        return last[1]
    found = _open(url)
    _last = (url, found)  # one assignment: a thread reads the old pair or the new one, never half of each
    return found


def forget_stores() -> None:
    """Drop the stores opened so far (a test that switches databases)."""
    global _last
    _last = None
    _open.clear()


def configured_url() -> str | None:
    url = os.environ.get("ATTENTION_DB_URL", "").strip()
    if url:
        return url
    try:
        return str(st.secrets["ATTENTION_DB_URL"])
    except Exception:  # noqa: BLE001 - no secrets file, or no such entry: the default file
        return None


def client_id() -> str:
    """Who is typing a join code, for its rate limit: the address our proxy (deploy/nginx) saw, which it
    appends last to X-Forwarded-For; the connection's own address when there is no proxy."""
    ip, forwarded = _text(st.context.ip_address), _text(st.context.headers.get("X-Forwarded-For"))
    if ip in ("127.0.0.1", "::1") and forwarded:
        return forwarded.split(",")[-1].strip()[:64]
    return ip or "unknown"


def _text(value) -> str:
    """A request's header or cookie as text ("" when absent, or when a test runner has no request)."""
    return value if isinstance(value, str) else ""


# ------------------------------------------------------------------ who this session is
def in_room() -> str | None:
    return st.session_state.get(ROOM_KEY)


def is_teacher() -> bool:
    return bool(in_room()) and st.session_state.get(ROLE_KEY) == "teacher"


def become_teacher(code: str, key: str) -> None:
    _leave_quietly()
    st.session_state.update({ROOM_KEY: code, ROLE_KEY: "teacher", TEACHER_KEY: key, LED_KEY: None})


def become_student(code: str, sid: str, nickname: str | None) -> None:
    _leave_quietly()
    st.session_state.update(
        {ROOM_KEY: code, ROLE_KEY: "student", SID_KEY: sid, NICK_KEY: nickname, FOLLOW_KEY: True, MINE_KEY: {}}
    )
    st.session_state[APPLIED_KEY] = None
    st.session_state[GATHER_KEY] = None


def leave(message: str | None = None) -> None:
    """Leave the room (this browser forgets it: the cookie is cleared too)."""
    _leave_quietly()
    if message:
        st.session_state[MESSAGE_KEY] = message


def _leave_quietly() -> None:
    if in_room():
        st.session_state[CLEAR_COOKIE_KEY] = True
        bar_gone()
    for key in (ROOM_KEY, ROLE_KEY, TEACHER_KEY, SID_KEY, NICK_KEY, PAUSED_KEY, APPLIED_KEY, LED_KEY, GATHER_KEY):
        st.session_state.pop(key, None)


def join(code: str, nickname: str | None = None) -> None:
    """Join room `code` as a student; the store's refusal (a ValueError naming why) goes to the caller. A session
    already a student of that room keeps its seat: a Join pressed twice, or a click Streamlit delivers twice
    (a run cut short keeps its button pressed: ui/streamlit_internals/push.py), counts one student, not two, with
    the nickname it joined with."""
    code = normalise_code(code)
    if in_room() == code and st.session_state.get(ROLE_KEY) == "student":
        try:
            store().student(code, st.session_state.get(SID_KEY))
            return
        except errors.ClassroomError:
            pass  # the room no longer knows this seat: a new one
    sid = store().join(code, nickname, client=client_id())
    become_student(code, sid, store().student(code, sid))


def enter_from_link_or_cookie() -> None:
    """On a session's first run: come back to the room the cookie names (a reload, another worker), or
    join the room of a student link (?room=CODE).

    The session counts as entered only once that is done. Streamlit stops a run at its next st call or
    session-state access when a newer run is asked for, and a browser that reconnects to a live worker asks
    for two at once (ui/reconnect.py's R, and Streamlit's own rerun of a run the lost worker cut off): a first
    run stopped in here leaves the entry to the next run, instead of leaving the session outside its room."""
    if st.session_state.get(ENTERED_KEY):
        return
    _enter(normalise_code(st.query_params.get("room", "")), _COOKIE_VALUE.match(browser_cookie()))
    st.session_state[ENTERED_KEY] = True


def _enter(linked: str, found: re.Match | None) -> None:
    if found and (not linked or linked == found.group(2)):
        role, code, secret = found.groups()
        try:
            if role == "t":
                store().check_teacher(code, secret)
                become_teacher(code, secret)
            else:
                become_student(code, secret, store().student(code, secret))
            return
        except (errors.ClassroomError, PermissionError):
            pass  # a closed or expired room, or a stale cookie: the cookie is replaced below
    if linked:
        try:
            join(linked)
        except errors.ClassroomError as err:
            st.session_state[MESSAGE_KEY] = f"Could not join room {linked[:12]}: {err}."


def browser_cookie() -> str:
    """This browser's class cookie as its connection to this server sent it ("" without one)."""
    return _text(st.context.cookies.get(COOKIE))


def _cookie_script() -> str:
    """A script that writes (or clears) this browser's class cookie. Its value is a code and a random
    token made by the store: nothing a user typed."""
    code, role = in_room(), st.session_state.get(ROLE_KEY)
    secret = st.session_state.get(TEACHER_KEY if role == "teacher" else SID_KEY)
    if code and secret and _COOKIE_VALUE.match(f"{role[0]}.{code}.{secret}"):
        value, age = f"{role[0]}.{code}.{secret}", COOKIE_HOURS * 3600
    else:
        value, age = "", 0
    return f"<script>document.cookie = '{COOKIE}={value}; path=/; max-age={age}; samesite=strict';</script>"


# ------------------------------------------------------------------ views
def teacher_view(url_path: str) -> str:
    """The teacher's view as a link: the page and every parameter of its declared state, defaults included
    (so a student's page takes all of them, not only those the teacher's link happens to carry)."""
    page = st.session_state.get(CURRENT_KEY)
    query = full_query(page) if isinstance(page, PageState) else {}
    return f"/{url_path}" + (f"?{urlencode(query)}" if query else "")


def full_query(page: PageState) -> dict[str, str]:
    values, query = page.values(), {}
    for name, param in page.params.items():
        value = values[name]
        if isinstance(param, Slots) and param.count is not None:
            value = value[: param.count(values)]
        query |= param.encode(value, name)
    return query


@dataclass(frozen=True)
class Move:
    page: st.Page
    query: dict[str, str]


def resolve(view: str, pages: dict[str, list[st.Page]]) -> Move | None:
    """The page and query a view names (None: no such page in this app)."""
    path, _, query = view.partition("?")
    url_path = path.strip("/")
    for page in (p for section in pages.values() for p in section):
        if page.url_path == url_path:
            return Move(page, {k: v for k, v in parse_qsl(query) if k not in ("room", "present")})
    return None


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
        for key in _state_keys(page):
            st.session_state.pop(key, None)
    return move


def _state_keys(page: PageState) -> list[str]:
    """The session (and widget) keys of a page's declared state: one per parameter, one per slot of Slots."""
    keys = []
    for name, param in page.params.items():
        key = page.key(name)
        keys += [f"{key}_{i}" for i in range(param.slots)] if isinstance(param, Slots) else [key]
    return keys


# ------------------------------------------------------------------ the bar on every page
def room_bar(url_path: str, pages: dict[str, list[st.Page]]) -> None:
    """Class mode on every page (app.py calls it before the page): nothing outside a room; in a room, the
    room's bar, and for a student of a paused class the 'eyes on the teacher' card instead of the page."""
    enter_from_link_or_cookie()
    message = st.session_state.pop(MESSAGE_KEY, None)
    if message:
        st.warning(escape_markdown(message), icon=":material/groups:")
    if in_room() or st.session_state.pop(CLEAR_COOKIE_KEY, False):
        st.html(_cookie_script(), unsafe_allow_javascript=True)
    if not in_room():
        return
    moved = moved_here()  # this run is the watcher's move of this student (taken before its screens are let go)
    bar_gone()  # the screens this run draws tell the watcher again what they show
    if is_teacher():
        _teacher_bar(url_path)
        ask_controls(url_path, in_room(), st.session_state.get(TEACHER_KEY), store())
        return
    try:
        st.session_state[PAUSED_KEY] = room_state(store(), in_room()).paused
    except errors.ClassroomError as err:
        leave(f"You left room {in_room()}: {err}.")
        st.rerun()
    st.session_state[SHOWN_KEY] = url_path
    if moved is not None and st.session_state.get(FOLLOW_KEY, True):
        target = resolve(moved, pages)
        if target is not None and target.page.url_path == url_path:
            # This run is the watcher's move to the teacher's view (ui/classroom_push.py): its page and query are
            # the view's; the page reads them as a link it was sent to, and the link goes to the browser after.
            _arrive(moved, pages)
            st.session_state[MOVED_KEY] = True
    _student_bar(pages)
    move = st.session_state.pop(MOVE_KEY, None)
    if move is not None:
        go(move, pages)
    if st.session_state.get(PAUSED_KEY):
        with st.container(border=True, key="class_pause_card"):
            st.markdown("## :material/visibility: Eyes on the teacher")
            st.markdown("The teacher has paused the class. This page comes back when the class resumes.")
        stop()


@pushed_or_timed
def _student_bar(pages: dict[str, list[st.Page]]) -> None:
    code = in_room()
    if not code or is_teacher():
        bar_gone()
        return
    try:
        state = room_state(store(), code)
    except errors.ClassroomError as err:
        leave(f"You left room {code}: {err}.")
        st.rerun(scope="app")
    following = st.session_state.get(FOLLOW_KEY, True)
    # the watcher moves a following student's page when the room's view changes, and reruns this bar when
    # anything else of the room does
    screen_drawn(store(), code, state.version, at=(st.session_state.get(APPLIED_KEY) or "") if following else None)
    if state.paused != st.session_state.get(PAUSED_KEY):
        st.rerun(scope="app")  # the whole page: the pause card replaces it, or it comes back
    if st.session_state.get(GATHER_KEY) is None:
        st.session_state[GATHER_KEY] = state.gather
    elif state.gather > st.session_state[GATHER_KEY]:
        st.session_state[GATHER_KEY] = state.gather
        st.session_state[FOLLOW_KEY] = True  # the teacher gathered the class
        following = True
    if following and state.view and (state.view != st.session_state.get(APPLIED_KEY) or _move_lost(state.view)):
        if running_alone():
            # The browser moves itself, as its Back button would: a server-side switch requested from here
            # races the next tick of this fragment, whose request carries the old page and wins (Streamlit
            # 1.67 coalesces them); in Chromium the new page then lost its elements.
            st.session_state[APPLIED_KEY] = state.view
            st.html(move_script(state.view), unsafe_allow_javascript=True)
        else:
            st.session_state[MOVE_KEY] = state.view  # room_bar moves after the fragment (never inside one)
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
            right.button("Stop following", key="class_unfollow", on_click=_set_follow, args=(False,))
        else:
            right.button("Follow the teacher", key="class_follow", type="primary", on_click=_follow_again)
        if state.question is not None:
            _answer_box(code, state.question)


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


def _answer_box(code: str, question) -> None:
    """The question asked now: the student's answer, changeable until the reveal, then the true value."""
    body, sid = question.body, st.session_state.get(SID_KEY)
    mine = st.session_state.setdefault(MINE_KEY, {})
    if question.id not in mine:
        try:
            mine[question.id] = store().my_answer(code, sid, question.id)
        except errors.ClassroomError:
            mine[question.id] = None
    st.markdown(f"**Question {question.number}:** {escape_markdown(body['prompt'])}")
    if question.revealed:
        _show_reveal(body, question.truth, mine[question.id])
        return
    key = f"class_answer_{question.id}"
    if body["kind"] == "choice":
        options = list(range(len(body["options"])))
        st.radio(
            "Your answer",
            options,
            index=None if mine[question.id] is None else int(mine[question.id]),
            format_func=lambda i: body["options"][i],
            key=key,
            horizontal=True,
        )
    else:
        st.slider(
            "Your answer",
            float(body["lo"]),
            float(body["hi"]),
            value=float(mine[question.id]) if mine[question.id] is not None else float(body["lo"]),
            step=0.01,
            key=key,
        )
    st.button("Send my answer", key=f"class_send_{question.id}", on_click=_send, args=(code, question.id, key))
    if mine[question.id] is not None:
        st.caption(f"Sent: {escape_markdown(_label(body, mine[question.id]))}. You can change it until the reveal.")


def _send(code: str, qid: int, key: str) -> None:
    value = st.session_state.get(key)
    if value is None:
        st.session_state[MESSAGE_KEY] = "Pick an answer first."
        return
    try:
        store().answer(code, st.session_state.get(SID_KEY), qid, value)
    except errors.ClassroomError as err:
        st.session_state[MESSAGE_KEY] = f"Your answer was not taken: {err}."
        return
    st.session_state.setdefault(MINE_KEY, {})[qid] = value


def _label(body: dict, value) -> str:
    return body["options"][int(value)] if body["kind"] == "choice" else f"{float(value):.2f}"


def _show_reveal(body: dict, truth, mine) -> None:
    if truth is None:
        st.info("The teacher has closed this question.")
        return
    said = "no answer" if mine is None else _label(body, mine)
    right = mine is not None and (mine == truth if body["kind"] == "choice" else abs(mine - truth) <= 0.05)
    text = f"The answer: **{escape_markdown(_label(body, truth))}**. You said {escape_markdown(said)}."
    check_box(st, right, text)


# ------------------------------------------------------------------ the teacher's bar
def class_after_page(url_path: str) -> None:
    """After every page (app.py): a teacher's view becomes the room's; a student's browser remembers the
    page's declared state, so that following the teacher back to that page lets the link decide."""
    if not in_room():
        return
    if is_teacher():
        lead_class(url_path)
        return
    if isinstance(page := st.session_state.get(CURRENT_KEY), PageState):
        st.session_state.setdefault(SEEN_KEY, {})[url_path] = page
    if st.session_state.pop(MOVED_KEY, False):
        # The browser moved to this page without its link (a run the server started: Streamlit's client puts the
        # page's path in the address with the query it had); the page's link goes to it now, even when it is the
        # one the run was given.
        st.query_params.from_dict(st.query_params.to_dict())


def lead_class(url_path: str) -> None:
    """A teacher's view becomes the room's, if it changed (after every page, and after a section of a page
    ran alone: app.py)."""
    if url_path in NOT_LED:
        return
    view = teacher_view(url_path)
    if view != st.session_state.get(LED_KEY):
        try:
            version = store().lead(in_room(), st.session_state.get(TEACHER_KEY), view)
        except errors.InvalidView as err:
            st.warning(f"The class cannot follow this view: {err}.", icon=":material/link_off:")
            return
        st.session_state[LED_KEY] = view
        caught_up(store(), version)  # the teacher's bar need not be pushed for the teacher's own move


@pushed_or_timed
def _teacher_bar(url_path: str) -> None:
    """Who is in, the pause, the question asked now: redrawn by the watcher when a student joins or answers."""
    code, key = in_room(), st.session_state.get(TEACHER_KEY)
    if not code or not is_teacher():
        return
    try:
        state = store().state(code)
    except (errors.ClassroomError, PermissionError) as err:
        leave(f"Room {code} ended: {err}.")
        st.rerun(scope="app")
    with st.container(border=True, key="class_teacher_bar"):
        screen_drawn(store(), code, state.version, activity=state.activity)
        summary = f":material/co_present: **Room {code}** · {state.joined} joined · " + (
            "**paused**" if state.paused else "the class follows you"
        )
        if url_path in NOT_LED:  # the dashboard below has the controls
            st.markdown(summary)
            return
        left, mid, right = st.columns([3, 1, 1], vertical_alignment="center")
        left.markdown(summary)
        if state.paused:
            mid.button("Resume", key="class_resume", type="primary", on_click=_teacher_action, args=("resume",))
        else:
            mid.button("Pause", key="class_pause", on_click=_teacher_action, args=("pause",))
        right.button(
            "Gather",
            key="class_gather",
            on_click=_teacher_action,
            args=("gather",),
            help="Bring every student back to following you (those who stopped following too).",
        )
        if state.question is not None:
            results_panel(code, key, state.question.id, compact=True)


def _teacher_action(action: str) -> None:
    code, key = in_room(), st.session_state.get(TEACHER_KEY)
    try:
        if action == "pause":
            store().pause(code, key, True)
        elif action == "resume":
            store().pause(code, key, False)
        elif action == "gather":
            store().gather(code, key)
        elif action == "end":
            store().end_question(code, key)
    except (errors.ClassroomError, PermissionError) as err:
        st.session_state[MESSAGE_KEY] = f"That did not work: {err}."


def results_panel(code: str, key: str, qid: int, compact: bool = False) -> None:
    """Joined, answered, the distribution (anonymous), Reveal, and the names only if the teacher asks."""
    try:
        res = store().results(code, key, qid, names=st.session_state.get("class_show_names", False))
    except (errors.ClassroomError, PermissionError) as err:
        st.warning(escape_markdown(str(err)))
        return
    q = res.question
    st.markdown(
        f"**Question {q.number}:** {escape_markdown(q.body['prompt'])} · "
        f"**{res.answered}** of {res.joined} answered" + (" · revealed" if q.revealed else "")
    )
    from ui.charts import chart  # here: ui.charts imports plotly helpers only pages with charts need

    truth = q.truth if q.revealed else None
    chart(st, distribution_figure(q.body, res.values, truth), key=f"class_dist_{qid}", export=False)
    cols = st.columns(3)
    if not q.revealed:
        cols[0].button(
            "Reveal",
            key=f"class_reveal_{qid}",
            type="primary",
            on_click=_reveal,
            args=(code, key, qid),
            help="End the answers and show the true value on every screen.",
        )
    cols[1].button("End question", key=f"class_end_{qid}", on_click=_teacher_action, args=("end",))
    if not compact:
        cols[2].toggle(
            "Show names (your screen only)",
            key="class_show_names",
            help="Nicknames appear here only; students' screens never show them. Keep it off while projecting.",
        )
        if res.names is not None:
            st.dataframe(
                {"student": [n or "(anonymous)" for n in res.names], "answer": [_label(q.body, v) for v in res.values]},
                hide_index=True,
            )


def _reveal(code: str, key: str, qid: int) -> None:
    try:
        store().reveal(code, key, qid)
    except (errors.ClassroomError, PermissionError) as err:
        st.session_state[MESSAGE_KEY] = f"Could not reveal: {err}."
