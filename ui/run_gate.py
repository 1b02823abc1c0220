"""One slot (or a few) per server process for running pages' scripts, and a way to give it up while waiting.

No streamlit import: ui.background's training child imports this module too.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager

# How many sessions' scripts may run at once in this process (ATTENTION_CONCURRENT_RUNS, default 1).
# Streamlit runs every session's script in a thread of its own, and the interpreter lock lets one run at a
# time anyway: 28 scripts taking turns every few milliseconds evict each other's memory from the caches and
# cost more CPU per run than the same scripts one after another (load test, one worker: 41-46 ms of CPU per
# run without the gate, 36 ms with it; throughput +14 %). Waiting for another process (a training child,
# another session's training) is done outside the gate (`outside_run_gate`).
RUN_SLOTS = max(1, int(os.environ.get("ATTENTION_CONCURRENT_RUNS", "1") or 1))
_RUN_GATE = threading.BoundedSemaphore(RUN_SLOTS)
_holding = threading.local()


@contextmanager
def run_gate():
    """Hold one of the process's script-run slots while a page runs."""
    with _RUN_GATE:
        _holding.gate = True
        try:
            yield
        finally:
            _holding.gate = False


@contextmanager
def outside_run_gate():
    """Give this run's slot to other sessions while it only waits (for a child process, for a lock another
    session holds), and take it back after. Outside `run_gate` it does nothing."""
    held = getattr(_holding, "gate", False)
    if held:
        _holding.gate = False
        _RUN_GATE.release()
    try:
        yield
    finally:
        if held:
            _RUN_GATE.acquire()
            _holding.gate = True
