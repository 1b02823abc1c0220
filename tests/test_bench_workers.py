"""bench/bench_workers.py compares wave i of a 1-worker load test with wave i of a 2-worker one, and judges every
wave; harness/load/report.py's summary is what it reads (load_test.py --json)."""

from __future__ import annotations

import json

from bench.bench_workers import verdict, wave_ratios
from harness.load.report import summary
from harness.load.sessions import Stats
from harness.speed_probe import mean_speed_ms, sample, work


def _wave(n: int, runs_per_s: float, p95: float, steady: float | None = None, probe: float | None = 10.0) -> dict:
    return {
        "wave": n,
        "runs_per_s": runs_per_s,
        "p95_ms": p95,
        "probe_ms": probe,
        "steady": None if steady is None else {"runs_per_s": steady},
    }


def test_ratios_pair_the_waves_in_order_and_divide_two_by_one():
    one = {"waves": [_wave(1, 20.0, 1500, steady=22.0), _wave(2, 25.0, 1400)]}
    two = {"waves": [_wave(1, 40.0, 700, steady=33.0), _wave(2, 35.0, 800, steady=40.0)]}
    rows = wave_ratios(one, two)
    assert [r["wave"] for r in rows] == [1, 2]
    assert rows[0]["ratio"] == 2.0 and rows[0]["steady_ratio"] == 1.5
    assert rows[1]["ratio"] == 1.4
    assert rows[1]["steady_ratio"] is None  # the 1-worker wave had no steady window: no steady ratio


def test_at_the_same_speed_a_wave_on_a_slower_moment_of_the_machine_counts_for_more():
    one = {"waves": [_wave(1, 20.0, 1500, probe=10.0), _wave(2, 20.0, 1500, probe=15.0)]}
    two = {"waves": [_wave(1, 30.0, 700, probe=12.0), _wave(2, 40.0, 700, probe=12.0)]}
    first, second = wave_ratios(one, two)
    assert first["ratio"] == 1.5 and abs(first["same_speed_ratio"] - 1.8) < 1e-12  # two ran 1.2x slower
    assert second["ratio"] == 2.0 and abs(second["same_speed_ratio"] - 1.6) < 1e-12  # one ran 1.25x slower
    no_probe = wave_ratios({"waves": [_wave(1, 20.0, 1500, probe=None)]}, {"waves": [_wave(1, 40.0, 700)]})
    assert no_probe[0]["same_speed_ratio"] is None
    assert verdict([no_probe], 1.6, 2000) == (False, ["pair 1 wave 1: no speed probe samples"])


def test_every_wave_must_reach_the_target_not_the_median():
    good = wave_ratios({"waves": [_wave(1, 20.0, 1500)]}, {"waves": [_wave(1, 36.0, 700)]})  # 1.8x
    bad = wave_ratios({"waves": [_wave(1, 20.0, 1500)]}, {"waves": [_wave(1, 31.0, 700)]})  # 1.55x
    assert verdict([good, good], 1.6, 2000) == (True, [])
    met, misses = verdict([good, bad, good], 1.6, 2000)
    assert not met and misses == ["pair 2 wave 1: 1.55x at the same speed < 1.6x"]
    # the raw median must reach the target too, whatever the speed probe says
    fast_one = wave_ratios({"waves": [_wave(1, 20.0, 1500, probe=10.0)]}, {"waves": [_wave(1, 30.0, 700, probe=12.0)]})
    met, misses = verdict([fast_one], 1.6, 2000)
    assert fast_one[0]["same_speed_ratio"] > 1.6 and misses == ["the raw ratios' median 1.50x < 1.6x"]


def test_a_slow_two_worker_wave_fails_even_at_a_good_ratio():
    slow = wave_ratios({"waves": [_wave(1, 20.0, 1500)]}, {"waves": [_wave(1, 40.0, 2100)]})
    met, misses = verdict([slow], 1.6, 2000)
    assert not met and "p95 2100 ms > 2000 ms" in misses[0]
    assert verdict([], 1.6, 2000) == (False, ["no wave was measured"])


def test_the_load_test_summary_counts_each_wave_apart():
    stats = Stats()
    stats.latencies = [{"wave": 1, "ms": float(ms)} for ms in range(1, 101)] + [{"wave": 2, "ms": 5000.0}] * 10
    figures = {
        "waves": [
            {
                "wave": 1,
                "seconds": 10.0,
                "cpu_server": 2.0,
                "run_ms": [(0.0, 1.0)] * 50,
                "steady": None,
                "probe_ms": 11.5,
            },
            {
                "wave": 2,
                "seconds": 5.0,
                "cpu_server": 1.0,
                "run_ms": [(0.0, 1.0)] * 20,
                "steady": {
                    "seconds": 2.0,
                    "interactions": 8,
                    "runs": 10,
                    "cpu_server": 0.5,
                    "cpu_machine": 0.9,
                    "probe_ms": 12.0,
                },
            },
        ],
        "server_problems": ["Traceback ..."],
        "probe_fast_ms": 10.0,
    }
    s = json.loads(json.dumps(summary([stats], figures, [("zero errors", False, "1 errors")], False)))
    w1, w2 = s["waves"]
    assert (w1["interactions"], w1["runs"], w1["runs_per_s"], w1["cpu_ms_per_run"]) == (100, 50, 5.0, 40.0)
    assert w1["p95_ms"] == 95.0 and w1["steady"] is None and w1["probe_ms"] == 11.5
    assert w2["probe_ms"] is None  # no sample in the wave
    # at the run's fastest speed (the probe's 10 ms, against the wave's 11.5): 40 ms per run would be 34.8
    assert abs(w1["cpu_ms_per_run_full_speed"] - 40.0 * 10.0 / 11.5) < 1e-9 and w2["cpu_ms_per_run_full_speed"] is None
    assert s["probe_fast_ms"] == 10.0
    assert (w2["interactions_per_s"], w2["runs_per_s"], w2["p95_ms"]) == (2.0, 4.0, 5000.0)
    assert w2["steady"] == {
        "seconds": 2.0,
        "interactions_per_s": 4.0,
        "runs_per_s": 5.0,
        "cpu_ms_per_run": 50.0,
        "probe_ms": 12.0,
    }
    assert s["errors"] == 1 and s["passed"] is False and s["checks"][0]["name"] == "zero errors"


def test_the_probe_averages_speeds_not_times_and_only_inside_the_window():
    samples = [(0.5, 99.0), (1.0, 10.0), (2.0, 20.0), (3.0, 0.0), (9.0, 99.0)]
    assert abs(mean_speed_ms(samples, 1.0, 3.0) - 2 / (1 / 10 + 1 / 20)) < 1e-12  # 13.3 ms, not 15
    assert mean_speed_ms(samples, 4.0, 8.0) is None


def test_the_probe_times_its_own_fixed_work():
    assert work(10) == sum(i * i % 7 for i in range(10))
    assert sample() > 0


def test_a_failover_counts_only_the_sessions_still_connected_to_the_worker_it_kills():
    from types import SimpleNamespace

    from harness.load.report import connected_sessions_by_worker
    from harness.protocol import ProtocolSession

    def session(name: str, worker: str, open_: bool):
        client = ProtocolSession("http://127.0.0.1:1")
        client.worker = worker
        client.ws = object() if open_ else None  # close() leaves no websocket
        client._closing = not open_
        return SimpleNamespace(name=name, client=client)

    sessions = [
        session("a", "0", True),
        session("b", "0", False),  # done with its interactions before the kill: not cut off by it
        session("c", "1", True),
        SimpleNamespace(name="d", client=None),  # not connected yet
    ]
    assert connected_sessions_by_worker(sessions) == {"0": ["a"], "1": ["c"]}
