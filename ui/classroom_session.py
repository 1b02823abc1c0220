"""Class mode: who this browser session is (outside a room, a room's teacher, or one of its students), the store
it talks to, and how that survives a reload, the loss of a worker or a database that stops answering. The rules
live in classroom.store; the bar every page draws in ui/classroom_room.py, each role's screens in
ui/classroom_teacher.py and ui/classroom_student.py, what a page holds and hides while a question is open in
ui/classroom_open_question.py.

Who is who, and how it survives:
- The teacher key exists in three places only: the server's session (st.session_state), a cookie of the
  teacher's browser (`attention_class`, SameSite=Strict, `Secure` when the page came over HTTPS, 12 hours,
  written by a small script: never in a link), and the key file the teacher may download from /class. It is
  never in the address bar, a link, a QR code or anything drawn on screen, so projecting the screen shows
  nothing a student could use. Over plain HTTP the cookie crosses the network in clear (docs/deploying.md).
- A reload, or a worker that died (the proxy sends the browser to another), starts a new session: its first
  run reads the cookie (st.context.cookies), checks the key against the store, and the teacher has the
  controls back. In another browser, the teacher types the room code and the key from the file
  ("Take back a room" on /class). Signing out forgets the key in this browser; the room goes on.
- One of the teacher's tabs leads (the class follows it): the one that started or took back the room, or
  pressed "Lead from this tab"; another tab that reads the cookie leads only if the leading one has gone.
- A student's browser keeps its student id in the same cookie, so a reload rejoins as the same student
  (one answer each still holds). The student link (`/?room=CODE&join=TOKEN`) carries the room's code and its link
  token (which joins without the limit on typed codes), nothing else.
"""

from __future__ import annotations

import functools
import os
import re
import secrets
import socket
import time
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode

import streamlit as st

from classroom import errors
from classroom.codes import normalise_code
from ui.classroom_push import bar_gone, log_once, watched
from ui.page_state import CURRENT_KEY, PageState

ROOM_KEY = "class_room"  # the room code this session is in
ROLE_KEY = "class_role"  # "teacher" or "student"
TEACHER_KEY = "class_teacher_key"
SID_KEY = "class_sid"
NICK_KEY = "class_nickname"
ENDED_KEY = "class_ended"  # a teacher whose room has ended (closed or expired): its results only
TAB_KEY = "_class_tab"  # this session's name as a teacher's tab: "<worker>/<session>"
ENTERED_KEY = "_class_entered"  # the link and cookie were read (first run of the session)
MESSAGE_KEY = "class_message"  # why the session left a room or an action failed, shown once
SHOW_KEY = "_class_show"  # a view the teacher's screen opens on its next run (Show this one, a lesson's step)
JOIN_CARD_KEY = "class_join_card"  # (code, why) a join that failed: shown with a code box until the student acts
NAME_CARD_KEY = "class_name_card"  # a student who joined by the link, anonymous: offered a nickname once
ASKED_KEY = "_class_asked"  # what the open question asks about the page running now (its source), or nothing
DRAWN_QUESTION_KEY = "_class_drawn_question"  # the open question the last full run drew its page for
CLEAR_COOKIE_KEY = "_class_clear_cookie"  # this session left a room: its browser forgets it
OUTAGE_KEY = "_class_outage"  # the database's problem while it does not answer
LINK_TOKEN = "join"  # the student link's query parameter that carries the room's link token (no page uses it)
NOT_A_VIEW = ("room", LINK_TOKEN, "present", "lang")  # a link's parameters that are no page's state (each screen's own)
COOKIE = "attention_class"
COOKIE_HOURS = 12
# this process, as a teacher's tab names it: which worker holds a leading session (Store.take_lead)
WORKER = f"{socket.gethostname()[:24]}:{os.getpid()}:{secrets.token_hex(3)}"
_COOKIE_VALUE = re.compile(r"^(t|s)\.([A-Z0-9]{6})\.([A-Za-z0-9_-]{20,64})$")


# ------------------------------------------------------------------ the store
# one store per database URL; a server is configured with one (a test may switch): 4 leave room, not growth
@st.cache_resource(max_entries=4, show_spinner=False)
def _opened(url: str | None):
    from classroom.store import open_store  # SQLAlchemy: imported by the first session in a room (1 s)

    return open_store(url)


# The store of the URL asked for last, in front of _opened's cache: a room's page run asks for the store 4-6 times
# (the bar, its fragment, the watcher's calls), and each call of an st.cache_resource function costs ~35 µs
# (hashing its argument, the cache's lookup and statistics) where this costs a comparison.
_last: tuple[str | None, object] | None = None
# A database that could not be opened is not tried again for RETRY_OPEN_S: an unreachable host holds a connection
# attempt for its whole timeout, and every run of every student in a room would wait for it.
RETRY_OPEN_S = 5.0
_failed: tuple[str | None, float, errors.StoreUnavailable] | None = None


def store():
    """The classroom store of this server: ATTENTION_DB_URL (the environment's), or the SQLite file;
    errors.StoreUnavailable if its database cannot be opened."""
    global _last, _failed
    url, last, failed = configured_url(), _last, _failed
    if last is not None and last[0] == url:
        return last[1]
    if failed is not None and failed[0] == url and time.monotonic() - failed[1] < RETRY_OPEN_S:
        raise failed[2]
    try:
        found = _opened(url)
    except errors.StoreUnavailable as err:
        _failed = (url, time.monotonic(), err)
        raise
    _last = (url, found)  # one assignment: a thread reads the old pair or the new one, never half of each
    return found


def forget_stores() -> None:
    """Drop the stores opened so far (a test that switches databases)."""
    global _last, _failed
    _last = _failed = None
    _opened.clear()


def configured_url() -> str | None:
    """ATTENTION_DB_URL from the environment only, as `python -m classroom.check` (deploy/serve.py's check before
    it serves) reads it; None: the default SQLite file."""
    return os.environ.get("ATTENTION_DB_URL", "").strip() or None


# ------------------------------------------------------------------ a database that does not answer
def outage(err: errors.StoreUnavailable) -> None:
    """This session met a database that does not answer: said on its screens (ui/classroom_room.py draws it), and
    logged once a minute. The session stays in its room and comes back to it by itself."""
    st.session_state[OUTAGE_KEY] = str(err)
    log_once(str(err))


# ------------------------------------------------------------------ who this session is
def in_room() -> str | None:
    return st.session_state.get(ROOM_KEY)


def is_teacher() -> bool:
    return bool(in_room()) and st.session_state.get(ROLE_KEY) == "teacher"


def is_student() -> bool:
    return bool(in_room()) and st.session_state.get(ROLE_KEY) == "student"


def teacher_key() -> str | None:
    return st.session_state.get(TEACHER_KEY)


def tab_id() -> str:
    """This session as a teacher's tab: its worker and its session (a random name outside a server)."""
    found = st.session_state.get(TAB_KEY)
    if found is None:
        from ui.streamlit_internals import push

        found = st.session_state[TAB_KEY] = f"{WORKER}/{push.this_session() or secrets.token_urlsafe(9)}"
    return found


def browser_id() -> str:
    """This browser session, for the limit on typed room codes (a new one per tab and reload)."""
    return tab_id().rpartition("/")[2]


TRUSTED_PROXIES_ENV = "ATTENTION_TRUSTED_PROXIES"  # the fronts' addresses (deploy/front.py), comma-separated


def client_id() -> str:
    """Who is typing a join code, for its rate limit: the address our proxy (deploy/nginx) saw, which it
    appends last to X-Forwarded-For; the connection's own address when there is no proxy. Behind a front of
    several machines (ATTENTION_TRUSTED_PROXIES: its addresses) the front's own entry is passed over, so the
    address is the browser's as the front saw it, not the front's, which every student would share."""
    ip, forwarded = text_of(st.context.ip_address), text_of(st.context.headers.get("X-Forwarded-For"))
    if ip in ("127.0.0.1", "::1") and forwarded:
        return forwarded_client(forwarded, os.environ.get(TRUSTED_PROXIES_ENV, ""))
    return ip or "unknown"


def forwarded_client(forwarded: str, trusted: str) -> str:
    """The last address of an X-Forwarded-For chain that is not one of the `trusted` proxies (comma-separated):
    entries to its left were written by the browser's side, which may forge them."""
    proxies = {p.strip() for p in trusted.split(",") if p.strip()}
    hops = [h.strip() for h in forwarded.split(",") if h.strip()]
    while len(hops) > 1 and hops[-1] in proxies:
        hops.pop()
    return (hops[-1] if hops else "unknown")[:64]


def text_of(value) -> str:
    """A request's header or cookie as text ("" when absent, or when a test runner has no request)."""
    return value if isinstance(value, str) else ""


def become_teacher(code: str, key: str, *, lead: bool = True) -> None:
    """This session is room `code`'s teacher; with `lead`, its tab is the one the class follows."""
    leave_quietly()
    st.session_state.update({ROOM_KEY: code, ROLE_KEY: "teacher", TEACHER_KEY: key})
    if lead:
        store().take_lead(code, key, tab_id())


def become_ended_teacher(code: str, key: str) -> None:
    """This session is the teacher of room `code`, which has ended: its results, nothing else."""
    leave_quietly()
    st.session_state.update({ROOM_KEY: code, ROLE_KEY: "teacher", TEACHER_KEY: key, ENDED_KEY: True})


def become_student(code: str, sid: str, nickname: str | None) -> None:
    leave_quietly()
    st.session_state.update({ROOM_KEY: code, ROLE_KEY: "student", SID_KEY: sid, NICK_KEY: nickname})


def leave(message: str | None = None) -> None:
    """Leave the room (this browser forgets it: the cookie is cleared too)."""
    leave_quietly()
    if message:
        st.session_state[MESSAGE_KEY] = message


SESSION_KEYS = (ROOM_KEY, ROLE_KEY, TEACHER_KEY, SID_KEY, NICK_KEY, ENDED_KEY, OUTAGE_KEY)
LEFT_BEHIND: list[str] = []  # each role's own keys, forgotten with the room (ui/classroom_student.py adds its own)


def leave_quietly() -> None:
    if in_room():
        st.session_state[CLEAR_COOKIE_KEY] = True
        bar_gone()
    for key in (*SESSION_KEYS, *LEFT_BEHIND):
        st.session_state.pop(key, None)


def join(code: str, nickname: str | None = None, token: str | None = None) -> None:
    """Join room `code` as a student (`token`: the student link's); the store's refusal (a ValueError naming why)
    goes to the caller. A session already a student of that room keeps its seat: a Join pressed twice, or a click
    Streamlit delivers twice (a run cut short keeps its button pressed: ui/streamlit_internals/push.py), counts one
    student, not two, with the nickname it joined with."""
    code = normalise_code(code)
    if in_room() == code and is_student():
        try:
            store().student(code, st.session_state.get(SID_KEY))
            return
        except errors.StoreUnavailable:
            raise
        except errors.ClassroomError:
            pass  # the room no longer knows this seat: a new one
    sid = store().join(code, nickname, client=client_id(), browser=browser_id(), token=token)
    become_student(code, sid, store().student(code, sid))
    st.session_state.pop(JOIN_CARD_KEY, None)
    if nickname is None:
        st.session_state[NAME_CARD_KEY] = True  # offered once in the bar: a link gives no box to type it in


def enter_from_link_or_cookie() -> None:
    """On a session's first run: come back to the room the cookie names (a reload, another worker), or join the
    room of a student link (?room=CODE&join=TOKEN). errors.StoreUnavailable leaves it to a later run.

    The session counts as entered only once that is done. Streamlit stops a run at its next st call or
    session-state access when a newer run is asked for, and a browser that reconnects to a live worker asks
    for two at once (ui/reconnect.py's R, and Streamlit's own rerun of a run the lost worker cut off): a first
    run stopped in here leaves the entry to the next run, instead of leaving the session outside its room."""
    if st.session_state.get(ENTERED_KEY):
        return
    linked = normalise_code(st.query_params.get("room", ""))
    _enter(linked, text_of(st.query_params.get(LINK_TOKEN)) or None, _COOKIE_VALUE.match(browser_cookie()))
    st.session_state[ENTERED_KEY] = True


def _enter(linked: str, token: str | None, found: re.Match | None) -> None:
    if found and (not linked or linked == found.group(2)):
        role, code, secret = found.groups()
        try:
            if role == "t":
                _enter_as_teacher(code, secret)
            else:
                become_student(code, secret, store().student(code, secret))
            return
        except errors.StoreUnavailable:
            raise
        except (errors.ClassroomError, PermissionError):
            pass  # a stale cookie, or a student's room that ended: the cookie is replaced below
    if linked:
        try:
            join(linked, token=token)
        except errors.StoreUnavailable:
            raise
        except errors.ClassroomError as err:
            st.session_state[JOIN_CARD_KEY] = (linked[:12], str(err))


def _enter_as_teacher(code: str, key: str) -> None:
    """A teacher's browser comes back (a reload, another tab, another worker): the controls of an open room, and the
    lead if the leading tab has gone; the results of a room that has ended."""
    try:
        store().check_teacher(code, key)
    except (errors.RoomClosed, errors.RoomExpired):
        store().ended(code, key)  # the key is the room's (PermissionError otherwise) and its answers are still kept
        become_ended_teacher(code, key)
        return
    become_teacher(code, key, lead=False)
    state = store().state(code)
    if state.leader is not None and state.leader != tab_id() and leader_gone(state):
        store().take_lead(code, key, tab_id())


def leader_gone(state) -> bool:
    """Whether the tab that leads room `state` has gone: it was a session of this worker that is no longer
    connected (a reload of the projected tab), or its worker has not seen it for Limits.leader_stale_s."""
    from ui.streamlit_internals import push

    worker, _, session = (state.leader or "").rpartition("/")
    if worker == WORKER:
        alive = push.active_session_ids()
        if alive is not None:
            return session not in alive
    seen = state.leader_seen_at or 0.0
    return store().clock() - seen > store().limits.leader_stale_s


def browser_cookie() -> str:
    """This browser's class cookie as its connection to this server sent it ("" without one)."""
    return text_of(st.context.cookies.get(COOKIE))


def cookie_room() -> str | None:
    """The room this browser's class cookie names (None: none), whether or not the session could enter it yet."""
    found = _COOKIE_VALUE.match(browser_cookie())
    return found.group(2) if found else None


def cookie_role() -> str | None:
    """'t' or 's': the role this browser's class cookie names (None: no cookie)."""
    found = _COOKIE_VALUE.match(browser_cookie())
    return found.group(1) if found else None


def over_https() -> bool:
    """Whether the browser reached the app over HTTPS (directly, or through a proxy that says so)."""
    url = text_of(st.context.url)
    return url.startswith("https:") or text_of(st.context.headers.get("X-Forwarded-Proto")).lower() == "https"


def cookie_script() -> str:
    """A script that writes (or clears) this browser's class cookie. Its value is a code and a random
    token made by the store: nothing a user typed. `Secure` over HTTPS: the browser never sends it in clear."""
    code, role = in_room(), st.session_state.get(ROLE_KEY)
    secret = st.session_state.get(TEACHER_KEY if role == "teacher" else SID_KEY)
    if code and secret and _COOKIE_VALUE.match(f"{role[0]}.{code}.{secret}"):
        value, age = f"{role[0]}.{code}.{secret}", COOKIE_HOURS * 3600
    else:
        value, age = "", 0
    secure = "; secure" if over_https() else ""
    return f"<script>document.cookie = '{COOKIE}={value}; path=/; max-age={age}; samesite=strict{secure}';</script>"


# ------------------------------------------------------------------ screens the watcher pushes
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
    the same on the safety timer. `fragment(watched)` is the one for this session now.

    Each is drawn in a container of the full run's own. A fragment run that starts before the full run's messages
    have left the server (the watcher's push, the moment that run ends) makes Streamlit 1.67 drop the full run's
    deltas of the fragment from its queue and keep its "finished" (ForwardMsgQueue.clear); the browser then clears
    the fragment's block as stale and moves every later element up a place, where the fragment run draws over the
    next one ('Ask the class' under the teacher's bar vanished, 1 reveal in 16). In its own container only the
    fragment's block goes, and comes back in the same place."""
    pushed, timed = st.fragment(body), st.fragment(run_every=SAFETY_S)(body)

    @functools.wraps(body)
    def draw(*args, **kwargs):
        try:
            on_push = watched(store())
        except errors.StoreUnavailable:
            on_push = False
        with st.container():
            return (pushed if on_push else timed)(*args, **kwargs)

    return draw


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
            return Move(page, {k: v for k, v in parse_qsl(query) if k not in NOT_A_VIEW})
    return None


def teacher_view(url_path: str) -> str:
    """The teacher's view as a link: the page and every parameter of its declared state, defaults included
    (so a student's page takes all of them, not only those the teacher's link happens to carry)."""
    page = st.session_state.get(CURRENT_KEY)
    query = page.full_query() if isinstance(page, PageState) else {}
    return f"/{url_path}" + (f"?{urlencode(query)}" if query else "")
