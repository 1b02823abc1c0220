"""The load test's sessions: a Chromium page (Session), a browser-less one speaking Streamlit's websocket protocol
(BrowserlessSession, harness/protocol.py) and the mischievous student (MischiefSession); what each records (Stats)."""

from __future__ import annotations

import asyncio
import random
import re
import time
from dataclasses import dataclass, field

from harness.browser import CHROMIUM_ARGS
from harness.load.plan import ACTIONS, PAGES, mischief_plan

BASE_PATH_PROBE = re.compile(
    r"/(?:%s)/_stcore/(?:health|host-config)(?:\?.*)?$" % "|".join(p for p in PAGES.values() if p)
)
# The browser resolves no host name but the server's: nothing leaves the machine. (Streamlit sets a page's
# favicon to https://fonts.gstatic.com/... when the page's icon is ":material/...", as app.py's are.)
BROWSER_ARGS = [*CHROMIUM_ARGS, "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
# What class mode writes into the scripts a run draws (harness/protocol.py's RunResult.scripts), as a class's
# sessions read them: the link of a bar's move script (ui/streamlit_internals/browser.move_script) and the teacher's
# room cookie (its room code and teacher key).
MOVE_URL = re.compile(r"const url = (\"[^\"]*\")")
TEACHER_COOKIE = re.compile(r"attention_class=t\.([A-Z0-9]{6})\.([A-Za-z0-9_-]+);")

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

    def add_latency(self, session, kind: str, label: str, ms: float, client: str) -> None:
        """One interaction of `session` (a Session or BrowserlessSession) on the page it is on, `ms` long."""
        self.latencies.append(
            {
                "wave": session.wave,
                "session": session.name,
                "kind": kind,
                "page": session.page_name,
                "label": label,
                "ms": ms,
                "client": client,
                "t": time.monotonic(),
            }
        )


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
        self.stats.add_latency(self, kind, label, ms, "browser")
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
    """A session without a browser (harness/protocol.py): the same plan, over Streamlit's websocket protocol.
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
        self.stats.add_latency(self, kind, label, result.ms, "protocol")

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
        from harness.protocol import ProtocolSession

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
        from harness.protocol import ProtocolSession

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
