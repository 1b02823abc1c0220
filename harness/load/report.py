"""The load test's report: latency percentiles, memory, throughput over the steady window, failover, and the JSON
summary bench/bench_workers.py reads."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from harness.load.processes import (
    MemorySampler,
    SpeedProbe,
)
from harness.load.sessions import (
    Stats,
)

TARGET_P95_MS = 2000.0  # the class's p95 interaction latency the run must stay under


def report_failover(all_stats: list[Stats], figures: dict, errors: list[str], log) -> bool:
    """Sessions on the killed worker, how many came back to their view, how fast, and what a user saw."""
    killed = figures.get("killed")
    if not killed:
        log("failover: no worker was killed (the wave ended first?)")
        return False
    t_kill, victim = killed["t"], killed["worker"]
    recs = [r for s in all_stats for r in s.recoveries if r["lost_at"] >= t_kill - 1]
    on_it = set(killed["sessions"])
    back = {  # the page the session was on (or was going to: a navigation cut off by the kill), drawn again
        r["session"]
        for r in recs
        if r["status"] == "FINISHED_SUCCESSFULLY"
        and not r.get("exceptions")
        and r.get("h1")
        and r.get("page_after") == r.get("page_asked")
        and (r.get("h1") == r.get("h1_before") or r.get("navigating"))
    }
    times = [r["recovered_at"] - t_kill for r in recs if r.get("recovered_at")]
    moved = {r["session"] for r in recs if r.get("worker_after") and r.get("worker_after") != victim}
    drops = [d for s in all_stats for d in s.ws_drops]
    log(
        f"FAILOVER: worker {victim} killed with {len(on_it)} browser-less sessions on it (per worker: "
        f"{killed['counts']}); {len(back & on_it)}/{len(on_it)} came back to their view (the page they were "
        f"on or going to, drawn by a run that finished without an exception) on a live worker "
        f"({len(moved & on_it)} moved)"
    )
    for r in recs:
        if r["session"] in on_it - back:
            log(
                f"    not back: {r['session']}: status {r['status']}, title {r.get('h1')!r} "
                f"(before the kill {r.get('h1_before')!r}), page {r.get('page_after')} (asked {r.get('page_asked')}), "
                f"exceptions {r.get('exceptions') or 'none'}"
            )
    if times:
        log(
            f"    recovery, kill -> the view drawn again by a live worker: p50 {pct(times, 50):.1f} s, "
            f"max {max(times):.1f} s (target <= 5 s)"
        )
    log(f"    Chromium pages whose websocket the kill closed: {len(drops)} (they reconnect and rerun by themselves)")
    log(f"    nginx's notes about the dead upstream (not errors): {len(figures.get('proxy_notes', []))}")
    log(f"    errors a user would have seen, all sessions: {len(errors)}")
    ok = on_it and on_it <= back and times and max(times) <= 5.0 and not errors
    log(f"  {'PASS' if ok else 'FAIL'}  failover: every session back to its view within 5 s, no error")
    return bool(ok)


def tee_log(path: str | None):
    """A `log(line)` that prints each line and, given a path, also writes it there as it comes."""
    out = open(path, "w") if path else None

    def log(line: str) -> None:
        print(line, flush=True)
        if out:
            out.write(line + "\n")
            out.flush()

    return log


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    i = min(len(s) - 1, max(0, int(round(q / 100 * (len(s) - 1)))))
    return s[i]


def mib(kib: int) -> float:
    return kib / 1024


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "load average %.2f, %.2f, %.2f" % os.getloadavg()


def connected_sessions_by_worker(sessions) -> dict[str, list[str]]:
    """The browser-less sessions whose websocket is open now, by the worker it is on. A session that has done
    its interactions has closed its connection: a kill cannot cut it off, so it is on no worker (counted, it
    would show as a session that never came back: 12/13 in a run killed 15 s in, as the first sessions finished)."""
    by_worker: dict[str, list[str]] = {}
    for s in sessions:
        client = getattr(s, "client", None)
        if client is not None and client.connected and client.worker:
            by_worker.setdefault(client.worker, []).append(s.name)
    return by_worker


def steady_window(
    stats: Stats, run_ms: list[tuple[float, float]], mem: MemorySampler, sessions: int, probe: SpeedProbe | None = None
) -> dict | None:
    """The wave's steady state: from the moment the last session finished loading the app to the moment
    the first session finished its interactions. Every session is clicking in it, so it measures what
    the server sustains, without the wave's start (loads, not counted as interactions) and its tail (the
    last sessions alone, a worker idle). None if the window is under 2 s."""
    loaded = [r["t"] for r in stats.loads]
    last: dict[str, float] = {}
    for r in stats.latencies:
        last[r["session"]] = max(last.get(r["session"], 0.0), r["t"])
    if len(loaded) < sessions or len(last) < sessions:
        return None
    start, end = max(loaded), min(last.values())
    if end - start < 2.0:
        return None
    cpu_server, cpu_machine = mem.cpu_between(start, end)
    return {
        "seconds": end - start,
        "interactions": sum(1 for r in stats.latencies if start < r["t"] <= end),
        "runs": sum(1 for t, _ in run_ms if start < t <= end),
        "cpu_server": cpu_server,
        "cpu_machine": cpu_machine,
        "probe_ms": probe.mean_ms(start, end) if probe else None,
    }


def report(args, pages, all_stats: list[Stats], figures: dict, log) -> int:
    lat = [r["ms"] for s in all_stats for r in s.latencies]
    loads = [r["ms"] for s in all_stats for r in s.loads]
    errors = [e for s in all_stats for e in s.errors] + [f"warm-up: {e}" for e in figures.get("warm_errors", [])]
    errors += [f"server output: {line}" for line in figures["server_problems"]]
    benign = [b for s in all_stats for b in s.benign]
    alerts = [a for s in all_stats for a in s.alerts]
    n_interactions = args.sessions * args.interactions * len(figures["waves"])
    log("")
    log("=" * 100)
    n_browsers = args.sessions if args.browsers is None else min(args.browsers, args.sessions)
    if n_browsers < args.sessions:
        log(
            f"clients: {n_browsers} Chromium page(s) and {args.sessions - n_browsers} browser-less sessions "
            "(Streamlit's websocket protocol, harness/protocol.py)"
        )
    log(
        f"LOAD TEST  {args.sessions} sessions x {args.interactions} interactions x {len(figures['waves'])} "
        f"of {args.waves} wave(s), pages {','.join(pages)}, think {args.think} s ±50 %, ramp {args.ramp} s, "
        f"TTL {args.ttl} s"
    )
    log(f"load average: at the end {figures['load_end']}  (2 cores; other work runs on this machine too)")
    for w in figures["waves"]:
        la0, la1 = w["load"]
        cores = os.cpu_count() or 1
        other = w["cpu_machine"] - w["cpu_server"] - w["cpu_browser"]
        log(
            f"  wave {w['wave']}: {w['seconds']:.0f} s, 1-min load {la0[0]:.1f} -> {la1[0]:.1f}; CPU busy "
            f"{w['cpu_machine'] / w['seconds'] / cores * 100:.0f} % of {cores} cores; CPU-s: server "
            f"{w['cpu_server']:.0f} ({w['cpu_server'] / w['seconds'] * 100:.0f} % of one core), Chromium + driver "
            f"{w['cpu_browser']:.0f} ({w['cpu_browser'] / w['seconds'] * 100:.0f} %), everything else "
            f"{other:.0f} ({other / w['seconds'] * 100:.0f} %)"
        )
        if w["run_ms"]:
            r = w["run_ms"]
            log(
                f"          server script runs: {len(r)}, wall time p50 {pct(r, 50):.0f} ms, p95 {pct(r, 95):.0f} ms, "
                f"max {max(r):.0f} ms (app.py's own timing of each run); server CPU per run "
                f"{w['cpu_server'] / len(r) * 1000:.0f} ms, so {cores} cores would serve about "
                f"{cores * len(r) / w['cpu_server']:.0f} runs/s"
            )
        full = full_speed_cpu_ms(w, figures.get("probe_fast_ms"))
        if full is not None:
            log(
                f"          the machine's speed (harness/speed_probe.py beside the server): its fixed work took "
                f"{w['probe_ms']:.1f} ms at the wave's mean speed, {figures['probe_fast_ms']:.1f} ms at the run's "
                f"fastest; at that speed the server CPU per run would be {full:.0f} ms"
            )
    for w in figures["waves"]:
        n_done = sum(1 for s in all_stats for r in s.latencies if r["wave"] == w["wave"])
        log(
            f"  throughput, wave {w['wave']}: {n_done / w['seconds']:.1f} interactions/s, "
            f"{len(w['run_ms']) / w['seconds']:.1f} script runs/s over {w['seconds']:.0f} s"
            + (f" ({args.workers} worker(s) behind nginx)" if args.workers else " (one server)")
        )
    for w in figures["waves"]:
        sw = w.get("steady")
        if sw is None:
            log(f"  steady state, wave {w['wave']}: under 2 s (sessions did not overlap long enough)")
            continue
        log(
            f"  steady state, wave {w['wave']} (every session loaded, none finished: {sw['seconds']:.1f} of "
            f"{w['seconds']:.0f} s): {sw['interactions'] / sw['seconds']:.1f} interactions/s, "
            f"{sw['runs'] / sw['seconds']:.1f} script runs/s; server CPU per run "
            f"{sw['cpu_server'] / max(1, sw['runs']) * 1000:.0f} ms; CPU busy "
            f"{sw['cpu_machine'] / sw['seconds'] / (os.cpu_count() or 1) * 100:.0f} % of {os.cpu_count()} cores"
        )
    log(f"interactions: {len(lat)} measured of {n_interactions} planned")
    if lat:
        log(
            f"latency (click -> idle, changed content on screen), over the {len(lat)} completed interactions: "
            f"p50 {pct(lat, 50):.0f} ms, p95 {pct(lat, 95):.0f} ms, max {max(lat):.0f} ms"
        )
        kinds: dict[str, list[float]] = {}
        for s in all_stats:
            for r in s.latencies:
                key = (
                    "navigate to " + r["label"]
                    if r["kind"] == "navigate"
                    else f"{r['kind']} {r['label']!r} ({r['page']})"
                )
                kinds.setdefault(key, []).append(r["ms"])
        for key in sorted(kinds, key=lambda k: -pct(kinds[k], 95)):
            v = kinds[key]
            log(f"    {key:<52} n={len(v):>3}  p50 {pct(v, 50):>6.0f}  p95 {pct(v, 95):>6.0f}  max {max(v):>6.0f} ms")
        for client, what in (
            ("browser", "Chromium pages, click -> changed content on screen"),
            ("protocol", "browser-less sessions, BackMsg sent -> script_finished received"),
        ):
            v = [r["ms"] for s in all_stats for r in s.latencies if r.get("client") == client]
            if v and len(v) < len(lat):
                log(
                    f"    {client} sessions ({what}): n={len(v)}, p50 {pct(v, 50):.0f} ms, p95 {pct(v, 95):.0f} ms, "
                    f"max {max(v):.0f} ms"
                )
        for w in figures["waves"]:
            v = [r["ms"] for s in all_stats for r in s.latencies if r["wave"] == w["wave"]]
            if v:
                log(f"    wave {w['wave']}: p50 {pct(v, 50):.0f} ms, p95 {pct(v, 95):.0f} ms, max {max(v):.0f} ms")
    if loads:
        log(
            f"first load of the app per session (not an interaction): p50 {pct(loads, 50) / 1000:.1f} s, "
            f"p95 {pct(loads, 95) / 1000:.1f} s, max {max(loads) / 1000:.1f} s"
        )
    log(f"errors: {len(errors)}" + (f" (all of them in {Path(args.scratch) / 'errors.txt'})" if errors else ""))
    (Path(args.scratch) / "errors.txt").write_text("".join(e + "\n" for e in errors))
    groups: dict[str, list[str]] = {}
    for e in errors:  # the same error in many sessions: one line, with a count
        key = re.sub(r"^\[[^]]*\] ", "", e)
        key = re.sub(r"\{'ok'.*$|\d+(\.\d+)?", "#", key)[:110]
        groups.setdefault(key, []).append(e)
    for _, items in sorted(groups.items(), key=lambda kv: -len(kv[1]))[:10]:
        log(f"    {len(items):>3} x {items[0][:230]}")
    if benign:
        log(
            f"not counted: {len(benign)} console/HTTP 404s of Streamlit's base-path probe on deep links "
            f"(streamlit/streamlit#7074), e.g. {benign[0]}"
        )
    external = [x for s in all_stats for x in s.external]
    if external:
        hosts = sorted({re.sub(r"^.*?(https?://[^/]+).*$", r"\1", x) for x in external})
        log(
            f"not counted: {len(external)} console errors / failed requests to other hosts ({', '.join(hosts)}), "
            f"refused by the test browser (--count-external counts them), e.g. {external[0]}"
        )
    if alerts:
        log(f"st.error boxes seen (app-handled, counted as errors only if unexpected): {len(alerts)}, e.g. {alerts[0]}")
    failover_ok = report_failover(all_stats, figures, errors, log) if args.kill_worker is not None else True
    mischief = figures.get("mischief")
    if mischief is not None:
        v = [r["ms"] for r in mischief.latencies]
        log(
            f"the mischievous student: {len(v)} heavy interactions beside the class, errors {len(mischief.errors)}"
            + (f", p50 {pct(v, 50) / 1000:.1f} s, max {max(v) / 1000:.1f} s" if v else "")
        )
        per: dict[str, list[float]] = {}
        for r in mischief.latencies:
            per.setdefault(f"{r['page']}: {r['label']}", []).append(r["ms"])
        for key, vals in per.items():
            log(f"    {key:<52} n={len(vals):>3}  max {max(vals) / 1000:6.1f} s")
        errors += [f"mischief: {e}" for e in mischief.errors]
    base = figures.get("baseline", 0)
    log(
        f"memory (server RSS): right after start {mib(figures['cold']):.0f} MiB; baseline "
        f"{'(no warm-up, one short session)' if args.no_warmup else 'after warm-up'} {mib(base):.0f} MiB"
    )
    for w in figures["waves"]:
        log(
            f"    wave {w['wave']}: peak {mib(w['peak']):.0f} MiB ({mib(w['peak'] - base):+.0f}); after close + TTL "
            f"{mib(w['before_reap']):.0f} MiB; after the expired sessions were dropped {mib(w['after']):.0f} MiB "
            f"({mib(w['after'] - base):+.0f} MiB vs baseline)"
        )
    # verdict
    checks = []
    checks.append(
        (
            "zero errors",
            not errors and not figures.get("timed_out"),
            f"{len(errors)} errors" + (", overall timeout reached" if figures.get("timed_out") else ""),
        )
    )
    p95 = pct(lat, 95) if lat else float("inf")
    checks.append((f"p95 latency <= {TARGET_P95_MS / 1000:.0f} s", p95 <= TARGET_P95_MS, f"p95 {p95:.0f} ms"))
    checks.append(
        (
            "all planned interactions measured",
            len(lat) == n_interactions and n_interactions > 0,
            f"{len(lat)}/{n_interactions}",
        )
    )
    if figures["waves"]:
        final = figures["waves"][-1]["after"]
        checks.append(
            (
                f"memory back to baseline + {args.mem_margin_mb} MiB",
                mib(final - base) <= args.mem_margin_mb,
                f"{mib(final - base):+.0f} MiB",
            )
        )
        if len(figures["waves"]) >= 2:  # the last wave left no more than the highest level settled before it
            growth = final - max([base] + [w["after"] for w in figures["waves"][:-1]])
            checks.append(
                (
                    f"no growth per wave (<= {args.mem_margin_mb / 2:.0f} MiB)",
                    mib(growth) <= args.mem_margin_mb / 2,
                    f"{mib(growth):+.0f} MiB after the last wave vs the highest level settled before it",
                )
            )
    for name, ok, detail in checks:
        log(f"  {'PASS' if ok else 'FAIL'}  {name:<45} {detail}")
    passed = all(ok for _, ok, _ in checks)
    passed = passed and failover_ok
    log(f"RESULT: {'PASS' if passed else 'FAIL'}")
    if args.json:
        Path(args.json).write_text(json.dumps(summary(all_stats, figures, checks, passed), indent=1))
    return 0 if passed else 1


def full_speed_cpu_ms(wave: dict, fast_ms: float | None) -> float | None:
    """The wave's server CPU per run, in ms, had the machine run at its fastest speed in this run the whole
    wave long (the probe's work took `fast_ms` then, `wave["probe_ms"]` on average in the wave)."""
    if not (wave["run_ms"] and wave.get("probe_ms") and fast_ms):
        return None
    return 1000 * wave["cpu_server"] / len(wave["run_ms"]) * fast_ms / wave["probe_ms"]


def summary(all_stats: list[Stats], figures: dict, checks: list[tuple[str, bool, str]], passed: bool) -> dict:
    """The run's figures as plain data (`--json`): per wave its throughput over the whole wave and over its
    steady state, the server's CPU per run and the interactions' p95; the checks and the verdict."""
    waves = []
    for w in figures["waves"]:
        lat = [r["ms"] for s in all_stats for r in s.latencies if r["wave"] == w["wave"]]
        runs = len(w["run_ms"])
        sw = w.get("steady")
        waves.append(
            {
                "wave": w["wave"],
                "seconds": w["seconds"],
                "interactions": len(lat),
                "runs": runs,
                "interactions_per_s": len(lat) / w["seconds"],
                "runs_per_s": runs / w["seconds"],
                "cpu_ms_per_run": 1000 * w["cpu_server"] / runs if runs else None,
                "p95_ms": pct(lat, 95) if lat else None,
                "probe_ms": w.get("probe_ms"),
                "cpu_ms_per_run_full_speed": full_speed_cpu_ms(w, figures.get("probe_fast_ms")),
                "steady": None
                if sw is None
                else {
                    "seconds": sw["seconds"],
                    "interactions_per_s": sw["interactions"] / sw["seconds"],
                    "runs_per_s": sw["runs"] / sw["seconds"],
                    "cpu_ms_per_run": 1000 * sw["cpu_server"] / max(1, sw["runs"]),
                    "probe_ms": sw.get("probe_ms"),
                },
            }
        )
    lat = [r["ms"] for s in all_stats for r in s.latencies]
    return {
        "waves": waves,
        "probe_fast_ms": figures.get("probe_fast_ms"),
        "p95_ms": pct(lat, 95) if lat else None,
        "errors": sum(len(s.errors) for s in all_stats) + len(figures.get("server_problems", [])),
        "checks": [{"name": name, "ok": ok, "detail": detail} for name, ok, detail in checks],
        "passed": passed,
    }
