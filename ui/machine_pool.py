"""A few slots per machine for background work (trainings, large sweeps), shared by every server process on it,
and a first-come queue for them whose places a waiting student can be shown.

The workers of deploy/serve.sh are separate processes, and one of them may be killed at any moment (SIGKILL, or
the kernel's out-of-memory killer): the pool lives in files, and every claim on it is an flock(2) lock, which
the kernel drops when its holder dies. There is nothing to clean up after a crash and no count to get wrong.

    <directory>/slot-<i>.lock    one file per slot; holding its lock is holding the slot
    <directory>/queue/<ticket>   one file per waiting work, locked by its waiter; the names sort by arrival

A waiting work's place is 1 + the number of live tickets before its own (a ticket whose lock can be taken has
lost its waiter, and is removed by whoever finds it). Only the first `slots` places try for a slot, so a work
that arrives later cannot take a slot from one that has waited longer.

No streamlit import: the slots are taken by a thread of the server process, and tested without a server.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

SLOTS_ENV = "ATTENTION_BACKGROUND_SLOTS"  # how many background works run at once on this machine
DATA_DIR_ENV = "ATTENTION_DATA_DIR"  # the pool's files are in <data dir>/background (as classroom/store.py's db)
POLL_S = 0.2  # how often a waiting work looks at the queue and the slots
STALE_NEW_TICKET_S = 60.0  # a ticket still being written after this long lost its waiter before it was done


class Cancelled(Exception):
    """The waiting work was cancelled (its `cancelled()` said so) before it had a slot."""


def default_slots() -> int:
    """ATTENTION_BACKGROUND_SLOTS, else one fewer than the machine's cores (one left for the class's clicks)."""
    configured = os.environ.get(SLOTS_ENV, "").strip()
    if configured:
        slots = int(configured)
        if slots < 1:
            raise ValueError(f"{SLOTS_ENV}={configured!r}: at least 1 background work must be able to run")
        return slots
    return max(1, (os.cpu_count() or 1) - 1)


def default_directory() -> Path:
    data = os.environ.get(DATA_DIR_ENV) or Path.home() / ".local" / "share" / "attention-from-scratch"
    return Path(data).expanduser() / "background"


def machine_pool() -> Pool:
    """The pool every server process on this machine shares (read from the environment on each call)."""
    return Pool(default_directory(), default_slots())


class Pool:
    """`slots` slots in `directory`, for every process on the machine that names the same directory."""

    def __init__(self, directory: Path, slots: int):
        if slots < 1:
            raise ValueError(f"a pool needs at least 1 slot, not {slots}")
        self.directory, self.slots = Path(directory), slots
        self.queue = self.directory / "queue"
        self.queue.mkdir(parents=True, exist_ok=True)

    @contextmanager
    def slot(
        self, on_place: Callable[[int], None] | None = None, cancelled: Callable[[], bool] = lambda: False
    ) -> Iterator[int]:
        """Hold a slot for the block (yields its number). While waiting, `on_place(place)` is called with the
        work's place in the queue (1: next) whenever it changes; `cancelled()` is asked at every look, and
        True leaves the queue (raises Cancelled)."""
        fd, number = self._take(on_place, cancelled)
        try:
            yield number
        finally:
            os.close(fd)  # closing the file drops its lock: the slot is free

    def holders(self) -> int:
        """How many slots are held right now, by any process."""
        held = 0
        for i in range(self.slots):
            fd = _try_lock(self.directory / f"slot-{i}.lock")
            if fd is None:
                held += 1
            else:
                os.close(fd)
        return held

    def waiting(self) -> int:
        """How many works wait in the queue right now."""
        return len(self._live_tickets())

    def _take(self, on_place, cancelled) -> tuple[int, int]:
        """(the descriptor holding a slot's lock, the slot's number), once this work's turn has come."""
        ticket, ticket_fd = self._enter_queue()
        try:
            shown = None
            while True:
                if cancelled():
                    raise Cancelled
                tickets = self._live_tickets()
                place = 1 + sum(1 for name in tickets if name < ticket.name)
                if place <= self.slots:
                    for i in range(self.slots):
                        fd = _try_lock(self.directory / f"slot-{i}.lock")
                        if fd is not None:
                            return fd, i
                if place != shown and on_place is not None:
                    on_place(place)
                    shown = place
                time.sleep(POLL_S)
        finally:
            ticket.unlink(missing_ok=True)
            os.close(ticket_fd)

    def _enter_queue(self) -> tuple[Path, int]:
        """A locked ticket named by arrival time; written under a dot-name first, so that no one sees it unlocked."""
        name = f"{time.time_ns():020d}-{os.getpid()}-{threading.get_ident()}-{uuid.uuid4().hex[:8]}"
        draft = self.queue / f".{name}"
        fd = os.open(draft, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        ticket = self.queue / name
        os.rename(draft, ticket)  # the lock is on the file itself and stays with it
        return ticket, fd

    def _live_tickets(self) -> list[str]:
        """The queue's tickets whose waiters are alive; removes those whose waiters died."""
        live = []
        for entry in os.scandir(self.queue):
            path = Path(entry.path)
            if entry.name.startswith("."):
                _remove_if_stale_draft(path)
                continue
            fd = _try_lock(path, create=False)
            if fd is None:
                live.append(entry.name)
            elif fd >= 0:  # its waiter died (the kernel dropped its lock): out of the queue
                path.unlink(missing_ok=True)
                os.close(fd)
        return live


def _try_lock(path: Path, create: bool = True) -> int | None:
    """An open descriptor holding `path`'s lock, or None if another holds it (-1: the file is gone)."""
    try:
        fd = os.open(path, os.O_RDWR | (os.O_CREAT if create else 0), 0o600)
    except FileNotFoundError:
        return -1
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _remove_if_stale_draft(path: Path) -> None:
    try:
        if time.time() - path.stat().st_mtime > STALE_NEW_TICKET_S:
            path.unlink(missing_ok=True)
    except FileNotFoundError:
        pass
