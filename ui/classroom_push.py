"""The teacher's actions pushed to the students' bars: one watcher per server process.

A student's bar (ui/classroom_room._student_bar, an st.fragment) used to rerun every second to read the room
from the store: about 6 ms of server CPU per student per second, whatever the teacher did, and any one-second
timer fragment costs 2.2-2.4 ms a rerun (bench/fragment_floor.py), so 30 students could not stay within 15 %
of the server's CPU by polling. Instead, every time a student's bar runs it tells this process's watcher which
room it drew and at which version (classroom.store: every teacher action bumps it). The watcher, a daemon
thread started with the first bar, asks the store once a second for the versions of the rooms its sessions
are in (one small query, whichever the number of students) and has the bar of every session whose room
changed rerun at once (ui/streamlit_internals/push.py). Workers on other machines see the same versions in
the same database (PostgreSQL), so the teacher may be on any worker.

A session leaves the watcher when its bar says so (it left the room, or became the teacher), when its browser
is no longer connected to this server, and when its room closed or expired (its bar is rerun once, to say
so). At most MAX_SESSIONS are watched; past that a bar relies on its safety timer.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

PUSH_EVERY_S = 1.0  # how often the watcher asks the store: the teacher's move reaches a bar within about this
MAX_SESSIONS = 5000

_LOGGER = logging.getLogger(__name__)


@dataclass
class _Bar:
    code: str
    fragment_id: str
    version: int  # the room's version the bar drew


class Watcher:
    """The sessions of this process that show a room's bar, and the room versions they drew.

    `versions(codes) -> {code: version}` reads the open rooms' versions (Store.versions); `rerun(session_id,
    fragment_id) -> bool` asks a session to rerun its bar (False: the session is gone); `alive() -> set | None`
    the ids of the sessions still connected (None: unknown)."""

    def __init__(
        self,
        versions: Callable[[list[str]], dict[str, int]],
        rerun: Callable[[str, str], bool],
        alive: Callable[[], set[str] | None] = lambda: None,
        every_s: float = PUSH_EVERY_S,
        max_sessions: int = MAX_SESSIONS,
    ) -> None:
        self.versions, self.rerun, self.alive = versions, rerun, alive
        self.every_s, self.max_sessions = every_s, max_sessions
        self.bars: dict[str, _Bar] = {}  # session id -> its bar
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None
        self.stopped = threading.Event()

    def follow(self, session_id: str, code: str, fragment_id: str, version: int) -> bool:
        """The bar of `session_id` (fragment `fragment_id`) drew room `code` at `version`; False if the watcher
        is full (the bar then relies on its timer)."""
        with self.lock:
            if session_id not in self.bars and len(self.bars) >= self.max_sessions:
                return False
            self.bars[session_id] = _Bar(code, fragment_id, version)
        return True

    def forget(self, session_id: str) -> None:
        with self.lock:
            self.bars.pop(session_id, None)

    def check(self) -> list[str]:
        """One look: rerun the bar of every session whose room changed since it drew it; returns their ids."""
        alive = self.alive()
        with self.lock:
            if alive is not None:
                for sid in [sid for sid in self.bars if sid not in alive]:
                    del self.bars[sid]
            bars = dict(self.bars)
        if not bars:
            return []
        found = self.versions(sorted({bar.code for bar in bars.values()}))
        pushed = []
        for sid, bar in bars.items():
            now = found.get(bar.code)  # None: the room closed or expired
            if now == bar.version:
                continue
            sent = self.rerun(sid, bar.fragment_id)
            with self.lock:
                if self.bars.get(sid) is bar:  # not redrawn meanwhile
                    if sent and now is not None:
                        bar.version = now  # asked once: the bar's run says which version it drew
                    else:
                        del self.bars[sid]  # the session is gone, or its room is (its bar was told)
            if sent:
                pushed.append(sid)
        return pushed

    def start(self) -> None:
        """The watching thread, once (a daemon: it ends with the server)."""
        with self.lock:
            if self.thread is not None:
                return
            self.thread = threading.Thread(target=self._run, name="classroom-push", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.stopped.set()

    def _run(self) -> None:
        while not self.stopped.wait(self.every_s):
            try:
                self.check()
            except Exception:  # noqa: BLE001 - a database hiccup: the bars keep their timers; look again
                _LOGGER.warning("the classroom watcher could not read the rooms' versions", exc_info=True)


_watchers: dict[int, Watcher] = {}  # bounded: one per store, and stores come from classroom_room._open (one per URL)
_watchers_lock = threading.Lock()


def watcher_for(store) -> Watcher:
    """This process's watcher of `store`'s rooms, started on first use."""
    from ui.streamlit_internals import push

    with _watchers_lock:
        watcher = _watchers.get(id(store))
        if watcher is None:
            watcher = _watchers[id(store)] = Watcher(store.versions, push.rerun_fragment, push.active_session_ids)
    watcher.start()
    return watcher


def bar_drawn(store, code: str, version: int) -> bool:
    """Called by a student's bar as it draws room `code` at `version`: the watcher reruns it when the room
    changes. False outside a server (AppTest) or a fragment, or with the watcher full: the bar's timer only."""
    from ui.streamlit_internals import push

    here = push.this_fragment()
    if here is None:
        return False
    session_id, fragment_id = here
    return watcher_for(store).follow(session_id, code, fragment_id, version)


def bar_gone() -> None:
    """This session shows no student bar any more (it left the room, or became its teacher)."""
    from ui.streamlit_internals import push

    session_id = push.this_session()
    if session_id is not None:
        with _watchers_lock:
            watchers = list(_watchers.values())
        for watcher in watchers:
            watcher.forget(session_id)
