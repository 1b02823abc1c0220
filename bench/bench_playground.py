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
   it under `streamlit run`); target <= 50 ms median.
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

from _threads import print_machine  # noqa: E402  (bench/ is on sys.path)

from bench.browser import CHROMIUM, CHROMIUM_ARGS, wait_idle  # noqa: E402
from bench.servers import free_port, streamlit_command, wait_until_healthy  # noqa: E402

HEATMAP = '[data-testid="stPlotlyChart"] .js-plotly-plot'
HEATMAP_DRAWN = f"() => document.querySelector('{HEATMAP}') && document.querySelector('{HEATMAP}')._fullData"
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
    """`streamlit run <script>` with the flags bench/servers.py's start_server gives app.py, from the
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


def time_click(page) -> float:
    """Click "Causal mask"; milliseconds until the heatmap's upper-right cell has changed on screen."""
    page.bring_to_front()  # the two apps' pages take turns: never measure a page in the background
    toggle = page.get_by_text("Causal mask", exact=True)
    before = page.locator(HEATMAP).first.evaluate(UPPER_RIGHT)
    t0 = time.perf_counter()
    toggle.click()
    page.wait_for_function(REPAINTED, arg=before, polling="raf", timeout=10_000)
    ms = (time.perf_counter() - t0) * 1000
    wait_idle(page, settle=0.2)
    return ms


def measure(rounds: int, repeats: int) -> dict[str, Figures]:
    from playwright.sync_api import sync_playwright

    os.environ["ATTENTION_LOG_RUN_MS"] = "1"  # app.py prints each run's duration (the floor prints nothing)
    figures = {name: Figures() for name in APPS}
    with sync_playwright() as p:
        # The browser is already open, as a teacher's would be: the clock starts with the server.
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
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
    return figures


def ratio_line(label: str, real: list[float], floor: list[float], unit: str, digits: int, target: str | None) -> None:
    """One figure for both apps and its ratio; with `target` (the absolute target's verdict), the ratio's too."""
    r, f = statistics.median(real), statistics.median(floor)
    if target is None:
        verdict = "for information"
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
    args = parser.parse_args()
    print_machine()
    print(f"{args.rounds} cold starts and {args.repeats} clicks per app; medians")
    figures = measure(args.rounds, args.repeats)
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


if __name__ == "__main__":
    main()
