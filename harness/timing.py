"""Timing shared by the benchmark scripts."""

from __future__ import annotations

import statistics
import time


def timed(fn, repeats: int) -> tuple[float, float]:
    """(median, best) seconds of `repeats` calls of fn(), after one warm-up call."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times)
