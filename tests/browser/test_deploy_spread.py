"""deploy/: new sessions spread over the live workers again after a worker restart (issue #44.11).

A browser's websocket names the session it resumes (Streamlit's client offers `streamlit, <xsrf token>, <session
id>` on a reconnect, and no id on a page load or reload). nginx sends a resumed session to its cookie's worker,
where it lives, and a new one to the worker with the fewest open websockets, whatever the cookie says: so the
students a dead worker's restart left on the survivor spread again when they reload. One deploy/serve.py with two
workers for the module; nginx's access log says which worker took each websocket, and whether it resumed.
"""

from __future__ import annotations

import asyncio
import base64
import os
import re
import signal
import socket
import time

import pytest

from harness.browser import wait_idle
from harness.protocol import ProtocolSession
from tests.browser.conftest import WAIT_MS, run_async
from tests.browser.test_deploy import COLD_RUN_MS, Proxy, _get

# Every websocket the page opens, what it offered (Sec-WebSocket-Protocol) and the ids its messages carried (a
# session's id comes in its first message, `new_session`): Streamlit's own client, watched from outside.
RECORD_SOCKETS = """
(() => {
  const Native = window.WebSocket, UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
  window.__attnSockets = []; window.__attnOffers = []; window.__attnIds = [];
  window.WebSocket = class extends Native {
    constructor(url, protocols) {
      super(url, protocols);
      const ids = [];
      window.__attnSockets.push(this); window.__attnOffers.push([].concat(protocols || [])); window.__attnIds.push(ids);
      this.addEventListener("message", (e) => {
        if (e.data instanceof ArrayBuffer)
          for (const id of new TextDecoder("latin1").decode(e.data).match(UUID) || []) ids.includes(id) || ids.push(id);
      });
    }
  };
})();
"""
STREAM = re.compile(r'"GET /_stcore/stream [^"]*" (\d+) .*upstream=(\S+(?:, \S+)*) cookie=(\S+) resume=(\d)')


@pytest.fixture(scope="module")
def proxy(tmp_path_factory):
    p = Proxy(2, tmp_path_factory.mktemp("spread"))
    yield p
    p.stop()


def _streams(proxy) -> list[tuple[str, list[int], str, str]]:
    """The websockets nginx has logged (each once it closed): status, upstream ports tried, cookie, resume."""
    text = (proxy.run_dir / "access.log").read_text()
    return [(s, [int(a.rsplit(":", 1)[1]) for a in up.split(", ")], c, r) for s, up, c, r in STREAM.findall(text)]


def _until_logged(proxy, count: int, timeout: float = 30) -> list:
    deadline = time.time() + timeout
    while len(_streams(proxy)) < count and time.time() < deadline:
        time.sleep(0.05)
    assert len(_streams(proxy)) >= count, _streams(proxy)
    return _streams(proxy)


def _new_stream(proxy, cookie: str) -> tuple[socket.socket, str]:
    """A websocket handshake as a page load sends it (no session id), with a browser's cookie: the open socket (a
    live session for nginx's count until it is closed) and the worker that took it."""
    sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=60)
    key = base64.b64encode(os.urandom(16)).decode()
    request = [
        "GET /_stcore/stream HTTP/1.1",
        f"Host: 127.0.0.1:{proxy.port}",
        *("Upgrade: websocket", "Connection: Upgrade", f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"),
        *("Sec-WebSocket-Protocol: streamlit", f"Origin: {proxy.url}", f"Cookie: attn_worker={cookie}"),
    ]
    sock.sendall(("\r\n".join(request) + "\r\n\r\n").encode())
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = sock.recv(4096)
        assert chunk, answer
        answer += chunk
    head = answer.split(b"\r\n\r\n", 1)[0].decode()
    assert head.startswith("HTTP/1.1 101"), head
    return sock, re.search(r"(?mi)^X-Attention-Worker: (\d)", head).group(1)


def _until_restarted(proxy, i: int, timeout: float = 90) -> None:
    """Until the supervisor has restarted worker i, asked directly: through nginx, a request that reached the dead
    worker would leave it out of the new sessions' choice for 5 s more (fail_timeout), as in a class."""
    deadline = time.time() + timeout
    while True:
        try:
            if _get(proxy.worker_url(i) + "/_stcore/health")[0] == 200:
                return
        except OSError:
            assert time.time() < deadline, f"worker {i} was not restarted within {timeout} s"
            time.sleep(0.1)


def _worker_cookie(ctx) -> str:
    return next(c["value"] for c in ctx.cookies() if c["name"] == "attn_worker")


def test_in_chromium_a_reconnect_resumes_on_its_worker_and_a_reload_starts_anew_by_live_count(proxy, browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx.add_init_script(RECORD_SOCKETS)
    page = ctx.new_page()
    page.set_default_timeout(WAIT_MS)
    kept = []
    try:
        page.goto(proxy.url + "/causal")
        wait_idle(page, timeout=COLD_RUN_MS)
        first_offer, first_ids = page.evaluate("[window.__attnOffers[0], window.__attnIds[0]]")
        assert len(first_offer) == 2 and first_offer[0] == "streamlit"  # a page load resumes nothing
        home = _worker_cookie(ctx)
        other = str(1 - int(home))

        # New sessions with this browser's cookie go by live count (the first to the other worker), until home is
        # the busier worker: one more session there, none on the other.
        logged, elsewhere = len(_streams(proxy)), []
        while not kept:
            sock, worker = _new_stream(proxy, cookie=home)
            (kept if worker == home else elsewhere).append(sock)
        assert elsewhere  # the first went to the other worker, whatever its cookie said
        for sock in elsewhere:
            sock.close()
        _until_logged(proxy, logged + len(elsewhere))  # nginx has let them go: home has 2 open, the other 0

        # A brief disconnect: Streamlit's client reconnects and offers its session id; it goes home (the live
        # count would have sent it to the other worker) and gets its own session back.
        page.evaluate("window.__attnSockets[0].close()")
        page.wait_for_function(
            "() => window.__attnOffers.length === 2 && window.__attnIds[1].includes(window.__attnOffers[1][2])",
            timeout=60_000,
        )
        wait_idle(page)
        offer = page.evaluate("window.__attnOffers[1]")
        assert len(offer) == 3 and offer[2] in first_ids  # the id of the session this page had
        assert _worker_cookie(ctx) == home

        # A reload: a new session, no id offered; it goes to the other worker (home has the kept session)
        logged = len(_streams(proxy))
        page.reload()
        wait_idle(page, timeout=COLD_RUN_MS)
        reload_offer, reload_ids = page.evaluate("[window.__attnOffers[0], window.__attnIds[0]]")
        assert len(reload_offer) == 2 and offer[2] not in reload_ids  # a new session
        assert _worker_cookie(ctx) == other  # a broken route (by cookie) would have kept it home

        resumed = _until_logged(proxy, logged + 1)[logged:]  # the reconnected websocket, closed by the reload
        assert ("101", [proxy.worker_port + int(home)], home, "1") in resumed

        logged = len(_streams(proxy))
        ctx.close()
        for sock in kept:
            sock.close()
        _until_logged(proxy, logged + 2)  # the page's and the kept websocket: the next test counts from here
    finally:
        for sock in kept:
            sock.close()
        ctx.close()


def test_after_a_worker_restart_reloaded_students_spread_over_both_workers(proxy):
    async def student() -> ProtocolSession:
        s = ProtocolSession(proxy.url, timeout=COLD_RUN_MS / 1000, reconnect=True)
        await s.connect()
        assert (await s.open("causal")).status == "FINISHED_SUCCESSFULLY"
        return s

    async def reload(s: ProtocolSession) -> ProtocolSession:
        """A browser's reload: the page again with the browser's cookies, then a websocket that offers no session id
        (what Chromium does: the test above)."""
        cookies = dict(s.cookies)
        await s.close()
        again = ProtocolSession(proxy.url, timeout=COLD_RUN_MS / 1000)
        again.cookies = cookies
        await again.connect()
        assert (await again.open("causal")).status == "FINISHED_SUCCESSFULLY"
        return again

    async def scenario():
        students = [await student() for _ in range(4)]
        placed = [s.worker for s in students]
        os.kill(proxy.worker_pid(0), signal.SIGKILL)
        deadline = time.monotonic() + 60  # worker 0's students move to worker 1 (the client reconnects by itself)
        while not all(s.recoveries for s, worker in zip(students, placed) if worker == "0"):
            assert time.monotonic() < deadline, [(s.worker, s.recoveries) for s in students]
            await asyncio.sleep(0.1)
        moved = [r for s in students for r in s.recoveries]
        assert all(s.worker == "1" and s.cookies["attn_worker"] == "1" for s in students)  # the survivor's cookie
        await asyncio.to_thread(_until_restarted, proxy, 0)
        reloaded = [await reload(s) for s in students]
        spread = [s.worker for s in reloaded]
        for s in reloaded:
            await s.close()
        return placed, moved, spread

    logged = len(_streams(proxy))
    placed, moved, spread = run_async(scenario())
    assert sorted(placed) == ["0", "0", "1", "1"]  # two and two, by live count
    assert len(moved) == 2 and all(r["status"] == "FINISHED_SUCCESSFULLY" for r in moved)
    # Every reload carried the survivor's cookie; the restarted worker, empty, took the first ones (at least two of
    # the four: by the count of open websockets), the survivor the rest. Before: all four stayed on the survivor.
    assert spread.count("0") >= 2 and spread.count("1") >= 1, spread
    w0, w1 = proxy.worker_port, proxy.worker_port + 1
    streams = _until_logged(proxy, logged + 4 + 2 + 4)[logged:]  # first sessions, the moves, the reloads
    resumed = [s for s in streams if s[3] == "1"]
    assert len(resumed) == 2  # the moves resumed their sessions: to their cookie's worker (dead), then on
    assert all(tried[-1] == w1 and set(tried) <= {w0, w1} and cookie == "0" for _, tried, cookie, _ in resumed)
    reloads = [s for s in streams if s[2] == "1" and s[3] == "0"]
    assert len(reloads) == 4 and sum(tried == [w0] for _, tried, _, _ in reloads) >= 2
