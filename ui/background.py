"""Long work off the server's request path: a training runs in a child process at the lowest CPU priority.

A training of many seconds (the induction model's 2000 steps, the scaling page's largest comparison) would
otherwise run inside the server process that answers every student's clicks, and take a core from them for
its whole length. In a child at `nice 19`, the operating system gives the class's runs the CPU first and the
training what is left; the server process itself only relays the progress to the page's bar (it waits on a
queue, using no CPU). The child dies with the server (Linux's parent-death signal), and is stopped when the
page stops waiting for it (the student left the page).

A spawned child would re-run the app's script before anything else: it is started without it
(ui/streamlit_internals/spawn.py).
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from ui.run_gate import outside_run_gate
from ui.streamlit_internals.spawn import spawn_without_main

T = TypeVar("T")
NICE = 19  # the lowest priority: a class's clicks always come first
PROGRESS_EVERY = 10  # steps between two progress messages


def run_niced(fn: Callable[..., T], config: Any, on_step: Callable[[int, int], None] | None = None) -> T:
    """`fn(config, on_step=...)` in a child process at nice 19; `on_step(done, total)` is called here as the
    child reports progress. `fn` must be a module-level function and its result picklable. Raises
    RuntimeError if the child fails or ends without a result."""
    ctx = multiprocessing.get_context("spawn")  # a clean interpreter: no fork of the server's threads
    messages = ctx.Queue()
    child = ctx.Process(target=_child, args=(fn, config, messages), daemon=True, name="attention-training")
    spawn_without_main()
    child.start()
    with outside_run_gate():  # this thread only waits from here on: other sessions' runs may go first
        return _relay(child, messages, on_step)


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


def _relay(child, messages, on_step: Callable[[int, int], None] | None):
    """Pass the child's progress to `on_step` until it sends its result (returned) or fails (raised)."""
    try:
        while True:
            try:
                kind, payload = messages.get(timeout=0.2)
            except queue.Empty:
                if not child.is_alive():
                    raise RuntimeError(f"the training process ended without a result (code {child.exitcode})") from None
                continue
            if kind == "step" and on_step is not None:
                on_step(*payload)
            elif kind == "done":
                return payload
            elif kind == "error":
                raise RuntimeError(f"the training failed: {payload}")
    finally:
        if child.is_alive():  # the page stopped waiting (the student left): the work is of no use any more
            child.terminate()
        child.join(timeout=5)
        messages.close()


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
