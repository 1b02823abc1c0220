"""The server process's own setup and records, done once per process by app.py: numpy's BLAS on one thread,
the long-lived objects frozen out of the garbage collector's sight, the favicon as a data URL, and each
script run's time."""

from __future__ import annotations

import base64
import gc
import os
import sys
from collections import deque
from functools import lru_cache
from pathlib import Path

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

    Modules, classes, plotly's validators: about 160,000 objects that live as long as the server. Unfrozen, every full
    collection walks them all again, 70-170 ms with the whole server stopped; over a class's load test that
    is 2.9 ms of every script run (Python's gc callbacks, harness/load/). `gc.freeze()` moves every
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
