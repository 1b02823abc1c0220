"""The load test itself: start the server, warm it up, run the waves of sessions, settle the memory, report (the
command line is bench/load_test.py)."""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

from harness.browser import CHROMIUM
from harness.load import __doc__ as load_doc
from harness.load.plan import PAGES, session_plan
from harness.load.processes import (
    MemorySampler,
    ServerOutput,
    SpeedProbe,
    browser_pids,
    cpu_seconds,
    machine_cpu,
    process_tree,
    worker_pid,
)
from harness.load.report import (
    connected_sessions_by_worker,
    mib,
    report,
    steady_window,
    tee_log,
    uptime,
)
from harness.load.sessions import (
    BROWSER_ARGS,
    BrowserlessSession,
    MischiefSession,
    Session,
    Stats,
    reap,
    warm_up,
)
from harness.servers import (
    ROOT,
    serve_reading_output,
    snapshot_of,
    start_proxy,
    start_server,
)

SERVERS: list[subprocess.Popen] = []  # for the watchdog


async def main_async(args, log) -> int:
    from playwright.async_api import async_playwright

    pages = [p.strip() for p in args.pages.split(",") if p.strip()]
    unknown = [p for p in pages if p not in PAGES]
    if unknown:
        raise SystemExit(f"unknown pages {unknown}; known: {', '.join(PAGES)}")
    scratch = Path(args.scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    os.environ["ATTENTION_LOG_RUN_MS"] = "1"  # app.py prints each script run's duration (bench_playground does too)
    started = time.monotonic()
    log(f"load at start: {uptime()}")
    log(
        f"server: streamlit run app.py on 127.0.0.1, --server.disconnectedSessionTTL {args.ttl} "
        f"(Streamlit's documented option, default 120 s), run times logged with ATTENTION_LOG_RUN_MS=1"
    )
    serve, app_dir = start_server, ROOT
    if args.snapshot:
        app_dir, serve = snapshot_of(scratch, args.snapshot)
        log(
            f"app: a snapshot of commit {args.snapshot} ({app_dir}), so that edits in progress in {ROOT} do not "
            "reach the server during the run"
        )
    if args.workers:
        proc, url = start_proxy(args, scratch, app_dir)
        log(
            f"through deploy/serve.py: nginx at {url} in front of {args.workers} worker(s) on 127.0.0.1 "
            f"(the figures below are the whole tree's: supervisor, nginx, workers)"
        )
    else:
        proc, url = serve_reading_output(serve, args.port or None, ("--server.disconnectedSessionTTL", str(args.ttl)))
    SERVERS.append(proc)
    out = ServerOutput(proc, scratch / "server.log")
    out.start()
    mem = MemorySampler(proc.pid)
    mem.start()
    probe = SpeedProbe()
    probe.start()
    server_tree = set(process_tree(proc.pid))
    all_stats: list[Stats] = []
    figures: dict = {"waves": []}
    try:
        await asyncio.sleep(2)
        figures["cold"] = mem.median_last(1.5)
        log(f"server up at {url} (pid {proc.pid}); RSS right after start {mib(figures['cold']):.0f} MiB")
        if args.nice_browser:  # this process and what it starts from now on: Playwright's driver, Chromium
            os.nice(args.nice_browser)
            log(f"clients run at nice +{args.nice_browser}: the server gets the CPU first, as on its own machine")
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=BROWSER_ARGS)
            try:
                warm = Stats()
                if not args.no_warmup:
                    t = time.monotonic()
                    # behind the proxy every worker has caches of its own: warm each one, straight on its port
                    targets = [f"http://127.0.0.1:{p}" for p in args.worker_ports] if args.workers else [url]
                    for target in targets:
                        await asyncio.wait_for(
                            warm_up(browser, target, pages, warm, args), timeout=args.load_timeout * 4
                        )
                    log(
                        f"warm-up: 1 session, {len(warm.latencies)} interactions over {len(pages)} pages in "
                        f"{time.monotonic() - t:.0f} s, errors {len(warm.errors)}"
                    )
                    for e in warm.errors[:5]:
                        log(f"  warm-up error: {e}")
                figures["warm_errors"] = warm.errors
                await settle_memory(browser, url, args, log, "warm-up", mem)
                figures["baseline"] = mem.median_last(3)
                log(
                    f"memory baseline (after {'one short session' if args.no_warmup else 'warm-up'}, its session "
                    f"expired): {mib(figures['baseline']):.0f} MiB"
                )
                srv_pids = process_tree(proc.pid)
                for w in range(1, args.waves + 1):
                    remaining = args.timeout - (time.monotonic() - started)
                    if remaining < 60:
                        log(f"wave {w}: skipped, overall timeout ({args.timeout} s) nearly reached")
                        figures["timed_out"] = True
                        break
                    stats = Stats()
                    all_stats.append(stats)
                    rng = random.Random(f"plans-{w}")
                    wave_start = time.monotonic()
                    cpu_srv0 = cpu_seconds(srv_pids)
                    bro = browser_pids(server_tree)
                    cpu_bro0 = cpu_seconds(bro)
                    load0 = os.getloadavg()
                    machine0 = machine_cpu()
                    plans = [session_plan(pages, i, rng) for i in range(args.sessions)]
                    n_browsers = args.sessions if args.browsers is None else min(args.browsers, args.sessions)
                    sessions = [
                        Session(browser, url, f"w{w}s{i:02d}", w, stats, args)
                        if i < n_browsers
                        else BrowserlessSession(url, f"w{w}p{i:02d}", w, stats, args)
                        for i in range(args.sessions)
                    ]

                    async def one(i, s, plan):
                        if args.ramp:
                            await asyncio.sleep(args.ramp * i / max(1, args.sessions))
                        await s.run(plan, args.interactions, think=args.think)

                    tasks = [asyncio.ensure_future(one(i, s, plans[i])) for i, s in enumerate(sessions)]
                    class_done = asyncio.Event()
                    extras = []
                    if args.mischief:
                        own = figures.setdefault("mischief", Stats())
                        mischief = MischiefSession(url, f"w{w}-mischief", w, own, args)
                        extras.append(asyncio.ensure_future(mischief.run_until(class_done)))
                    if args.kill_worker is not None and w == 1:
                        extras.append(asyncio.ensure_future(kill_a_worker(args, proc.pid, sessions, figures, log)))
                    done, pending = await asyncio.wait(tasks, timeout=remaining - 45)
                    class_done.set()
                    await asyncio.gather(*extras, return_exceptions=True)
                    if pending:
                        stats.errors.append(
                            f"wave {w}: {len(pending)} sessions still running at the overall "
                            f"timeout ({args.timeout} s); cancelled"
                        )
                        figures["timed_out"] = True
                        for t in pending:
                            t.cancel()
                        await asyncio.gather(*pending, return_exceptions=True)
                    wave_end = time.monotonic()
                    bro = browser_pids(server_tree)
                    wave = {
                        "wave": w,
                        "seconds": wave_end - wave_start,
                        "peak": mem.peak(wave_start, wave_end),
                        "cpu_server": cpu_seconds(srv_pids) - cpu_srv0,
                        "cpu_browser": cpu_seconds(bro) - cpu_bro0,
                        "load": (load0, os.getloadavg()),
                        "cpu_machine": machine_cpu()[0] - machine0[0],
                        "run_ms": [ms for t, ms in out.run_ms if wave_start <= t <= wave_end],
                        "steady": steady_window(stats, out.run_ms, mem, args.sessions, probe),
                        "probe_ms": probe.mean_ms(wave_start, wave_end),
                    }
                    log(
                        f"wave {w}: {args.sessions} sessions done in {wave['seconds']:.0f} s, "
                        f"{len(stats.latencies)} interactions, {len(stats.errors)} errors, "
                        f"peak RSS {mib(wave['peak']):.0f} MiB"
                    )
                    wave["before_reap"], wave["after"] = await settle_memory(browser, url, args, log, f"wave {w}", mem)
                    figures["waves"].append(wave)
            finally:
                await browser.close()
    finally:
        mem.stop()
        probe.stop()
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        out.join(timeout=5)
    figures["server_problems"] = out.problems
    # the machine's full speed in this run: the probe's fastest 5 % (its fastest state, not one lucky sample)
    fast = sorted(ms for _, ms in probe.samples)
    figures["probe_fast_ms"] = fast[len(fast) // 20] if fast else None
    if args.kill_worker is None:
        figures["server_problems"] += [f"proxy: {line}" for line in out.proxy_notes]
    figures["proxy_notes"] = out.proxy_notes
    figures["load_end"] = uptime()
    return report(args, pages, all_stats, figures, log)


async def kill_a_worker(args, root_pid: int, sessions, figures: dict, log) -> None:
    """SIGKILL the worker holding the most browser-less sessions, args.kill_worker s into the wave."""
    import signal

    await asyncio.sleep(args.kill_worker)
    by_worker = connected_sessions_by_worker(sessions)
    counts = {worker: len(names) for worker, names in by_worker.items()}
    victim = max(counts, key=counts.get) if counts else "0"
    pid = worker_pid(root_pid, args.worker_ports[int(victim)])
    on_it = by_worker.get(victim, [])
    figures["killed"] = {"worker": victim, "t": time.perf_counter(), "sessions": on_it, "counts": counts}
    log(f"killing worker {victim} (pid {pid}, {len(on_it)} browser-less sessions on it; sessions per worker {counts})")
    if pid:
        os.kill(pid, signal.SIGKILL)


async def settle_memory(browser, url: str, args, log, what: str, mem: MemorySampler) -> tuple[int, int]:
    """After sessions closed: wait out the TTL, reap expired sessions, let the memory settle.
    Returns (RSS before reaping, RSS after)."""
    await asyncio.sleep(args.ttl + 3)
    before = mem.median_last(2)
    await reap(browser, url, args)
    await asyncio.sleep(5)
    after = mem.median_last(3)
    log(
        f"{what}: closed sessions kept {args.ttl} s by the server; RSS after the TTL {mib(before):.0f} MiB, "
        f"after one more session made the server drop the expired ones {mib(after):.0f} MiB"
    )
    return before, after


def main() -> None:
    parser = argparse.ArgumentParser(
        description=load_doc.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--interactions", type=int, default=10, help="per session and wave")
    parser.add_argument("--pages", default=",".join(PAGES), help=f"comma-separated, from: {','.join(PAGES)}")
    parser.add_argument("--waves", type=int, default=2, help="rounds of N sessions, to show memory does not grow")
    parser.add_argument("--port", type=int, default=0, help="server port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--ttl", type=int, default=10, help="server.disconnectedSessionTTL for the test, s")
    parser.add_argument("--think", type=float, default=1.0, help="pause between a session's interactions, s (±50 %%)")
    parser.add_argument("--ramp", type=float, default=0.0, help="spread the sessions' starts over this many s")
    parser.add_argument("--settle", type=float, default=0.3, help="how long the idle state must hold, s (not counted)")
    parser.add_argument("--interaction-timeout", type=float, default=60.0, help="s")
    parser.add_argument("--load-timeout", type=float, default=180.0, help="first load of the app per session, s")
    parser.add_argument(
        "--timeout",
        type=float,
        default=1800.0,
        help="the whole run, s (one wave of 30 sessions took about 9 min on 2 shared cores)",
    )
    parser.add_argument("--mem-margin-mb", type=float, default=50.0)
    parser.add_argument(
        "--nice-browser",
        type=int,
        default=0,
        help="run Playwright and Chromium at this nice value (the server stays at 0): shows what "
        "the server does when 30 browsers on the same cores do not starve it",
    )
    parser.add_argument(
        "--browsers",
        type=int,
        default=None,
        help="how many of the sessions are Chromium pages (default: all); the others speak "
        "Streamlit's websocket protocol without a browser (harness/protocol.py), as a "
        "classroom's browsers on their own laptops would, so that 30 sessions can load one "
        "server on a machine that cannot also render 30 pages",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=0,
        help="serve through deploy/serve.py: nginx in front of this many workers (0: one bare server, as before)",
    )
    parser.add_argument(
        "--kill-worker",
        type=float,
        default=None,
        help="kill (SIGKILL) the worker with the most sessions this many s into wave 1 (needs --workers >= 2)",
    )
    parser.add_argument("--mischief", action="store_true", help="one more session doing every page's heaviest work")
    parser.add_argument("--no-warmup", action="store_true")
    parser.add_argument(
        "--snapshot",
        nargs="?",
        const="HEAD",
        default=None,
        metavar="REV",
        help="serve a copy of the last commit, or of commit REV (git archive, under --scratch), instead of "
        "the working tree, so that others' edits in progress do not reach the server mid-run (with --workers "
        "too: the copy's deploy/serve.py and app); an older REV measures the code as it was, in the same run",
    )
    parser.add_argument(
        "--count-external",
        action="store_true",
        help="count failed requests to other hosts (refused: no network in the test) as errors",
    )
    parser.add_argument("--scratch", default="/tmp/loadtest", help="server log goes here")
    parser.add_argument("--out", help="also write the output to this file")
    parser.add_argument("--json", help="also write the figures as JSON to this file (bench/bench_workers.py reads it)")
    args = parser.parse_args()
    log = tee_log(args.out)

    # a watchdog in case something hangs beyond the async timeouts: the run stops by itself
    def watchdog() -> None:
        log(f"WATCHDOG: still running {args.timeout + 120:.0f} s after the start; stopping the server, giving up")
        for proc in SERVERS:
            proc.kill()
        os._exit(3)

    dog = threading.Timer(args.timeout + 120, watchdog)
    dog.daemon = True
    dog.start()
    code = asyncio.run(main_async(args, log))
    dog.cancel()
    sys.exit(code)


if __name__ == "__main__":
    main()
