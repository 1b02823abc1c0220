"""Shared session-state defaults, set once per session by app.py before any page runs.

Canonical state lives in plain `st.session_state` keys (not widget keys), so it survives page
switches. Keys are prefixed with the page that owns them; `seq` is shared by every page that
shows the Playground's token sequence.
"""

from __future__ import annotations

import base64
import gc
import os
import sys
from collections import deque
from functools import lru_cache
from pathlib import Path

import streamlit as st

from ui.sequence import default_sequence

SEQUENCE_KEY = "seq"  # the Playground's TokenSequence, read by the lesson, heads and block pages


def init_defaults() -> None:
    """Set every shared key that is not set yet (first run of a session)."""
    st.session_state.setdefault(SEQUENCE_KEY, default_sequence())
    st.session_state.setdefault(f"{SEQUENCE_KEY}_rev", 0)


APP_ENTRY_KEY = "_app_entry_ran"


def mark_app_entry() -> None:
    """Called by app.py on every run, before the page runs."""
    st.session_state[APP_ENTRY_KEY] = True


def require_app_entry() -> None:
    """First line of every page: make sure the page runs through app.py's navigation.

    Streamlit quirk (1.67): until some run has called st.navigation, a server whose folder holds
    `pages/` treats it as an old-style multipage app, so the very first deep link after a restart
    (/playground?...) would run the page file alone, without app.py's state and navigation. Turn
    that legacy mode off and rerun: the rerun goes through app.py and lands on the same page and URL.
    """
    if st.session_state.get(APP_ENTRY_KEY):
        return
    try:
        from streamlit.runtime.pages_manager import PagesManager

        PagesManager.uses_pages_directory = False
    except ImportError:  # a future Streamlit without the legacy mode
        pass
    st.rerun()


RUN_TIMES_MS: deque[float] = deque(maxlen=200)  # server-side script run times, newest last


def record_run_time(ms: float) -> None:
    """Remember how long a script run took on the server; with ATTENTION_LOG_RUN_MS=1 also print it
    (bench/bench_playground.py reads it from the server's output)."""
    RUN_TIMES_MS.append(ms)
    if os.environ.get("ATTENTION_LOG_RUN_MS") == "1":
        # one write() of one whole line: workers sharing a pipe (deploy/serve.py) cannot interleave inside it
        os.write(1, f"run_ms={ms:.2f}\n".encode())


@lru_cache(maxsize=8)
def data_url(path: Path, mime: str = "image/png") -> str:
    """A small file as a data: URL, read once per process (the favicon: 149 bytes)."""
    return f"data:{mime};base64," + base64.b64encode(Path(path).read_bytes()).decode()


def limit_blas_threads() -> None:
    """Run numpy's BLAS on one thread in the server, once per process.

    A classroom server answers many small requests at once; a BLAS that splits each small matmul
    over every core makes the requests fight for the same cores (measured 5-40x slower under load
    here). Requests then run side by side on separate cores instead.
    """
    global _blas_limited
    if not _blas_limited:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1, user_api="blas")
        _blas_limited = True


_blas_limited = False


def freeze_long_lived() -> None:
    """Take the objects that imports created out of the cyclic garbage collector's sight, whenever a run
    has imported new code (so a handful of times per process, on the first visits of the pages).

    Modules, classes, plotly's validators: about 160,000 objects that live as long as the server. Every full
    collection walked them all again, 70-170 ms with the whole server stopped; over a class's load test that
    was 2.9 ms of every script run (Python's gc callbacks, bench/load_test.py). `gc.freeze()` moves every
    object alive now into a generation the collector never visits. A full collection first leaves only live
    objects to freeze; objects freed later by their reference counts are still freed. What it can keep is a
    reference cycle that was alive at a freeze and becomes garbage later (a session open at that moment): a
    bounded amount, since freezing stops once every page's code has been imported.
    """
    global _modules_at_freeze
    if len(sys.modules) != _modules_at_freeze:
        gc.collect()
        gc.freeze()
        _modules_at_freeze = len(sys.modules)


_modules_at_freeze = 0
