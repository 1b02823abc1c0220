"""The load test's steady-state window (harness/load/report.py's steady_window): what it counts and what it leaves out.

A wave's throughput over its whole length counts the start (every session loading the app, which is not an
interaction) and the tail (the last sessions clicking alone while a worker idles). The steady window starts
when the last session has loaded and ends when the first session has finished.
"""

from __future__ import annotations

from harness.load.processes import MemorySampler
from harness.load.report import steady_window
from harness.load.sessions import Stats


def _sampler(cpu: list[tuple[float, float, float]]) -> MemorySampler:
    m = MemorySampler(pid=0)  # not started: its samples are set by hand
    m.cpu = cpu
    return m


def _wave() -> Stats:
    """Two sessions: a loads at 1, b at 2; a clicks at 3, 4, 5, 6; b at 3.5, 5.5, 9, 12."""
    s = Stats()
    s.loads = [{"session": "a", "t": 1.0}, {"session": "b", "t": 2.0}]
    for name, times in (("a", [3.0, 4.0, 5.0, 6.0]), ("b", [3.5, 5.5, 9.0, 12.0])):
        s.latencies += [{"session": name, "t": t} for t in times]
    return s


def test_the_window_runs_from_the_last_load_to_the_first_session_done():
    runs = [(t, 100.0) for t in (1.0, 2.0, 2.5, 3.0, 4.5, 6.0, 6.5, 9.0)]
    cpu = [(t, 10.0 * t, 15.0 * t) for t in range(0, 13)]
    w = steady_window(_wave(), runs, _sampler(cpu), sessions=2)
    assert w["seconds"] == 4.0  # from 2 (b loaded) to 6 (a done)
    assert w["interactions"] == 6  # 3, 3.5, 4, 5, 5.5, 6: not b's 9 and 12 (the tail)
    assert w["runs"] == 4  # 2.5, 3, 4.5, 6; not 1, 2 (the loads, up to the window's start) nor 6.5, 9
    assert w["cpu_server"] == 40.0 and w["cpu_machine"] == 60.0  # the samples at 2 and 6


def test_no_window_when_a_session_never_loaded_or_the_overlap_is_short():
    cpu = [(0.0, 0.0, 0.0)]
    assert steady_window(_wave(), [], _sampler(cpu), sessions=3) is None  # a third session never loaded
    short = _wave()
    short.latencies = [r for r in short.latencies if r["session"] == "b"] + [{"session": "a", "t": 3.0}]
    assert steady_window(short, [], _sampler(cpu), sessions=2) is None  # 2 -> 3: under 2 s
