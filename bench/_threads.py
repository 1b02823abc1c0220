"""BLAS thread control shared by the benchmark scripts."""
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


def thread_settings() -> str:
    """The BLAS thread variables in force, for printing beside the figures."""
    return ", ".join(f"{v}={os.environ[v]}" for v in THREAD_VARIABLES if v in os.environ) or "BLAS default"
