"""BLAS thread control and the machine description shared by the benchmark scripts."""

from __future__ import annotations

import os
import sys

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def rerun_with_threads(threads: int) -> None:
    """BLAS reads its thread count when numpy is imported, so set it and start this script afresh."""
    if all(os.environ.get(v) == str(threads) for v in THREAD_VARIABLES):
        return
    env = {**os.environ, **{v: str(threads) for v in THREAD_VARIABLES}}
    os.execve(sys.executable, [sys.executable, *sys.argv], env)


def start(threads: int | None) -> None:
    """A benchmark's first steps: with `threads`, run again with that many BLAS threads (before numpy loads);
    then print the machine."""
    if threads is not None:
        rerun_with_threads(threads)
    print_machine()


def thread_settings() -> str:
    """The BLAS thread variables in force, for printing beside the figures."""
    return ", ".join(f"{v}={os.environ[v]}" for v in THREAD_VARIABLES if v in os.environ) or "BLAS default"


def print_machine() -> None:
    """Python, numpy, CPUs, BLAS threads and load: what the figures printed after it depend on."""
    import numpy as np

    threads = thread_settings()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, {os.cpu_count()} CPUs, threads: {threads}")
    print(f"load average (1, 5, 15 min): {load}  (other busy processes slow multi-threaded BLAS a lot)")
