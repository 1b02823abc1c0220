"""How fast this machine is right now: the CPU time of one fixed piece of pure-Python work, sampled over time.

    python harness/speed_probe.py [--every 0.5] [--seconds 30]     # prints "<monotonic s> <ms>" per sample

On this 2-core virtual machine the same work takes 10 ms in one moment and 17-18 ms a few seconds later, at idle
(the host's other tenants share the physical cores): a load test's wave of 15-30 s sees an average of such states,
so the same code's CPU per run drifts by 10-20 % from wave to wave. bench/load_test.py runs this beside the server
and reports each wave's mean speed, so that two runs can be compared at the same speed (bench/bench_workers.py).

The work is small (about 10 ms every `--every` s: 2 % of one core at the default) and touches little memory, so it
measures the core's speed, not the caches the server's processes leave behind. CPU time, not wall time: waiting for
a core does not count, only how long the core took to do the work. The clock is CLOCK_MONOTONIC, which every
process on the machine shares, so the samples line up with the load test's own timestamps.
"""

from __future__ import annotations

import argparse
import sys
import time

ITERATIONS = 200_000


def work(iterations: int = ITERATIONS) -> int:
    """The fixed work: integer arithmetic in an interpreter loop (what the app's scripts mostly are)."""
    x = 0
    for i in range(iterations):
        x += i * i % 7
    return x


def sample() -> float:
    """The CPU time, in ms, of one run of `work()` in this thread."""
    t0 = time.thread_time()
    work()
    return (time.thread_time() - t0) * 1000


def mean_speed_ms(samples: list[tuple[float, float]], start: float, end: float) -> float | None:
    """The work's time at the mean speed over [start, end] (the harmonic mean of the samples' times: speeds,
    not times, average over a stretch of work). None without a sample in the window."""
    times = [ms for t, ms in samples if start <= t <= end and ms > 0]
    if not times:
        return None
    return len(times) / sum(1 / ms for ms in times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=float, default=0.5, help="s between samples")
    parser.add_argument("--seconds", type=float, default=float("inf"), help="stop after this long (default: never)")
    args = parser.parse_args()
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        ms = sample()
        print(f"{time.monotonic():.3f} {ms:.3f}", flush=True)
        time.sleep(args.every)


if __name__ == "__main__":
    try:
        main()
    except (KeyboardInterrupt, BrokenPipeError):
        sys.exit(0)
