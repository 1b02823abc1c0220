"""Benchmark the Playground as a user feels it, against a floor measured in the same run. Prints figures;
not part of the test suite.

    python bench/bench_playground.py [--repeats 15] [--rounds 5]

Two apps are measured the same way, interleaved, under the same server flags and .streamlit/config.toml:
the real app (app.py, the Playground at /) and the floor (bench/floor_app.py: one toggle and one annotated
4x4 plotly heatmap, nothing else), so each figure is also printed as a ratio real/floor, which a slower
or busier machine changes much less than the absolute figures.

1. time from starting `streamlit run` to the first heatmap on screen (Chromium already open, a fresh
   browser context each time), median over `--rounds` rounds of real and floor in alternating order
   (real, floor, floor, real, ...); target <= 5 s, and real/floor <= 1.2;
2. time from clicking the causal toggle to the repainted heatmap in headless Chromium, median over
   `--repeats` clicks per app, the two apps' clicks alternating; target <= 300 ms median, and real/floor <= 1.2;
3. the real app's server-side rerun time for that click (the script run's own duration, as app.py records
   it under `streamlit run`); target <= 50 ms median;
4. the first visit on a warm server: both servers already up and visited once (imports done, caches
   filled), a fresh browser context (empty cache, new session) navigates to the app; time from navigation
   to the first heatmap on screen, `--visits` visits per app alternating; target real/floor <= 1.2;
5. the heaviest page of each group against the same floor: every page of each navigation group visited
   the same way (warm server, fresh context), time from navigation to the page ready (the script has
   finished, no element is still loading, every chart drawn), the slowest page of each group printed
   with its ratio to the floor's first visit; for information, with where its time goes: the browser's
   own navigation (HTML, scripts, stylesheets: `performance` timing), the server's script run (app.py's
   run_ms), and the number of elements and charts the page draws.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.browser import CHROMIUM, CHROMIUM_ARGS, WAITING, wait_idle  # noqa: E402
from harness.machine import print_machine  # noqa: E402
from harness.servers import free_port, streamlit_command, wait_until_healthy  # noqa: E402

HEATMAP = '[data-testid="stPlotlyChart"] .js-plotly-plot'
HEATMAP_DRAWN = f"() => document.querySelector('{HEATMAP}') && document.querySelector('{HEATMAP}')._fullData"
PAGE_READY = (  # the run is over, nothing is loading, and every chart the page holds has been drawn
    "() => { const app = document.querySelector('[data-testid=\"stApp\"]');"
    " if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;"
    " if (document.querySelector('[data-testid=\"stSkeleton\"]')) return false;"
    f" if (document.body.innerText.includes('{WAITING}')) return false;"  # ui.after_charts's box: not yet
    " const charts = [...document.querySelectorAll('.js-plotly-plot')];"
    " return charts.length > 0 && charts.every(c => c._fullData); }"
)
PAGE_SIZE = (  # what the page drew: its elements, its charts, and the browser's own navigation timing
    "() => { const nav = performance.getEntriesByType('navigation')[0];"
    " return {elements: document.querySelectorAll('[data-testid=\"stElementContainer\"]').length,"
    " charts: document.querySelectorAll('.js-plotly-plot').length,"
    " dom_nodes: document.getElementsByTagName('*').length,"
    " loaded_ms: nav ? nav.loadEventEnd : null}; }"
)
GROUPS = {  # app.py's navigation sections and their pages' url paths ("" is the Playground, at /)
    "Attention by hand": ["", "predict"],
    "Getting it right": ["scaling", "causal", "pitfalls"],
    "Inside the transformer": ["heads", "positions", "block"],
    "A model that learns": ["induction", "generation"],
    "A real model": ["pretrained", "pretrained_deeper"],
}
UPPER_RIGHT = "el => el._fullData && el._fullData[0] && el._fullData[0].z ? el._fullData[0].z[0][3] : null"
REPAINTED = (
    f"before => {{ const el = document.querySelector('{HEATMAP}'); "
    f"return el && el._fullData && el._fullData[0] && el._fullData[0].z && el._fullData[0].z[0][3] !== before; }}"
)
VIEWPORT = {"width": 1400, "height": 1000}

APPS = {"real": ROOT / "app.py", "floor": ROOT / "bench" / "floor_app.py"}
TARGET_STARTUP_S = 5.0
TARGET_CLICK_MS = 300.0
TARGET_RERUN_MS = 50.0
TARGET_RATIO = 1.2


@dataclass
class Server:
    proc: subprocess.Popen
    url: str
    log: Path
    healthy_after: float  # seconds from the start of the process to a healthy /_stcore/health

    def stop(self) -> str:
        """Stop the server; return everything it printed."""
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        text = self.log.read_text(errors="replace")
        self.log.unlink(missing_ok=True)
        return text


def start_app(script: Path) -> Server:
    """`streamlit run <script>` with the flags harness/servers.py's start_server gives app.py, from the
    project folder (so both apps read the same .streamlit/config.toml); output goes to a file, never a pipe
    that could fill up."""
    port = free_port()
    cmd = streamlit_command(script, port)
    fd, log_name = tempfile.mkstemp(prefix="bench_playground_", suffix=".log")
    log = Path(log_name)
    start = time.perf_counter()
    with os.fdopen(fd, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    wait_until_healthy(proc, f"{url}/_stcore/health", 60, lambda: log.read_text(errors="replace"))
    return Server(proc, url, log, time.perf_counter() - start)


@dataclass
class Figures:
    startup_s: list[float] = field(default_factory=list)  # start -> first heatmap on screen
    healthy_s: list[float] = field(default_factory=list)  # start -> server answers its health check
    clicks_ms: list[float] = field(default_factory=list)  # click -> repainted heatmap
    rerun_ms: list[float] = field(default_factory=list)  # server script runs (real app only)
    warm_visit_s: list[float] = field(default_factory=list)  # warm server, fresh context: navigation -> heatmap
    warm_visit_size: dict = field(default_factory=dict)  # PAGE_SIZE of the last such visit


@dataclass
class PageVisit:
    """One page's first visit on a warm server."""

    ready_s: float  # navigation -> the page ready (PAGE_READY)
    loaded_ms: float | None  # the browser's navigation: HTML, scripts and stylesheets loaded
    run_ms: float | None  # the server's script runs for the visit, added up (app.py's run_ms), if it printed any
    elements: int
    charts: int
    dom_nodes: int


def time_startup(browser, script: Path, figures: Figures) -> None:
    """One cold start: a fresh browser context (empty cache) is open, then the clock and the server start."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    server = None
    try:
        start = time.perf_counter()
        server = start_app(script)
        page.goto(server.url)
        page.wait_for_function(HEATMAP_DRAWN, timeout=60_000)
        figures.startup_s.append(time.perf_counter() - start)
        figures.healthy_s.append(server.healthy_after)
    finally:
        context.close()
        if server is not None:
            server.stop()


def open_for_clicks(browser, script: Path, opened: dict, name: str) -> None:
    """Start `script`'s server and open it in a fresh context, first run done; recorded in `opened` at once, so
    the caller stops the server even if the page never comes up."""
    server = start_app(script)
    context = browser.new_context(viewport=VIEWPORT)
    opened[name] = (server, context, context.new_page())
    page = opened[name][2]
    page.goto(server.url)
    page.wait_for_function(HEATMAP_DRAWN, timeout=60_000)
    wait_idle(page)


def click_until_repainted(page) -> tuple[float, float]:
    """Click "Causal mask" and wait until the heatmap's upper-right cell has changed on screen (looked at every
    animation frame); `time.perf_counter()` just before the click and when the change was seen."""
    toggle = page.get_by_text("Causal mask", exact=True)
    before = page.locator(HEATMAP).first.evaluate(UPPER_RIGHT)
    t0 = time.perf_counter()
    toggle.click()
    page.wait_for_function(REPAINTED, arg=before, polling="raf", timeout=10_000)
    return t0, time.perf_counter()


def time_click(page) -> float:
    """Click "Causal mask"; milliseconds until the heatmap's upper-right cell has changed on screen."""
    page.bring_to_front()  # the two apps' pages take turns: never measure a page in the background
    t0, repainted = click_until_repainted(page)
    wait_idle(page, settle=0.2)
    return (repainted - t0) * 1000


def time_warm_visit(browser, server: Server, ready: str, path: str = "") -> tuple[float, dict]:
    """Navigation -> `ready` in a fresh context (new session, empty browser cache) on a running server."""
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        start = time.perf_counter()
        page.goto(f"{server.url}/{path}")
        page.wait_for_function(ready, timeout=120_000, polling="raf")
        seconds = time.perf_counter() - start
        return seconds, page.evaluate(PAGE_SIZE)
    finally:
        context.close()


def run_times(server: Server) -> list[float]:
    """Every script run's duration the server has printed so far (app.py's run_ms lines)."""
    return [float(m) for m in re.findall(r"run_ms=([0-9.]+)", server.log.read_text(errors="replace"))]


def measure_warm(browser, visits: int, figures: dict[str, Figures]) -> dict[str, list[PageVisit]]:
    """Items 4 and 5: first visits on warm servers, the Playground and the floor alternating, then every page."""
    servers = {}
    try:
        for name, script in APPS.items():
            servers[name] = start_app(script)
            time_warm_visit(browser, servers[name], HEATMAP_DRAWN)  # warm: imports, caches, first run done
        for i in range(visits):
            for name in ("real", "floor") if i % 2 == 0 else ("floor", "real"):
                seconds, size = time_warm_visit(browser, servers[name], HEATMAP_DRAWN)
                figures[name].warm_visit_s.append(seconds)
                figures[name].warm_visit_size = size
        pages: dict[str, list[PageVisit]] = {}
        for paths in GROUPS.values():
            for path in paths:
                time_warm_visit(browser, servers["real"], PAGE_READY, path)  # the page's own caches, once
                pages[path] = []
                for _ in range(max(1, visits // 2)):
                    runs_before = len(run_times(servers["real"]))
                    seconds, size = time_warm_visit(browser, servers["real"], PAGE_READY, path)
                    runs = run_times(servers["real"])[runs_before:]
                    pages[path].append(
                        PageVisit(
                            seconds,
                            size["loaded_ms"],
                            sum(runs) if runs else None,
                            size["elements"],
                            size["charts"],
                            size["dom_nodes"],
                        )
                    )
        return pages
    finally:
        for server in servers.values():
            server.stop()


def measure(rounds: int, repeats: int, visits: int = 0) -> tuple[dict[str, Figures], dict[str, list[PageVisit]]]:
    from playwright.sync_api import sync_playwright

    os.environ["ATTENTION_LOG_RUN_MS"] = "1"  # app.py prints each run's duration (the floor prints nothing)
    figures = {name: Figures() for name in APPS}
    pages = {}
    with sync_playwright() as p:
        # The browser is already open, as a teacher's would be: the clock starts with the server.
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            if visits:
                pages = measure_warm(browser, visits, figures)
            for i in range(rounds):
                order = ("real", "floor") if i % 2 == 0 else ("floor", "real")  # ABBA: no drift favours either
                for name in order:
                    time_startup(browser, APPS[name], figures[name])
            opened, logs = {}, {}
            try:
                for name, script in APPS.items():
                    open_for_clicks(browser, script, opened, name)
                for i in range(repeats):
                    order = ("real", "floor") if i % 2 == 0 else ("floor", "real")
                    for name in order:
                        figures[name].clicks_ms.append(time_click(opened[name][2]))
            finally:
                for name, (server, context, _) in opened.items():
                    context.close()
                    logs[name] = server.stop()
        finally:
            browser.close()
    runs = [float(m) for m in re.findall(r"run_ms=([0-9.]+)", logs["real"])]
    figures["real"].rerun_ms = runs[-repeats:]
    return figures, pages


def ratio_line(label: str, real: list[float], floor: list[float], unit: str, digits: int, target: str | None) -> None:
    """One figure for both apps and its ratio; with `target` (the absolute target's verdict), the ratio's too."""
    r, f = statistics.median(real), statistics.median(floor)
    if target is None:
        verdict = "for information"
    elif not target:
        verdict = f"target <= {TARGET_RATIO}: {'ok' if r / f <= TARGET_RATIO else 'OVER'}"
    else:
        verdict = f"target <= {TARGET_RATIO}: {'ok' if r / f <= TARGET_RATIO else 'OVER'}; {target}"
    print(
        f"{label:<42} real {r:8.{digits}f} {unit} (min {min(real):8.{digits}f})   "
        f"floor {f:8.{digits}f} {unit} (min {min(floor):8.{digits}f})   real/floor {r / f:5.2f} ({verdict})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15, help="clicks per app (default 15)")
    parser.add_argument("--rounds", type=int, default=5, help="cold starts per app (default 5)")
    parser.add_argument(
        "--visits", type=int, default=6, help="warm first visits per app, half that per page (default 6; 0: skip)"
    )
    args = parser.parse_args()
    print_machine()
    print(f"{args.rounds} cold starts, {args.repeats} clicks and {args.visits} warm first visits per app; medians")
    figures, pages = measure(args.rounds, args.repeats, args.visits)
    real, floor = figures["real"], figures["floor"]
    first = statistics.median(real.startup_s)
    ratio_line(
        "server start -> first heatmap on screen",
        real.startup_s,
        floor.startup_s,
        "s ",
        2,
        f"real <= {TARGET_STARTUP_S:.0f} s: {'ok' if first <= TARGET_STARTUP_S else 'OVER'}",
    )
    ratio_line("  of which: start -> server healthy", real.healthy_s, floor.healthy_s, "s ", 2, None)
    click = statistics.median(real.clicks_ms)
    ratio_line(
        "click causal -> repainted heatmap",
        real.clicks_ms,
        floor.clicks_ms,
        "ms",
        1,
        f"real <= {TARGET_CLICK_MS:.0f} ms: {'ok' if click <= TARGET_CLICK_MS else 'OVER'}",
    )
    rerun = statistics.median(real.rerun_ms)
    print(
        f"{'server rerun (toggle causal, default size)':<42} real {rerun:8.1f} ms (min {min(real.rerun_ms):8.1f})   "
        f"(target <= {TARGET_RERUN_MS:.0f} ms median: {'ok' if rerun <= TARGET_RERUN_MS else 'OVER'})"
    )
    if pages:
        ratio_line("first visit, warm server -> first heatmap", real.warm_visit_s, floor.warm_visit_s, "s ", 2, "")
        size = floor.warm_visit_size
        print(
            f"  the floor's page: browser navigation {size.get('loaded_ms') or float('nan'):.0f} ms, "
            f"{size.get('elements')} elements, {size.get('charts')} chart, {size.get('dom_nodes')} DOM nodes"
        )
        print_pages(pages, statistics.median(floor.warm_visit_s))


def print_pages(pages: dict[str, list[PageVisit]], floor_s: float) -> None:
    """Every page's warm first visit against the floor's; the heaviest of each group marked."""
    print(f"\nwarm first visit of every page (navigation -> ready), against the floor's {floor_s:.2f} s:")
    print(
        f"  {'page':<20}{'ready s':>9}{'/floor':>8}{'browser nav ms':>16}{'server run ms':>15}{'elements':>10}"
        f"{'charts':>8}{'DOM nodes':>11}"
    )
    for group, paths in GROUPS.items():
        ready = {path: statistics.median(v.ready_s for v in pages[path]) for path in paths}
        heaviest = max(paths, key=ready.get)
        for path in paths:
            v = pages[path][-1]
            runs = [x.run_ms for x in pages[path] if x.run_ms is not None]
            nav = [x.loaded_ms for x in pages[path] if x.loaded_ms]
            print(
                f"  {(path or 'playground'):<20}{ready[path]:9.2f}{ready[path] / floor_s:8.2f}"
                f"{(statistics.median(nav) if nav else float('nan')):16.0f}"
                f"{(statistics.median(runs) if runs else float('nan')):15.0f}{v.elements:10d}{v.charts:8d}"
                f"{v.dom_nodes:11d}{'   <- heaviest of ' + group if path == heaviest else ''}"
            )


if __name__ == "__main__":
    main()
