"""Load test: N concurrent browser sessions against one local `streamlit run app.py`. Prints figures; not a CI test.

    python bench/load_test.py [--sessions 30] [--interactions 10] [--pages playground,causal,heads,...]
                              [--waves 2] [--port 0] [--ttl 10] [--think 1.0] [--timeout 1800]
                              [--snapshot [REV]] [--nice-browser 19] [--browsers K] [--out FILE]   (--help: all)

`--snapshot` serves a copy of the last commit (or of commit REV) instead of the working tree (Streamlit reloads
files that change, so other people's edits in progress would otherwise reach the server mid-run);
`--nice-browser 19` runs Chromium below the server's priority, to see the server's side of 30 sessions
when the browsers, which need far more CPU than the server, share its 2 cores; `--browsers K` makes only
K of the N sessions Chromium pages and the others browser-less sessions speaking Streamlit's websocket
protocol (bench/ws_client.py: the same page visits and widget changes, the same messages, no rendering),
which is how a classroom loads the server when each browser runs on its own laptop.

What it does (issue #8):
1. starts ONE server on 127.0.0.1 with tests/browser/conftest.py's start_server, passing
   `--server.disconnectedSessionTTL <ttl>` (a documented Streamlit option, default 120 s: how long the
   server keeps a closed tab's session for a reconnect) so that the memory of closed sessions can be
   seen coming back within the run; a background thread reads the server's VmRSS (plus any child
   process) from /proc every 100 ms;
2. one warm-up session visits every selected page and does every action once (the first visit of a
   page fills the server's caches: the pretrained model, cache_data entries); the memory baseline is
   taken after it closed and its session expired;
3. `--waves` times: N sessions at once, each its own context in ONE headless Chromium (Playwright's
   async API, asyncio.gather), each opening the app and doing `--interactions` interactions:
   alternately going to another page by its sidebar link and using an option of the page it is on
   (Playground: "Causal mask" / "Divide by √d_k"; Causal: "Randomise later tokens"; Heads:
   "Causal mask" / "Divide by √d_head"; Block: "Causal mask"; Pretrained: "Hide [CLS] and [SEP]" /
   "Compare with a second head"; Scaling: the "keys per query" slider by keyboard; Predict and
   Pitfalls have navigation only). Between interactions a session waits `--think` s (±50 %);
4. after each wave's contexts are closed: wait for the TTL, open and close one short session (Streamlit
   only drops expired sessions from its store when it next writes to it, see
   streamlit/runtime/caching/ttl_cache.py), and read the memory again.

Latency of an interaction (browser-less sessions: BackMsg sent -> `script_finished` received, reported
apart) = from the click (or key press) in the page until the app is idle again (script
not running, no skeleton) with the changed content on screen: for an option, until some plotly chart's
data (z, x, y) differs from before; for a page change, until the URL path is the new page's and its
title (h1) has replaced the old one. The state must then hold for a short settle time, which is not
counted. The first load of the app in each session is reported apart, not as an interaction.

Errors: any `[data-testid="stException"]`, a timeout, a page crash, an uncaught page error, a console
message of level "error", a failed request or HTTP status >= 400, a websocket closed before the session
ended, a toggle that did not change, a traceback in the server's output. Not counted (listed apart):
the 404s of `/<page>/_stcore/health` and `/<page>/_stcore/host-config` that Streamlit's frontend makes on
every deep link while it probes for a base path (streamlit/streamlit#7074).

Through deploy/'s proxy (issue #17): `--workers K` starts `deploy/serve.py --workers K` (nginx in front of K
workers, each with the same TTL) instead of one server, and every session goes through nginx: the figures are then
the whole tree's (supervisor, nginx, workers), and the report adds script runs per second (throughput). Run it with
1 and with 2 workers, same sessions, to compare. Throughput is given over the whole wave and over its steady
state: from the moment the last session has loaded the app to the moment the first one has finished. A short
wave's start (every session loading the app, not counted as interactions) and tail (the last sessions alone,
a worker idle) weigh more with more workers, since the wave is shorter.
`--kill-worker S` kills (SIGKILL) the worker holding the most sessions S seconds into the first wave: the report
counts the sessions that were on it, those that came back to their view (the browser-less ones reconnect as the
browser does: bench/ws_client.py; the Chromium pages rerun by app.py's ui/reconnect.py), the time each took, and
the errors a user would have seen. `--mischief` adds one more browser-less session, the "mischievous student", who
goes from page to page doing each page's heaviest reachable interaction (MISCHIEF below) while the class works;
its own latencies are reported apart, not in the class's p95.

Targets: zero errors, p95 interaction latency <= 2 s (over the completed interactions; every planned
interaction must complete), memory after the sessions closed within `--mem-margin-mb` of the baseline and,
with 2+ waves, the last wave settling no more than half that margin above the highest level settled
before it (baseline or an earlier wave): a leak of 1 MiB per session would show as +30 MiB per wave of 30.
Chromium runs on the same machine as the server, so the latency includes the browser's own work for all
N pages: the output shows how the machine's CPU time split between the server, Chromium and the rest.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.speed_probe import mean_speed_ms  # noqa: E402
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, start_server  # noqa: E402

# name -> url_path in app.py (the Playground is the default page, at "/")
PAGES = {
    "playground": "",
    "predict": "predict",
    "causal": "causal",
    "pitfalls": "pitfalls",
    "heads": "heads",
    "positions": "positions",
    "block": "block",
    "pretrained": "pretrained",
    "pretrained_deeper": "pretrained_deeper",
    "scaling": "scaling",
    "induction": "induction",
    "generation": "generation",
}
# what a session can do on each page: (kind, label)
ACTIONS = {
    "playground": [("toggle", "Causal mask"), ("toggle", "Divide by √d_k")],
    "predict": [],
    "causal": [("button", "Randomise later tokens")],
    "pitfalls": [],
    "heads": [("toggle", "Causal mask"), ("toggle", "Divide by √d_head")],
    "positions": [("button", "Shuffle the words"), ("toggle", "Causal mask too")],
    "block": [("toggle", "Causal mask")],
    "pretrained": [("toggle", "Hide [CLS] and [SEP]"), ("toggle", "Compare with a second head")],
    "pretrained_deeper": [("toggle", "Average the layer's heads")],
    "scaling": [("slider", "keys per query")],
    "induction": [],
    "generation": [],
}
# The mischievous student (--mischief): each page's heaviest reachable interaction, as a link a student can
# type (every page reads its state from the link) plus, where the work needs one, a button. A fresh seed on
# every visit defeats the caches, as a student changing the seed would.


def mischief_plan(seed: int) -> list[tuple[str, dict, str | None]]:
    """(page, link parameters, button to press or None) for every page with heavy work, at its limits."""
    from lessons.reading import LONG_EXAMPLE

    return [
        # the sweep's six largest d_k at 256 keys x 1000 samples, and the largest training the page accepts
        (
            "scaling",
            {
                "dk": "128,256,512,1024,2048,4096",
                "keys": 256,
                "samples": 1000,
                "seed": seed,
                "tdk": 1024,
                "lr": 3.0,
                "steps": 1000,
            },
            None,
        ),
        ("induction", {"model": "yours", "seed": seed, "steps": 2000}, "Train it yourself"),  # the longest training
        (
            "generation",
            {"prompt": "a b c d e f a b", "n_new": 24, "temperature": 1.0, "seed": seed},
            None,
        ),
        ("pretrained_deeper", {"text": LONG_EXAMPLE, "rows": "all", "mean": 1}, None),
        ("pretrained", {"text": LONG_EXAMPLE, "compare": 1}, None),
        ("heads", {"d_model": 64, "n_heads": 8, "seed": seed}, None),
        ("block", {"d_model": 64, "n_heads": 8, "d_ff": 256, "blocks": 12, "seed": seed % 10000}, None),
    ]


BASE_PATH_PROBE = re.compile(
    r"/(?:%s)/_stcore/(?:health|host-config)(?:\?.*)?$" % "|".join(p for p in PAGES.values() if p)
)
TARGET_P95_MS = 2000.0
# The browser resolves no host name but the server's: nothing leaves the machine. (Streamlit sets a page's
# favicon to https://fonts.gstatic.com/... when the page's icon is ":material/...", as app.py's are.)
BROWSER_ARGS = [*CHROMIUM_ARGS, "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
SERVERS: list[subprocess.Popen] = []  # for the watchdog

# Set in every page before its scripts: the time of the last click / key press, in the page's clock.
INIT_JS = """
window.__ltT = 0;
document.addEventListener('click', () => { window.__ltT = Date.now(); }, true);
document.addEventListener('keydown', () => { window.__ltT = Date.now(); }, true);
"""
# A fingerprint of every drawn plotly chart's data.
SIG_JS = """() => {
  const parts = [];
  for (const el of document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot')) {
    for (const t of (el._fullData || [])) parts.push(JSON.stringify([t.type, t.z, t.x, t.y]));
  }
  const s = parts.join('|');
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
  return parts.length + ':' + s.length + ':' + h;
}"""
H1_JS = """() => { const h = document.querySelector('[data-testid="stMain"] h1'); return h ? h.innerText : ''; }"""
# Wait in the page (no round trip per poll) until the app is idle with the expected change, held for
# `settle` ms. Returns {ok, since} with `since` = Date.now() when the final idle stretch began.
WAIT_JS = """async ({mode, before, path, settle, timeout}) => {
  const sig = %s;
  const h1 = %s;
  const t0 = Date.now();
  let since = null;
  const state = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    return app ? app.getAttribute('data-test-script-state') : null;
  };
  while (Date.now() - t0 < timeout) {
    let ok = state() === 'notRunning' && !document.querySelector('[data-testid="stSkeleton"]');
    const exc = ok && document.querySelector('[data-testid="stException"]');
    if (exc && (mode !== 'nav' || location.pathname === path)) {
      return {ok: false, exception: exc.innerText.slice(0, 300), path: location.pathname};
    }
    if (ok && mode === 'load') ok = h1() !== '';
    if (ok && mode === 'nav') ok = location.pathname === path && h1() !== '' && h1() !== before;
    if (ok && mode === 'change') ok = sig() !== before;
    if (ok) {
      if (since === null) since = Date.now();
      if (Date.now() - since >= settle) return {ok: true, since, clicked: window.__ltT || 0};
    } else {
      since = null;
    }
    await new Promise(r => setTimeout(r, 40));
  }
  return {ok: false, state: state(), path: location.pathname, h1: h1(),
          skeletons: document.querySelectorAll('[data-testid="stSkeleton"]').length};
}""" % (SIG_JS, H1_JS)


# ---------------------------------------------------------------- processes, memory, CPU, server output


def _children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        kids.setdefault(ppid, []).append(int(entry))
    return kids


def process_tree(pid: int) -> list[int]:
    """pid and all its descendants."""
    kids = _children_map()
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def rss_kib(pids: list[int]) -> int:
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            pass
    return total


def cpu_seconds(pids: list[int]) -> float:
    """CPU time of the processes, plus that of their children that exited and were waited for
    (Chromium's renderers of closed contexts)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime
        except OSError:
            pass
    return total / tick


def machine_cpu() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot, all cores."""
    with open("/proc/stat") as f:
        values = [int(x) for x in f.readline().split()[1:]]
    tick = os.sysconf("SC_CLK_TCK")
    idle = values[3] + values[4]  # idle, iowait
    return (sum(values[:8]) - idle) / tick, sum(values[:8]) / tick


class MemorySampler(threading.Thread):
    """The server's RSS (process + children) every `interval` s, as (monotonic time, KiB); and its CPU
    seconds and the machine's busy CPU seconds at the same moments, to measure a window of a wave."""

    def __init__(self, pid: int, interval: float = 0.1):
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.samples: list[tuple[float, int]] = []
        self.cpu: list[tuple[float, float, float]] = []  # (monotonic time, server CPU-s, machine busy CPU-s)
        self._stop = threading.Event()
        self._pids = [pid]

    def run(self) -> None:
        last_tree = 0.0
        while not self._stop.is_set():
            now = time.monotonic()
            if now - last_tree > 2.0:  # look for child processes every 2 s
                self._pids, last_tree = process_tree(self.pid), now
            kib = rss_kib(self._pids)
            if kib:
                self.samples.append((now, kib))
            self.cpu.append((now, cpu_seconds(self._pids), machine_cpu()[0]))
            self._stop.wait(self.interval)

    def stop(self) -> None:
        self._stop.set()

    def window(self, start: float, end: float | None = None) -> list[int]:
        end = end if end is not None else time.monotonic()
        return [kib for t, kib in self.samples if start <= t <= end]

    def peak(self, start: float, end: float | None = None) -> int:
        return max(self.window(start, end), default=0)

    def cpu_between(self, start: float, end: float) -> tuple[float, float]:
        """(server, machine) CPU seconds between the samples nearest to start and end."""
        if not self.cpu:
            return 0.0, 0.0
        a = min(self.cpu, key=lambda c: abs(c[0] - start))
        b = min(self.cpu, key=lambda c: abs(c[0] - end))
        return b[1] - a[1], b[2] - a[2]

    def median_last(self, seconds: float) -> int:
        w = self.window(time.monotonic() - seconds)
        return int(statistics.median(w)) if w else 0


class SpeedProbe(threading.Thread):
    """bench/speed_probe.py in a process of its own beside the server: the machine's speed over the run, as
    (monotonic time, ms of the probe's fixed work) samples. Its CPU (2 % of a core) is not the server's."""

    def __init__(self, every: float = 0.5):
        super().__init__(daemon=True)
        self.samples: list[tuple[float, float]] = []
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "bench" / "speed_probe.py"), "--every", str(every)],
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(self) -> None:
        for line in self.proc.stdout:
            t, ms = line.split()
            self.samples.append((float(t), float(ms)))

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=5)

    def mean_ms(self, start: float, end: float) -> float | None:
        return mean_speed_ms(self.samples, start, end)


class ServerOutput(threading.Thread):
    """Drains the server's stdout (a full pipe would block the server) and keeps what matters."""

    def __init__(self, proc: subprocess.Popen, log_path: Path):
        super().__init__(daemon=True)
        self.proc, self.log_path = proc, log_path
        self.run_ms: list[tuple[float, float]] = []  # (monotonic time, script run ms) from ATTENTION_LOG_RUN_MS
        self.problems: list[str] = []
        self.proxy_notes: list[str] = []  # nginx's upstream errors (expected when a worker is killed)

    def run(self) -> None:
        with open(self.log_path, "w") as log:
            for raw in iter(self.proc.stdout.readline, b""):
                line = raw.decode(errors="replace").rstrip()
                log.write(line + "\n")
                log.flush()
                m = re.match(r"run_ms=([0-9.]+)$", line)
                if m:
                    self.run_ms.append((time.monotonic(), float(m.group(1))))
                elif re.match(r"\d{4}/\d\d/\d\d \d\d:\d\d:\d\d \[(error|warn)\]", line) and "upstream" in line:
                    self.proxy_notes.append(line[:300])
                elif re.search(r"Traceback|Exception|Error", line):
                    self.problems.append(line[:300])


# ---------------------------------------------------------------- sessions


@dataclass
class Stats:
    latencies: list[dict] = field(default_factory=list)  # {wave, session, kind, page, label, ms}
    loads: list[dict] = field(default_factory=list)  # first load of the app per session
    errors: list[str] = field(default_factory=list)
    benign: list[str] = field(default_factory=list)
    alerts: list[str] = field(default_factory=list)  # st.error boxes seen (app-handled messages)
    external: list[str] = field(default_factory=list)  # requests to other hosts, refused by the browser
    recoveries: list[dict] = field(default_factory=list)  # browser-less sessions back from a lost worker
    ws_drops: list[str] = field(default_factory=list)  # Chromium websockets closed by the killed worker
    workers: dict[str, str] = field(default_factory=dict)  # session -> worker it started on (behind the proxy)


class Session:
    def __init__(self, browser, url: str, name: str, wave: int, stats: Stats, args):
        self.browser, self.url, self.name, self.wave = browser, url, name, wave
        self.stats, self.args = stats, args
        self.closing = False
        self.crashed = False
        self.page_name = None

    def error(self, msg: str) -> None:
        self.stats.errors.append(f"[{self.name}] {msg}")

    def external(self, url: str) -> bool:
        return url.startswith(("http://", "https://", "ws://", "wss://")) and not url.startswith(
            (self.url, self.url.replace("http", "ws", 1))
        )

    def _on_console(self, msg) -> None:
        if self.closing or msg.type != "error":
            return
        where = (msg.location or {}).get("url", "")
        if self.external(where) and not self.args.count_external:
            self.stats.external.append(f"console: {msg.text[:120]} ({where})")
        elif BASE_PATH_PROBE.search(where):
            self.stats.benign.append(f"console 404 {where}")
        else:
            self.error(f"console error: {msg.text[:200]} ({where})")

    def _on_response(self, resp) -> None:
        if self.closing or resp.status < 400:
            return
        if resp.status == 404 and BASE_PATH_PROBE.search(resp.url):
            self.stats.benign.append(f"HTTP 404 {resp.url}")
        else:
            self.error(f"HTTP {resp.status} {resp.url}")

    def _on_request_failed(self, req) -> None:
        if self.closing:
            return
        if self.external(req.url) and not self.args.count_external:
            self.stats.external.append(f"request: {req.url} ({req.failure})")
        else:
            self.error(f"request failed: {req.url} ({req.failure})")

    def _on_websocket(self, ws) -> None:
        def closed(_ws) -> None:
            if self.closing:
                return
            if self.args.kill_worker is not None:  # expected once: the page reconnects and reruns (ui/reconnect.py)
                self.stats.ws_drops.append(f"[{self.name}] {time.perf_counter():.3f}")
            else:
                self.error(f"websocket closed: {ws.url}")

        ws.on("close", closed)

    def _on_crash(self, _page) -> None:
        self.crashed = True
        self.error("page crashed")

    async def wait(self, page, mode: str, before=None, path: str = "", settle: float | None = None) -> dict:
        timeout_ms = self.args.interaction_timeout * 1000
        arg = {
            "mode": mode,
            "before": before,
            "path": path,
            "timeout": timeout_ms,
            "settle": (settle if settle is not None else self.args.settle) * 1000,
        }
        return await asyncio.wait_for(page.evaluate(WAIT_JS, arg), timeout=self.args.interaction_timeout + 15)

    @staticmethod
    def describe(where: str, result: dict) -> str:
        if "exception" in result:
            return f"stException {where}: {result['exception']!r}"
        return f"timeout {where}: {result}"

    async def check_page(self, page, where: str) -> None:
        exc = page.locator('[data-testid="stException"]')
        if await exc.count():
            self.error(f"stException after {where}: {(await exc.first.inner_text())[:300]!r}")
        alerts = page.locator('[data-testid="stAlertContentError"]')
        for i in range(await alerts.count()):
            self.stats.alerts.append(f"[{self.name}] after {where}: {(await alerts.nth(i).inner_text())[:200]!r}")

    def record(self, kind: str, label: str, result: dict, t0_wall_ms: float) -> float:
        start = result.get("clicked") or t0_wall_ms
        ms = max(0.0, result["since"] - start)
        self.stats.latencies.append(
            {
                "wave": self.wave,
                "session": self.name,
                "kind": kind,
                "page": self.page_name,
                "label": label,
                "ms": ms,
                "client": "browser",
                "t": time.monotonic(),
            }
        )
        return ms

    async def navigate(self, page, target: str) -> None:
        path = PAGES[target]
        before = await page.evaluate(H1_JS)
        link = page.locator(f'[data-testid="stSidebarNav"] a[href="{self.url}/{path}"]')
        await page.evaluate("() => { window.__ltT = 0; }")
        t0 = time.time() * 1000
        await link.click()
        result = await self.wait(page, "nav", before=before, path="/" + path)
        where = f"going to {target}"
        if not result["ok"]:
            self.error(self.describe(where, result))
            if "exception" in result:
                self.page_name = target
            return
        self.page_name = target
        self.record("navigate", target, result, t0)
        await self.check_page(page, where)

    async def act(self, page, kind: str, label: str, nth: int) -> None:
        """Use an option; `nth`: how many times this session used it before (a slider goes right, then left)."""
        where = f"{kind} {label!r} on {self.page_name}"
        before = await page.evaluate(SIG_JS)
        checkbox = None
        if kind == "toggle":
            box = page.locator('[data-testid="stCheckbox"]').filter(has=page.get_by_text(label, exact=True))
            if await box.count() != 1:
                self.error(f"{where}: found {await box.count()} toggles")
                return
            checkbox = box.locator('input[type="checkbox"]')
            was = await checkbox.is_checked()
            target = box.get_by_text(label, exact=True)
        elif kind == "button":
            target = page.get_by_role("button", name=label)
        else:  # slider, by keyboard: right, then back left
            target = page.locator('[data-testid="stSlider"]').filter(has_text=label).get_by_role("slider")
            await target.focus()
        await page.evaluate("() => { window.__ltT = 0; }")
        t0 = time.time() * 1000
        if kind == "slider":
            await page.keyboard.press("ArrowRight" if nth % 2 == 0 else "ArrowLeft")
        else:
            await target.click()
        result = await self.wait(page, "change", before=before)
        if not result["ok"]:
            self.error(self.describe(where, result))
            return
        self.record(kind, label, result, t0)
        if checkbox is not None and await checkbox.is_checked() == was:
            self.error(f"{where}: the toggle did not change")
        await self.check_page(page, where)

    async def run(self, plan: list[str], interactions: int, per_visit: int | None = 1, think: float = 0.0) -> None:
        """Open plan[0], then do `interactions` interactions: on a page with options, use `per_visit` of
        them (None: all) before moving on by the sidebar to the next page of the plan (cycling)."""
        rng = random.Random(f"{self.wave}-{self.name}")
        ctx = await self.browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            await ctx.add_init_script(INIT_JS)
            ctx.set_default_timeout(self.args.interaction_timeout * 1000)
            page = await ctx.new_page()
            page.on("console", self._on_console)
            page.on("pageerror", lambda exc: None if self.closing else self.error(f"page error: {str(exc)[:200]}"))
            page.on("response", self._on_response)
            page.on("requestfailed", self._on_request_failed)
            page.on("websocket", self._on_websocket)
            page.on("crash", self._on_crash)
            first = plan[0]
            t0 = time.time() * 1000
            await page.goto(
                f"{self.url}/{PAGES[first]}", wait_until="domcontentloaded", timeout=self.args.load_timeout * 1000
            )
            result = await asyncio.wait_for(
                page.evaluate(
                    WAIT_JS,
                    {
                        "mode": "load",
                        "before": None,
                        "path": "",
                        "settle": 500,
                        "timeout": self.args.load_timeout * 1000,
                    },
                ),
                timeout=self.args.load_timeout + 15,
            )
            if not result["ok"]:
                self.error(self.describe(f"loading {first}", result))
                return
            self.page_name = first
            self.stats.loads.append(
                {
                    "wave": self.wave,
                    "session": self.name,
                    "ms": result["since"] - t0,
                    "client": "browser",
                    "t": time.monotonic(),
                }
            )
            await self.check_page(page, f"loading {first}")
            await follow_plan(self, page, plan, interactions, per_visit, think, rng)
        except asyncio.CancelledError:
            self.error("cancelled (overall timeout)")
            raise
        except Exception as exc:  # a Playwright timeout, a closed page...
            first_line = (str(exc).splitlines() or ["the page did not answer within the time limit"])[0][:200]
            self.error(f"{type(exc).__name__} on {self.page_name}: {first_line}")
        finally:
            self.closing = True
            try:
                await asyncio.wait_for(ctx.close(), timeout=30)
            except Exception as exc:  # noqa: BLE001
                self.error(f"closing the context: {exc!r}")


async def follow_plan(
    session, page, plan: list[str], interactions: int, per_visit: int | None, think: float, rng: random.Random
) -> None:
    """The interactions of one session once its first page is open (browser and protocol sessions alike):
    on a page with options, use `per_visit` of them (None: all), then go to the plan's next page (cycling)."""
    next_i, acted_here = 1, 0
    used: dict[str, int] = {}  # actions used per page, so that a revisit takes the next option
    for _ in range(interactions):
        if session.crashed:
            break
        if think:
            await asyncio.sleep(think * rng.uniform(0.5, 1.5))
        here = ACTIONS[session.page_name]
        limit = len(here) if per_visit is None else per_visit
        if here and acted_here < limit:
            n_used = used.get(session.page_name, 0)
            kind, label = here[n_used % len(here)]
            used[session.page_name] = n_used + 1
            acted_here += 1
            await session.act(page, kind, label, n_used // len(here))
        else:
            target = plan[next_i % len(plan)]
            next_i += 1
            if target == session.page_name:  # a one-page plan: nowhere else to go
                target = next(p for p in PAGES if p != target)
            acted_here = 0
            await session.navigate(page, target)


class BrowserlessSession:
    """A session without a browser (bench/ws_client.py): the same plan, over Streamlit's websocket protocol.
    Its latency is BackMsg sent -> script_finished received: the server's whole work and the transfer,
    not the rendering, which a student's own laptop does."""

    def __init__(self, url: str, name: str, wave: int, stats: Stats, args):
        self.url, self.name, self.wave, self.stats, self.args = url, name, wave, stats, args
        self.crashed = False
        self.page_name = None
        self.client = None

    def error(self, msg: str) -> None:
        self.stats.errors.append(f"[{self.name}] {msg}")

    def check(self, where: str, result) -> bool:
        if result.status != "FINISHED_SUCCESSFULLY":
            self.error(f"{where}: run ended {result.status} after {result.ms:.0f} ms")
            if result.status.startswith("closed"):
                self.crashed = True
            return False
        for exc in result.exceptions:
            self.error(f"stException after {where}: {exc!r}")
        for alert in result.errors:
            self.stats.alerts.append(f"[{self.name}] after {where}: {alert!r}")
        return not result.exceptions

    def record(self, kind: str, label: str, result) -> None:
        self.stats.latencies.append(
            {
                "wave": self.wave,
                "session": self.name,
                "kind": kind,
                "page": self.page_name,
                "label": label,
                "ms": result.ms,
                "client": "protocol",
                "t": time.monotonic(),
            }
        )

    async def navigate(self, client, target: str) -> None:
        result = await client.goto(PAGES[target])
        if self.check(f"going to {target}", result):
            self.page_name = target
            self.record("navigate", target, result)

    async def act(self, client, kind: str, label: str, nth: int) -> None:
        where = f"{kind} {label!r} on {self.page_name}"
        try:  # a slider: right, then back left
            result, was, now = await client.use(kind, label, 1 if nth % 2 == 0 else -1)
            if kind == "toggle" and result.status == "FINISHED_SUCCESSFULLY" and now == was:
                self.error(f"{where}: the toggle did not change")
        except LookupError as exc:
            self.error(f"{where}: {exc}")
            return
        if self.check(where, result):
            self.record(kind, label, result)

    async def run(self, plan: list[str], interactions: int, per_visit: int | None = 1, think: float = 0.0) -> None:
        from bench.ws_client import ProtocolSession

        rng = random.Random(f"{self.wave}-{self.name}")
        client = ProtocolSession(
            self.url, timeout=self.args.interaction_timeout, reconnect=self.args.kill_worker is not None
        )
        self.client = client
        try:
            t0 = time.perf_counter()
            first = plan[0]
            await client.connect(PAGES[first])
            self.stats.workers[self.name] = client.worker
            result = await client.open(PAGES[first])
            if not self.check(f"loading {first}", result):
                return
            self.page_name = first
            self.stats.loads.append(
                {
                    "wave": self.wave,
                    "session": self.name,
                    "ms": (time.perf_counter() - t0) * 1000,
                    "client": "protocol",
                    "t": time.monotonic(),
                }
            )
            await follow_plan(self, client, plan, interactions, per_visit, think, rng)
        except asyncio.CancelledError:
            self.error("cancelled (overall timeout)")
            raise
        except Exception as exc:  # a refused connection, a protocol error...
            self.error(f"{type(exc).__name__} on {self.page_name}: {str(exc)[:200]}")
        finally:
            for r in client.recoveries:
                self.stats.recoveries.append({**r, "session": self.name})
            try:
                await asyncio.wait_for(client.close(), timeout=30)
            except Exception as exc:  # noqa: BLE001
                self.error(f"closing the connection: {exc!r}")


class MischiefSession(BrowserlessSession):
    """The mischievous student: page after page, each one's heaviest reachable work (mischief_plan), until the
    class is done. Latencies go into its own Stats (kind "mischief"), apart from the class's."""

    async def run_until(self, done: asyncio.Event) -> None:
        from urllib.parse import urlencode

        visit = 0
        while not done.is_set():
            for page, query, button in mischief_plan(seed=1000 + visit):
                if done.is_set():
                    break
                visit += 1
                try:  # a typed link opens a new session (a page reads its link on its first run in a session)
                    await self.one_visit(page, urlencode(query), button)
                except Exception as exc:  # noqa: BLE001
                    self.error(f"mischief on {page}: {type(exc).__name__}: {str(exc)[:200]}")

    async def one_visit(self, page: str, query: str, button: str | None) -> None:
        from bench.ws_client import ProtocolSession

        client = ProtocolSession(self.url, timeout=max(self.args.interaction_timeout, 120.0), reconnect=True)
        try:
            await client.connect(PAGES[page])
            result = await client.open(PAGES[page], query)
            self.page_name = page
            if self.check(f"mischief on {page}", result):
                self.record("mischief", "the heaviest link" if not button else "open the page", result)
            if button and result.status == "FINISHED_SUCCESSFULLY":
                result = await client.click(button)
                if self.check(f"mischief: {button!r} on {page}", result):
                    self.record("mischief", button, result)
        finally:
            await client.close()


async def warm_up(browser, url: str, pages: list[str], stats: Stats, args) -> None:
    """One session: every selected page, every option once (fills the server's caches)."""
    s = Session(browser, url, "warm-up", 0, stats, args)
    n = sum(len(ACTIONS[p]) for p in pages) + len(pages) - 1
    await s.run(pages, n, per_visit=None)


async def reap(browser, url: str, args) -> None:
    """Open and close one short session: its disconnect writes to Streamlit's session store, which is
    when expired sessions are dropped (streamlit/runtime/caching/ttl_cache.py: reaped on a write)."""
    stats = Stats()
    s = Session(browser, url, "reaper", -1, stats, args)
    await s.run(["playground"], 0)
    for e in stats.errors[:3]:
        print(f"  (reaping session: {e})", flush=True)


def session_plan(pages: list[str], index: int, rng: random.Random) -> list[str]:
    """Pages in a per-wave shuffled order; session i starts at page i mod len(pages), so all pages get
    traffic from the start."""
    order = list(pages)
    rng.shuffle(order)
    k = index % len(order)
    return order[k:] + order[:k]


# ---------------------------------------------------------------- reporting


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


def serve_reading_output(serve, port: int | None, extra_args: tuple[str, ...]) -> tuple[subprocess.Popen, str]:
    """`serve` (a start_server) with the server's output on a pipe, which ServerOutput reads (each run's time).
    Since a9a3477 start_server writes to a file unless asked; an older snapshot's has no such argument and
    always wrote to a pipe."""
    import inspect

    if "stdout" in inspect.signature(serve).parameters:
        return serve(port, extra_args, stdout=subprocess.PIPE)
    return serve(port, extra_args)


def snapshot_of(scratch: Path, rev: str = "HEAD"):
    """Extract the last commit (or `rev`) into scratch/snapshot-<sha>; return it and its own start_server."""
    import importlib.util

    sha = subprocess.run(
        ["git", "rev-parse", "--short", rev], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    target = scratch / f"snapshot-{sha}"
    if not (target / "app.py").exists():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.Popen(["git", "archive", sha], cwd=ROOT, stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", str(target)], stdin=archive.stdout, check=True)
        if archive.wait() != 0:
            raise SystemExit(f"git archive {sha} failed")
    spec = importlib.util.spec_from_file_location("snapshot_conftest", target / "tests" / "browser" / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # its ROOT is the snapshot: start_server runs the snapshot's app.py
    return target, module.start_server


def start_proxy(args, scratch: Path, app_dir: Path = ROOT) -> tuple[subprocess.Popen, str]:
    """app_dir's deploy/serve.py with args.workers workers, their output on its own (run times are read from it)."""
    import urllib.request

    from tests.browser.conftest import _free_port

    port = args.port or _free_port()
    worker_port = _free_port()
    while abs(worker_port - port) <= args.workers:
        worker_port = _free_port()
    serve_py = app_dir / "deploy" / "serve.py"
    if not serve_py.exists():
        raise SystemExit(f"--workers: {serve_py} does not exist (a commit from before deploy/ was written?)")
    cmd = [sys.executable, str(serve_py), "--workers", str(args.workers), "--port", str(port)]
    cmd += ["--address", "127.0.0.1", "--worker-port", str(worker_port), "--run-dir", str(scratch / f"serve-{port}")]
    cmd += ["--worker-output", "inherit", f"--streamlit-arg=--server.disconnectedSessionTTL={args.ttl}"]
    proc = subprocess.Popen(cmd, cwd=app_dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    # the workers first: nginx would log each refused /healthz while they start
    health = [f"http://127.0.0.1:{worker_port + i}/_stcore/health" for i in range(args.workers)] + [f"{url}/healthz"]
    deadline = time.time() + 120
    while health and time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"serve.py exited: {proc.stdout.read().decode(errors='replace')}")
        try:
            with urllib.request.urlopen(health[0], timeout=2):
                health.pop(0)
        except OSError:
            time.sleep(0.2)
    if health:
        proc.kill()
        raise RuntimeError(f"not healthy within 120 s: {health}")
    args.worker_ports = [worker_port + i for i in range(args.workers)]
    return proc, url


def worker_pid(root_pid: int, port: int) -> int | None:
    for pid in process_tree(root_pid):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"streamlit" in cmdline and str(port).encode() in cmdline:
            return pid
    return None


def browser_pids(exclude: set[int]) -> list[int]:
    """Chromium processes started under this Python process (through Playwright's driver)."""
    return [p for p in process_tree(os.getpid()) if p != os.getpid() and p not in exclude]


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


def connected_sessions_by_worker(sessions) -> dict[str, list[str]]:
    """The browser-less sessions whose websocket is open now, by the worker it is on. A session that has done
    its interactions has closed its connection: a kill cannot cut it off, so it is on no worker (counted, it
    showed as a session that never came back: 12/13 in a run killed 15 s in, as the first sessions finished)."""
    by_worker: dict[str, list[str]] = {}
    for s in sessions:
        client = getattr(s, "client", None)
        if client is not None and client.connected and client.worker:
            by_worker.setdefault(client.worker, []).append(s.name)
    return by_worker


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
            "(Streamlit's websocket protocol, bench/ws_client.py)"
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
                f"          the machine's speed (bench/speed_probe.py beside the server): its fixed work took "
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


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
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
        "Streamlit's websocket protocol without a browser (bench/ws_client.py), as a "
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
    out_file = open(args.out, "w") if args.out else None

    def log(line: str) -> None:
        print(line, flush=True)
        if out_file:
            out_file.write(line + "\n")
            out_file.flush()

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
