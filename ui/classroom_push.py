"""The teacher's actions pushed to the students' screens, and the students' to the teacher's: one watcher per
server process.

No screen polls the store: a timer fragment costs 2.2-2.4 ms a rerun (docs/classroom.md), and 30 students
polling every second would double the server's CPU. Instead, every time a room's screen runs (a student's bar,
the teacher's bar or dashboard) it tells this process's watcher which room it drew and at which version
(classroom.store: every
teacher action bumps it; every join and answer bumps the room's activity, which only the teacher's screens
show). The watcher, a daemon thread started with the first screen, asks the store for the pulses of the rooms
its sessions are in (version, activity, view: one small query, whichever the number of screens) every
PUSH_EVERY_S, and at once after a write of this process (Store.after_write: the teacher's click, a student's
answer), and then:
- a following student whose room now shows another view runs that page at once (the browser follows, as it
  follows Back): the move costs the server the page's run only, as a student's own click on that page would;
- any other screen whose room changed reruns its fragment (ui/streamlit_internals/push.py): a student's bar
  for a pause, a question, a reveal; the teacher's bar and dashboard for a join or an answer.
Workers on other machines see the same pulses in the same database (PostgreSQL), so the teacher may be on any
worker. There PostgreSQL tells every watcher of each committed write (LISTEN/NOTIFY: Store.listen), so a worker
looks as soon as another host writes, and otherwise every LISTEN_EVERY_S only; with SQLite, on one machine, a
worker learns of another's writes at its next look, every PUSH_EVERY_S.

Every HEARTBEAT_S the watcher also tells the store which students' and leading teacher tabs' browsers it holds
connected (Store.seen: who is here now, and whether the tab the class follows has gone), and pushes a teacher's
screens when the number of students here in their room changed.

A session leaves the watcher when its screen says so (it left the room, or changed role), when its browser
is no longer connected to this server, and when its room closed or expired (its screen is rerun once, to say
so). At most MAX_SESSIONS are watched; past that a screen relies on its safety timer. A database that does not
answer is logged once a minute (`log_once`), not at every look.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

PUSH_EVERY_S = 0.5  # how often the watcher asks the store (for writes made by other workers)
LISTEN_EVERY_S = 2.0  # how often it looks anyway while PostgreSQL tells it of every write (Store.listen)
LISTEN_RETRY_S = 1.0  # how soon it listens again after the database's connection was lost
HEARTBEAT_S = 15.0  # how often it tells the store which students and leading tabs it holds connected
PURGE_EVERY_S = 3600.0  # how often it deletes the rooms past their keeping time (Store.purge)
RETRY_S = 10.0  # a screen asked to redraw that no run has redrawn since is asked again after this
MAX_SESSIONS = 5000

_LOGGER = logging.getLogger(__name__)


@dataclass
class _Screen:
    code: str
    fragment_id: str
    version: int  # the room's version the screen drew
    activity: int | None = None  # a teacher's screen: the room's activity it drew; None: a student's bar
    at: str | None = None  # a following student's: the view the page shows; None: not following (never moved)
    asked: tuple | None = None  # the room's (version, activity) the screen was last asked to redraw for ...
    asked_at: float = 0.0  # ... and when (time.monotonic())
    seat: str | None = None  # a student's bar: the student's id (who is here now)
    leader: str | None = None  # a teacher's screen in the tab the class follows: that tab's name
    tab: str | None = None  # a teacher's screen: its tab's name (the one to lead if the leading tab's worker died)
    wake_at: float | None = None  # when to redraw it although the room has not changed (a question's time is up)


class Watcher:
    """The sessions of this process that show a room, and what of the room they drew.

    `pulses(codes) -> {code: RoomPulse}` reads the open rooms' pulses (Store.pulses: version, activity, view);
    `rerun(session_id, fragment_id) -> bool` asks a session to rerun a fragment; `move(session_id, view,
    fragment_id) -> bool` to run the page of `view` (False: the session is gone); `alive() -> set | None` the
    ids of the sessions still connected (None: unknown); `seen(seats, leaders)` tells the store who is connected
    and `here(codes) -> {code: students here}` reads who is here (Store.seen, Store.here), every `heartbeat_s`;
    `release(tabs=, codes=, stale_s=)` lets go the lead of a teacher's tab whose browser has gone, or that no worker
    has seen for `leader_stale_s` (Store.release_leads); `purge()` deletes the rooms past their keeping time, every
    PURGE_EVERY_S (Store.purge)."""

    def __init__(
        self,
        pulses: Callable[[list[str]], dict],
        rerun: Callable[[str, str], bool],
        move: Callable[[str, str, str], bool] | None = None,
        alive: Callable[[], set[str] | None] = lambda: None,
        every_s: float = PUSH_EVERY_S,
        max_sessions: int = MAX_SESSIONS,
        retry_s: float = RETRY_S,
        seen: Callable[[list[str], list[str]], None] | None = None,
        here: Callable[[list[str]], dict[str, int]] | None = None,
        heartbeat_s: float = HEARTBEAT_S,
        release: Callable[..., list[str]] | None = None,
        leader_stale_s: float = 30.0,
        purge: Callable[[], int] | None = None,
        listen: Callable[[Callable[[], None], threading.Event], None] | None = None,
        listen_every_s: float = LISTEN_EVERY_S,
    ) -> None:
        self.pulses, self.rerun, self.move, self.alive = pulses, rerun, move, alive
        self.every_s, self.max_sessions, self.retry_s = every_s, max_sessions, retry_s
        self.seen, self.here, self.heartbeat_s = seen, here, heartbeat_s
        self.release, self.leader_stale_s = release, leader_stale_s
        self.purge, self.last_purge = purge, -PURGE_EVERY_S
        self.listen, self.listen_every_s = listen, listen_every_s
        self.listening = False  # the database tells this watcher of every write (listen holds): look less often
        self.last_beat = -heartbeat_s  # time.monotonic() of the last heartbeat: the first look sends one
        self.here_counts: dict[str, int] = {}  # room code -> students here at the last heartbeat (teachers' rooms)
        self.screens: dict[str, dict[str, _Screen]] = {}  # session id -> {fragment id: a screen of that session}
        self.moves: dict[str, str] = {}  # session id -> the view it was sent to, until its run takes it (moved_here)
        self.latest: dict = {}  # room code -> its pulse at the last look
        self.states: dict = {}  # room code -> the room's state read at that pulse (room_state); bounded like latest
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None
        self.listener: threading.Thread | None = None
        self.stopped = threading.Event()
        self.wake = threading.Event()

    def follow(
        self,
        session_id: str,
        code: str,
        fragment_id: str,
        version: int,
        activity: int | None = None,
        at: str | None = None,
        seat: str | None = None,
        leader: str | None = None,
        tab: str | None = None,
    ) -> bool:
        """The screen of `session_id` (fragment `fragment_id`) drew room `code` at `version` (a teacher's: and at
        `activity`, its `tab`'s name, and `leader`, that name again if the class follows it; a student's: its
        `seat`, and for a following student the view `at`); False if the watcher is full (the screen then relies on
        its timer). A session has a few screens at most (the teacher's bar and dashboard): `forget` drops them all
        before a full run draws its own."""
        with self.lock:
            if session_id not in self.screens and len(self.screens) >= self.max_sessions:
                return False
            screen = _Screen(code, fragment_id, version, activity, at, seat=seat, leader=leader, tab=tab)
            self.screens.setdefault(session_id, {})[fragment_id] = screen
        return True

    def redraw_at(self, session_id: str, fragment_id: str, at: float) -> bool:
        """Redraw the screen `fragment_id` of `session_id` at `at` (time.monotonic()) even if its room has not
        changed by then: what it shows changes with the time (a question's answers close). False if the watcher
        does not hold that screen (the screen then relies on its timer)."""
        with self.lock:
            screen = self.screens.get(session_id, {}).get(fragment_id)
            if screen is None:
                return False
            screen.wake_at = at
        return True

    def has_room_for(self, session_id: str) -> bool:
        """Whether a screen of `session_id` would be watched (else it keeps a timer)."""
        with self.lock:
            return session_id in self.screens or len(self.screens) < self.max_sessions

    def forget(self, session_id: str) -> None:
        with self.lock:
            self.screens.pop(session_id, None)
            self.moves.pop(session_id, None)

    def caught_up(self, session_id: str, version: int) -> None:
        """The teacher of `session_id` made the room's version `version` itself (a move): its screen, which drew
        the version before, has nothing new to show."""
        with self.lock:
            for screen in self.screens.get(session_id, {}).values():
                if screen.activity is not None and screen.version == version - 1:
                    screen.version = version

    def room_state(self, code: str, read: Callable):
        """The state of room `code` (RoomState), read with `read(code)` only when the room changed since it was
        last read here: the students of a room on this worker (30 page runs per move) share one read. It may lag
        the database by one look (a write of another worker): the screen that drew it registers that version, and
        the look that finds the newer one pushes it again."""
        with self.lock:
            pulse, cached = self.latest.get(code), self.states.get(code)
        if (
            cached is not None
            and pulse is not None
            and (cached.version, cached.activity) == (pulse.version, pulse.activity)
        ):
            return cached
        state = read(code)
        with self.lock:
            if code in self.latest:
                self.states[code] = state
        return state

    def take_move(self, session_id: str) -> str | None:
        with self.lock:
            return self.moves.pop(session_id, None)

    def poke(self) -> None:
        """Look now, not at the next tick (a write of this process: Store.after_write)."""
        self.wake.set()

    def heartbeat(self, now: float | None = None) -> list[str]:
        """Every `heartbeat_s`: tell the store which students and leading tabs this process holds connected, and
        push the teachers' screens of the rooms whose number of students here changed; returns those sessions."""
        now = time.monotonic() if now is None else now
        if self.seen is None or now - self.last_beat < self.heartbeat_s:
            return []
        self.last_beat = now
        if self.purge is not None and now - self.last_purge >= PURGE_EVERY_S:
            self.last_purge = now
            self.purge()
        alive = self.alive()
        with self.lock:
            screens = [
                (sid, screen)
                for sid, held in self.screens.items()
                if alive is None or sid in alive
                for screen in held.values()
            ]
        self.seen(sorted({s.seat for _, s in screens if s.seat}), sorted({s.leader for _, s in screens if s.leader}))
        teachers = [(sid, screen) for sid, screen in screens if screen.activity is not None]
        if self.here is None or not teachers:
            return []
        codes = sorted({screen.code for _, screen in teachers})
        if self.release is not None:  # a leading tab whose worker died: a teacher's tab here takes the lead
            successors = {screen.code: screen.tab for _, screen in teachers if screen.tab}
            self.release(codes=codes, stale_s=self.leader_stale_s, successors=successors)
        counts = self.here(codes)
        changed = {code for code, n in counts.items() if self.here_counts.get(code, n) != n}
        self.here_counts = counts
        pushed = []
        for sid, screen in teachers:
            if screen.code in changed and self.rerun(sid, screen.fragment_id) and sid not in pushed:
                pushed.append(sid)
        return pushed

    def check(self) -> list[str]:
        """One look: push to every session whose room changed since its screen drew it; returns their ids. A screen
        is asked once per change: its next run tells the watcher what it drew (follow); a screen that no run has
        redrawn within `retry_s` (the push was lost in a race with a run of the browser) is asked again."""
        now = time.monotonic()
        alive = self.alive()
        with self.lock:
            gone_leaders = []
            if alive is not None:
                for sid in [sid for sid in self.screens if sid not in alive]:
                    gone_leaders += [s.leader for s in self.screens[sid].values() if s.leader]
                    del self.screens[sid]
                for sid in [sid for sid in self.moves if sid not in alive]:
                    del self.moves[sid]
            drawn = [(sid, screen) for sid, held in self.screens.items() for screen in held.values()]
            if not drawn:
                self.latest, self.states = {}, {}
        if gone_leaders and self.release is not None:
            self.release(tabs=gone_leaders)  # a reload of the leading tab, or its tab closed: the next tab leads
        if not drawn:
            return []
        found = self.pulses(sorted({screen.code for _, screen in drawn}))
        with self.lock:
            self.latest = found
            self.states = {code: state for code, state in self.states.items() if code in found}
        pushed = []
        for sid, screen in drawn:
            pulse = found.get(screen.code)  # None: the room closed or expired
            if screen.wake_at is not None and now >= screen.wake_at and pulse is not None:
                with self.lock:
                    screen.wake_at = None  # once: its run will say whether to wake it again
                if self.rerun(sid, screen.fragment_id) and sid not in pushed:
                    pushed.append(sid)
                continue
            if pulse is not None and pulse.version == screen.version and screen.activity in (None, pulse.activity):
                continue
            # what the screen is asked to show: a student's screen shows the version only (a join or an answer,
            # which bump the activity, is the teacher's news), so it is not asked again for one
            wanted = None if pulse is None else (pulse.version, None if screen.activity is None else pulse.activity)
            if pulse is not None and screen.asked == wanted and now - screen.asked_at < self.retry_s:
                continue
            moving = pulse is not None and screen.at is not None and pulse.view is not None and pulse.view != screen.at
            if moving and self.move is not None:
                with self.lock:
                    self.moves[sid] = pulse.view
                sent = self.move(sid, pulse.view, screen.fragment_id)
            else:
                sent = self.rerun(sid, screen.fragment_id)
            with self.lock:
                held = self.screens.get(sid, {})
                if held.get(screen.fragment_id) is screen:  # not redrawn meanwhile
                    if sent and pulse is not None:
                        screen.asked, screen.asked_at = wanted, now  # the screen's run will say what it drew
                    else:
                        del held[screen.fragment_id]  # the session is gone, or its room is (its screen was told)
                        if not held:
                            del self.screens[sid]
            if sent and sid not in pushed:
                pushed.append(sid)
        return pushed

    def start(self) -> None:
        """The watching thread, once (a daemon: it ends with the server)."""
        with self.lock:
            if self.thread is not None:
                return
            self.thread = threading.Thread(target=self._run, name="classroom-push", daemon=True)
            if self.listen is not None:
                self.listener = threading.Thread(target=self._listen, name="classroom-listen", daemon=True)
        self.thread.start()
        if self.listener is not None:
            self.listener.start()

    def stop(self) -> None:
        self.stopped.set()
        self.wake.set()

    def next_look_s(self, now: float | None = None) -> float:
        """How long the thread waits for a poke before it looks anyway: `every_s`, or `listen_every_s` while the
        database tells it of every write; sooner when a screen is due to be woken (a question's time is up)."""
        now = time.monotonic() if now is None else now
        wait = self.listen_every_s if self.listening else self.every_s
        with self.lock:
            due = [s.wake_at for held in self.screens.values() for s in held.values() if s.wake_at is not None]
        return max(0.0, min([wait, *(at - now for at in due)]))

    def _heard(self) -> None:
        self.listening = True
        self.wake.set()

    def _listen(self) -> None:
        """Hear every write of the store by any process (`listen`: PostgreSQL's LISTEN/NOTIFY), and look at once;
        listen again after a lost connection, looking every `every_s` meanwhile."""
        while not self.stopped.is_set():
            try:
                self.listen(self._heard, self.stopped)
            except Exception as err:  # noqa: BLE001 - a database that went away: listen again, say it once a minute
                log_once(f"the classroom watcher could not listen to its database: {err}", exc=err)
            self.listening = False
            self.stopped.wait(LISTEN_RETRY_S)

    def _run(self) -> None:
        while not self.stopped.is_set():
            self.wake.wait(self.next_look_s())
            self.wake.clear()
            if self.stopped.is_set():
                return
            try:
                self.check()
                self.heartbeat()
            except Exception as err:  # noqa: BLE001 - a database that does not answer: look again, say it once a minute
                log_once(f"the classroom watcher could not read its rooms: {err}", exc=err)


_logged: dict[str, float] = {}  # bounded: cleared past 100 problems; a problem -> when it was last logged
_logged_lock = threading.Lock()
LOG_EVERY_S = 60.0


def log_once(problem: str, every_s: float = LOG_EVERY_S, exc: BaseException | None = None) -> bool:
    """Log `problem` (a message without a password) as one line, at most once per `every_s` per problem, whichever
    thread meets it (every student's run, the watcher); whether it was logged now. An error that is not the
    database's known kind (`exc`, not a ClassroomError) is logged with its traceback, still once a minute."""
    now = time.monotonic()
    with _logged_lock:
        if now - _logged.get(problem, -every_s) < every_s:
            return False
        if len(_logged) > 100:
            _logged.clear()
        _logged[problem] = now
    from classroom.errors import ClassroomError

    trace = exc is not None and not isinstance(exc, ClassroomError)
    _LOGGER.warning("class mode: %s", problem, exc_info=exc if trace else None)
    return True


_watchers: dict[int, Watcher] = {}  # bounded: one per store (classroom_session._opened: one per URL)
_watchers_lock = threading.Lock()


def watcher_for(store) -> Watcher:
    """This process's watcher of `store`'s rooms, started on first use."""
    from ui.streamlit_internals import push

    with _watchers_lock:
        watcher = _watchers.get(id(store))
        if watcher is None:
            watcher = _watchers[id(store)] = Watcher(
                store.pulses,
                push.rerun_fragment,
                _move_page,
                push.active_session_ids,
                seen=store.seen,
                here=store.here,
                release=store.release_leads,
                leader_stale_s=store.limits.leader_stale_s,
                purge=store.purge,
                listen=store.listen if store.listens() else None,
            )
            store.after_write.append(watcher.poke)
    watcher.start()
    return watcher


def _move_page(session_id: str, view: str, fragment_id: str) -> bool:
    """Run the page of `view` ("/path?query", a link the store checked) in session `session_id`."""
    from ui.streamlit_internals import push

    path, _, query = view.partition("?")
    return push.run_page(session_id, path.strip("/"), query, fragment_id)


def moved_here() -> str | None:
    """The view a watcher sent this session to, if it has not run since (taken once)."""
    from ui.streamlit_internals import push

    session_id = push.this_session()
    if session_id is None:
        return None
    with _watchers_lock:
        watchers = list(_watchers.values())
    found = None
    for watcher in watchers:
        found = watcher.take_move(session_id) or found
    return found


def room_state(store, code: str):
    """The state of room `code` for a student's screen: shared by the students of this worker (Watcher.room_state);
    read from `store` outside a server. Never for a teacher, whose own clicks must show at once."""
    from ui.streamlit_internals import push

    if push.this_session() is None:
        return store.state(code)
    return watcher_for(store).room_state(code, store.state)


def watched(store) -> bool:
    """Whether the screens this session draws now are pushed by this process's watcher: False outside a server
    (AppTest) or with the watcher full, where a screen keeps its safety timer."""
    from ui.streamlit_internals import push

    session_id = push.this_session()
    return session_id is not None and watcher_for(store).has_room_for(session_id)


def screen_drawn(
    store,
    code: str,
    version: int,
    activity: int | None = None,
    at: str | None = None,
    seat: str | None = None,
    leader: str | None = None,
    tab: str | None = None,
) -> bool:
    """Called by a room's screen (a fragment) as it draws room `code` at `version`: the watcher pushes to it
    when the room changes, and tells the store the screen's `seat` or `leader` tab is connected (see
    Watcher.follow). False outside a server (AppTest) or a fragment, or with the watcher full: the screen's timer
    only."""
    from ui.streamlit_internals import push

    here = push.this_fragment()
    if here is None:
        return False
    session_id, fragment_id = here
    return watcher_for(store).follow(session_id, code, fragment_id, version, activity, at, seat, leader, tab)


def redraw_in(store, seconds: float) -> bool:
    """The screen (a fragment) running now is redrawn in `seconds` although its room does not change meanwhile
    (Watcher.redraw_at). False outside a server or a fragment, or unwatched: the screen's timer only."""
    from ui.streamlit_internals import push

    here = push.this_fragment()
    if here is None:
        return False
    session_id, fragment_id = here
    return watcher_for(store).redraw_at(session_id, fragment_id, time.monotonic() + seconds)


def caught_up(store, version: int) -> None:
    """This session's teacher made `store`'s room version `version` by a move of its own (Watcher.caught_up)."""
    from ui.streamlit_internals import push

    session_id = push.this_session()
    if session_id is not None:
        with _watchers_lock:
            watcher = _watchers.get(id(store))
        if watcher is not None:
            watcher.caught_up(session_id, version)


def bar_gone() -> None:
    """This session shows no room screen any more (it left the room), or a full run is about to draw the ones it
    shows (app.py's room_bar: a screen it does not draw again is not pushed to any more)."""
    from ui.streamlit_internals import push

    session_id = push.this_session()
    if session_id is not None:
        with _watchers_lock:
            watchers = list(_watchers.values())
        for watcher in watchers:
            watcher.forget(session_id)
