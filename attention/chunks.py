"""Large arrays in cache-sized pieces, and the small thread pool the blocked attention kernel shares.

Speed, not maths: every piece computes exactly what one call on the whole array would, so results are
the same bit for bit, whatever the number of threads. A numpy expression over a large array makes one pass
through memory per operation; done piece by piece, its temporaries stay in the CPU's cache (the float32
GELU of the real model at 256 tokens: 3.4 -> 0.7 ms here). Elementwise pieces run one after another:
on two cores, with BLAS's own threads busy around them, a thread pool for them was measured slower.

Work that runs matmuls on the pool holds BLAS to one thread meanwhile (`one_blas_thread`): OpenBLAS's
pthreads pool is shared by the whole process, so two pool threads that each ask it for two threads
queue for its one helper thread and spin while they wait.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import cache

import numpy as np

PIECE_VALUES = 2**17  # values per piece: 512 KiB of float32 with its temporaries fits a core's L2 cache
WORKERS = min(4, os.cpu_count() or 1)


def pieces(n_rows: int, row_values: int) -> list[slice]:
    """Slices of about PIECE_VALUES values each over `n_rows` rows of `row_values` values."""
    rows = max(1, PIECE_VALUES // max(row_values, 1))
    return [slice(start, min(start + rows, n_rows)) for start in range(0, n_rows, rows)]


def map_pieces(work: Callable[[slice], None], n_rows: int, row_values: int) -> None:
    """Call work(rows) for every piece of the rows, one after another."""
    for rows in pieces(n_rows, row_values):
        work(rows)


def run_all(work: Callable, items: list, *, parallel: bool = True) -> None:
    """Call work(item) for every item: with `parallel` and several items, the calling thread and the pool's
    threads take the items in turn from one shared queue.

    The calling thread works too rather than wait: it never stands idle while a helper waits for a core,
    and a helper that is slow to wake up on a busy machine only takes fewer items.
    """
    if not (parallel and len(items) > 1 and WORKERS > 1):
        for item in items:
            work(item)
        return
    queue = iter(items)
    lock = threading.Lock()

    def drain() -> None:
        nonlocal queue
        while True:
            with lock:
                item = next(queue, _DONE)
            if item is _DONE:
                return
            try:
                work(item)
            except BaseException:
                with lock:
                    queue = iter(())  # the others take no new item: the call has failed
                raise

    helpers = [_thread_pool().submit(drain) for _ in range(min(WORKERS, len(items)) - 1)]
    try:
        drain()
    finally:
        for helper in helpers:
            helper.result()  # waits for the helper's last item; re-raises its error, if any


_DONE = object()


def elementwise(func: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    """func(x) for an elementwise `func`, computed piece by piece. Shapes: any -> the same."""
    flat = x.reshape(-1, x.shape[-1]) if x.ndim > 1 else x.reshape(1, -1)  # (rows, last axis)
    if flat.size <= PIECE_VALUES:
        return func(x)
    out = np.empty_like(flat)

    def work(rows: slice) -> None:
        out[rows] = func(flat[rows])

    map_pieces(work, flat.shape[0], flat.shape[1])
    return out.reshape(x.shape)


@cache
def _thread_pool() -> ThreadPoolExecutor:
    """The pool every call shares, started on first use; its threads keep no state between calls."""
    return ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="attention")


@contextmanager
def one_blas_thread() -> Iterator[bool]:
    """Within this block BLAS uses one thread, then what it had; yields whether BLAS is at one thread.

    BLAS's thread count is one setting for the whole process (OpenBLAS's pthreads pool): callers on
    several threads share one limit, set by the first to enter and restored by the last to leave.
    threadpoolctl lets one Python thread at a time change OpenBLAS's count; this takes that role only
    for the moment of each change, so any thread can enter and leave. While other code holds the role
    (a `threadpool_limits` block on another thread), BLAS keeps its count and this yields False.
    """
    global _blas_users, _blas_saved, _blas_single
    with _blas_lock:
        if _blas_users == 0:
            _blas_saved = [lib.get_num_threads() for lib in _blas_libraries()]
            _blas_single = _set_blas_threads([1] * len(_blas_saved), _blas_saved)
        _blas_users += 1
        single = _blas_single
    try:
        yield single
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0:
                _set_blas_threads(_blas_saved, [1] * len(_blas_saved))


def _set_blas_threads(counts: list[int], now: list[int]) -> bool:
    """Set each BLAS library from its count `now` to `counts` (where they differ), giving threadpoolctl's
    role back after each change; True if every library has its count afterwards."""
    done = True
    for lib, threads, current in zip(_blas_libraries(), counts, now):
        if current != threads:
            lib.set_num_threads(threads)
            if hasattr(lib, "clear_controlling_thread"):
                lib.clear_controlling_thread()  # only if this thread took the role: never another's
            done = done and lib.get_num_threads() == threads
    return done


_blas_lock = threading.Lock()
_blas_users = 0  # callers inside one_blas_thread right now
_blas_saved: list[int] = []  # each BLAS library's thread count before the first of them entered
_blas_single = False  # whether BLAS is at one thread for the callers inside now


@cache
def _blas_libraries() -> list:
    """threadpoolctl's controllers of the BLAS libraries loaded in this process (numpy's OpenBLAS)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController().select(user_api="blas").lib_controllers


def _after_fork_in_child() -> None:
    """A forked child has none of the parent's threads: it starts its own pool, and none of them is inside
    one_blas_thread (the parent's lock may have been held at the fork): BLAS gets its threads back."""
    global _blas_lock, _blas_users
    _thread_pool.cache_clear()
    if _blas_users:
        _set_blas_threads(_blas_saved, [1] * len(_blas_saved))
    _blas_lock, _blas_users = threading.Lock(), 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
