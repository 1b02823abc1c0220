"""Long work off the server's request path: a training runs in a child process at the lowest CPU priority, a few
at a time per machine.

A training of many seconds (the induction model's 2000 steps, the scaling page's largest comparison) would
otherwise run inside the server process that answers every student's clicks, and take a core from them for
its whole length. In a child at `nice 19`, the operating system gives the class's runs the CPU first and the
training what is left; the server process itself only relays the progress to the page's bar (it waits on a
queue, using no CPU). The child dies with the server (Linux's parent-death signal).

Thirty students dragging a slider would start thirty children of about 100 MB each: the children take a slot
of the machine's pool first (ui/machine_pool.py: ATTENTION_BACKGROUND_SLOTS, by default one fewer than the
cores, shared by every worker of deploy/serve.sh), and a work that waits for one is told its place in the queue
(`on_queue`). The same work asked again in this process while it waits or runs (the same function and config:
two students on the same slider) is shared, not started twice. A work runs only while some page waits for it:
when the last one stops waiting (the student left the page, or the session ended, and Streamlit raised in the
page's next call to `on_queue` or `on_step`), the work leaves the queue, or its child is stopped.

A spawned child would re-run the app's script before anything else: it is started without it
(ui/streamlit_internals/spawn.py).
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from locales import tr_n
from ui.machine_pool import Cancelled, Pool, machine_pool
from ui.run_gate import outside_run_gate
from ui.streamlit_internals.spawn import spawn_without_main

T = TypeVar("T")
NICE = 19  # the lowest priority: a class's clicks always come first
PROGRESS_EVERY = 10  # steps between two progress messages
HEARTBEAT_S = 1.0  # a waiting page hears of its place at least this often, so that Streamlit can stop it there
KEPT_STEPS = 1000  # progress messages kept for the pages that share a work (bounded: older ones are dropped)


def queue_message(place: int, slots: int) -> str:
    """What a page says while its work waits for a slot: its place in the machine's queue (1: next)."""
    if place == 1:
        return tr_n(
            "Waiting for a free place to run: you are next (this server runs one long computation at a time).",
            "Waiting for a free place to run: you are next (this server runs {slots} long computations at a time).",
            slots,
            slots=slots,
        )
    return tr_n(
        "Waiting for a free place to run: {ahead} ahead of you in the queue "
        "(this server runs one long computation at a time).",
        "Waiting for a free place to run: {ahead} ahead of you in the queue "
        "(this server runs {slots} long computations at a time).",
        slots,
        ahead=place - 1,
        slots=slots,
    )


def run_niced(
    fn: Callable[..., T],
    config: Any,
    on_step: Callable[[int, int], None] | None = None,
    on_queue: Callable[[int, int], None] | None = None,
) -> T:
    """`fn(config, on_step=...)` in a child process at nice 19, once a slot of the machine's pool is free;
    `on_step(done, total)` is called here as the child reports progress, and `on_queue(place, slots)` while it
    waits for a slot (on every change of place, and at least every HEARTBEAT_S). An exception raised by either
    stops waiting for the work (which stops the work if no other page waits for it). `fn` must be a module-level
    function and its result picklable. Raises RuntimeError if the child fails or ends without a result."""
    job = _Job.attach(fn, config)
    try:
        with outside_run_gate():  # this thread only waits from here on: other sessions' runs may go first
            return job.follow(on_step, on_queue)
    finally:
        job.detach()


class _Job:
    """One work and the pages waiting for it. A thread of its own takes a slot and relays the child's messages
    into this object; each waiting page's thread reads them from here (Streamlit can stop a page only in its
    own thread)."""

    running: dict[tuple, _Job] = {}  # bounded: a work is removed when it ends, and works wait for few slots
    lock = threading.Lock()

    def __init__(self, fn: Callable, config: Any, key: tuple, pool: Pool):
        self.fn, self.config, self.key, self.pool = fn, config, key, pool
        self.changed = threading.Condition(_Job.lock)
        self.place: int | None = None  # in the machine's queue, while waiting for a slot
        self.steps: list[tuple[int, int]] = []
        self.dropped = 0  # steps removed from the front of `steps`
        self.outcome: tuple[str, Any] | None = None  # ("done", result) or ("failed", message)
        self.watchers = 0
        self.cancelled = False

    @classmethod
    def attach(cls, fn: Callable, config: Any) -> _Job:
        """The work of `fn` on `config` already waiting or running in this process, or a new one, started."""
        try:
            key = (fn.__module__, fn.__qualname__, config)
            hash(key)
        except TypeError:  # an unhashable config: its work is never shared
            key = (fn.__module__, fn.__qualname__, object())
        with cls.lock:
            job = cls.running.get(key)
            if job is None or job.cancelled:
                job = cls.running[key] = _Job(fn, config, key, machine_pool())
                threading.Thread(target=job._run, name="attention-background", daemon=True).start()
            job.watchers += 1
            return job

    def detach(self) -> None:
        """This page stops waiting; the last page to do so before the end cancels the work."""
        with self.changed:
            self.watchers -= 1
            if self.watchers == 0 and self.outcome is None:
                self.cancelled = True
                self.changed.notify_all()

    def follow(self, on_step, on_queue):
        """Report the work's place and progress to this page until it ends; its result, or RuntimeError."""
        seen_step, shown_place, shown_at = self.dropped, None, 0.0
        while True:
            with self.changed:
                if self.outcome is None and self.place == shown_place and self.dropped + len(self.steps) == seen_step:
                    self.changed.wait(timeout=HEARTBEAT_S / 2)  # until something changes, or the next heartbeat
                outcome, place = self.outcome, self.place
                start = max(seen_step, self.dropped)
                new_steps = self.steps[start - self.dropped :]
                seen_step = self.dropped + len(self.steps)
            if on_queue is not None and place is not None:
                if place != shown_place or time.monotonic() - shown_at >= HEARTBEAT_S:
                    on_queue(place, self.pool.slots)
                    shown_place, shown_at = place, time.monotonic()
            if on_step is not None:
                for done, total in new_steps:
                    on_step(done, total)
            if outcome is not None:
                kind, payload = outcome
                if kind == "done":
                    return payload
                raise RuntimeError(payload)

    def _publish(self, **changes) -> None:
        with self.changed:
            for name, value in changes.items():
                setattr(self, name, value)
            self.changed.notify_all()

    def _run(self) -> None:
        try:
            with self.pool.slot(on_place=lambda place: self._publish(place=place), cancelled=lambda: self.cancelled):
                self._publish(place=None)
                outcome = self._run_child()
        except Cancelled:
            outcome = ("failed", "the work was cancelled")
        except Exception as exc:  # noqa: BLE001 - the pool's files could not be used: said to every waiting page
            outcome = ("failed", f"the work could not start: {type(exc).__name__}: {exc}")
        with self.changed:
            self.outcome = outcome
            if _Job.running.get(self.key) is self:
                del _Job.running[self.key]
            self.changed.notify_all()

    def _run_child(self) -> tuple[str, Any]:
        ctx = multiprocessing.get_context("spawn")  # a clean interpreter: no fork of the server's threads
        messages = ctx.Queue()
        child = ctx.Process(
            target=_child, args=(self.fn, self.config, messages), daemon=True, name="attention-training"
        )
        spawn_without_main()
        child.start()
        try:
            while not self.cancelled:
                try:
                    kind, payload = messages.get(timeout=0.2)
                except queue.Empty:
                    if not child.is_alive():
                        return ("failed", f"the training process ended without a result (code {child.exitcode})")
                    continue
                if kind == "step":
                    self._add_step(payload)
                elif kind == "done":
                    return ("done", payload)
                elif kind == "error":
                    return ("failed", f"the training failed: {payload}")
            return ("failed", "the work was cancelled")
        finally:
            if child.is_alive():  # no page waits for it any more: the work is of no use
                child.terminate()
            child.join(timeout=5)
            if child.is_alive():
                child.kill()  # the slot is given back only once the child is gone
                child.join()
            messages.close()

    def _add_step(self, step: tuple[int, int]) -> None:
        with self.changed:
            self.steps.append(step)
            excess = len(self.steps) - KEPT_STEPS
            if excess > 0:
                del self.steps[:excess]
                self.dropped += excess
            self.changed.notify_all()


@contextmanager
def queue_notice() -> Iterator[Callable[[int, int], None]]:
    """An `on_queue` for a page without a progress bar: a box with the work's place in the queue, drawn only if
    the work waits, and removed when the block ends."""
    import streamlit as st  # here, not above: the training child imports this module and needs no Streamlit

    box = None

    def on_queue(place: int, slots: int) -> None:
        nonlocal box
        box = box or st.empty()
        box.info(queue_message(place, slots), icon=":material/hourglass_empty:")

    try:
        yield on_queue
    finally:
        if box is not None:
            box.empty()


@contextmanager
def one_at_a_time(lock: threading.Lock, on_wait: Callable[[], None]) -> Iterator[None]:
    """Hold `lock` for the block; call `on_wait()` first only if someone else holds it, so that a page says
    it is waiting for another student's training only when it is."""
    if not lock.acquire(blocking=False):
        on_wait()
        lock.acquire()
    try:
        yield
    finally:
        lock.release()


def _child(fn: Callable, config: Any, messages) -> None:
    _die_with_parent()
    os.nice(NICE)
    _any_core()
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")  # one core at most, as in the server

    def report(done: int, total: int) -> None:
        if done % PROGRESS_EVERY == 0 or done == total:
            messages.put(("step", (done, total)))

    try:
        messages.put(("done", fn(config, on_step=report)))
    except Exception as exc:  # noqa: BLE001 - reported to the page, which shows a message
        messages.put(("error", f"{type(exc).__name__}: {exc}"))


def _die_with_parent() -> None:
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG: end with the server
    except (OSError, AttributeError):
        pass


def _any_core() -> None:
    """A worker pinned to one core (deploy/serve.py --pin) passes that on to its children: a training may run on
    any core, at its low priority, so it takes the idle time of the others rather than its own worker's."""
    try:
        os.sched_setaffinity(0, range(os.cpu_count() or 1))  # the kernel keeps only the cores this process may use
    except (AttributeError, OSError):
        pass
