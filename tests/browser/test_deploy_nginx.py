"""deploy/'s nginx configuration alone, in front of two stand-in workers that answer every request with their
number and the headers they were sent (no Streamlit: a second per test). What it checks:
- a websocket that starts a new session goes by live count whatever its cookie says; one that resumes a session
  (its id third in Sec-WebSocket-Protocol, as Streamlit's client offers it on a reconnect) goes to its cookie's
  worker, or on to a live one when that worker is down (issue #44.11);
- over HTTPS, the workers are told `X-Forwarded-Proto: https`, and plain HTTP on the port is sent on to https
  without reaching them (issue #44.14, #50.6).
"""

from __future__ import annotations

import http.client
import json
import shutil
import signal
import socket
import ssl
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from deploy.serve import render_config, self_signed_pair
from harness.servers import free_port
from tests.browser.conftest import browser_required


class StandIn(ThreadingHTTPServer):
    """A worker that answers every request with its number and the headers it was sent."""

    def __init__(self, index: int):
        self.index, self.seen = index, []

        class Echo(BaseHTTPRequestHandler):
            def do_GET(handler):  # the handler's own self: `self` is the server
                self.seen.append(handler.path)
                body = json.dumps({"worker": self.index, "headers": dict(handler.headers)}).encode()
                handler.send_response(200)
                handler.send_header("Content-Type", "application/json")
                handler.send_header("Content-Length", str(len(body)))
                handler.end_headers()
                handler.wfile.write(body)

            def log_message(handler, *args):
                pass

        super().__init__(("127.0.0.1", 0), Echo)
        self.port = self.server_address[1]
        threading.Thread(target=self.serve_forever, daemon=True).start()


class Nginx:
    def __init__(self, tmp: Path, tls: bool):
        if shutil.which("nginx") is None:
            message = "nginx is not installed (scripts/test.sh installs Debian's nginx)"
            pytest.fail(message) if browser_required() else pytest.skip(message)
        self.workers = [StandIn(0), StandIn(1)]
        self.port = free_port()
        tmp = tmp / ("https" if tls else "http")
        static = tmp / "static"
        static.mkdir(parents=True)
        self.cert = key = None
        if tls:
            self.cert, key, _ = self_signed_pair(tmp / "tls", ["localhost", "127.0.0.1"])
        run = tmp / "run"
        run.mkdir()
        ports = [w.port for w in self.workers]
        conf = render_config(run, f"127.0.0.1:{self.port}", ports, static, self.cert, key)
        self.proc = subprocess.Popen(["nginx", "-p", str(run), "-c", str(conf)], stderr=subprocess.PIPE)
        deadline = time.time() + 20
        while time.time() < deadline:
            assert self.proc.poll() is None, self.proc.stderr.read().decode()
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise AssertionError("nginx did not listen")

    def request(self, path: str, headers: dict | None = None, tls: bool | None = None) -> http.client.HTTPResponse:
        if tls if tls is not None else self.cert:
            context = ssl.create_default_context(cafile=str(self.cert))  # verified: the pair names 127.0.0.1
            conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=context, timeout=10)
        else:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        response.body = response.read()
        conn.close()
        return response

    def stream(self, cookie: str | None, session_id: str = "", proto: str | None = None) -> dict:
        """A websocket handshake as Streamlit's client sends it; the stand-in's answer (which worker, what headers)."""
        offer = "streamlit, 2|token" + (f", {session_id}" if session_id else "")
        headers = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Protocol": offer}
        if cookie is not None:
            headers["Cookie"] = f"attn_worker={cookie}"
        if proto:
            headers["X-Forwarded-Proto"] = proto
        r = self.request("/_stcore/stream", headers)
        assert r.status == 200, r.body
        answer = json.loads(r.body)
        assert r.getheader("X-Attention-Worker") == str(answer["worker"])
        assert f"attn_worker={answer['worker']};" in r.getheader("Set-Cookie")  # the worker that took it
        return answer

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGQUIT)
        self.proc.wait(timeout=10)
        for w in self.workers:
            w.shutdown()
            w.server_close()


@pytest.fixture
def plain(tmp_path):
    n = Nginx(tmp_path, tls=False)
    yield n
    n.stop()


@pytest.fixture
def https(tmp_path):
    n = Nginx(tmp_path, tls=True)
    yield n
    n.stop()


def test_a_new_session_goes_by_live_count_whatever_its_cookie(plain):
    # no websocket stays open here: the counts stay equal, and least_conn takes turns
    new = {plain.stream(cookie="0")["worker"] for _ in range(6)}
    assert new == {0, 1}  # a broken route (the cookie's worker) would answer 0 every time


def test_a_resumed_session_goes_to_its_cookies_worker_or_on_to_a_live_one(plain):
    assert {plain.stream(cookie="0", session_id="4f1c-resume")["worker"] for _ in range(6)} == {0}
    assert {plain.stream(cookie="1", session_id="4f1c-resume")["worker"] for _ in range(6)} == {1}
    assert {plain.stream(cookie=None, session_id="4f1c-resume")["worker"] for _ in range(6)} == {0, 1}  # no worker yet
    # a third entry of spaces is no session id (Streamlit reads it as none): a new session
    assert {plain.stream(cookie="0", session_id=" ")["worker"] for _ in range(6)} == {0, 1}
    plain.workers[0].shutdown()
    plain.workers[0].server_close()  # worker 0 is down: its sessions go on to the live one
    assert {plain.stream(cookie="0", session_id="4f1c-resume")["worker"] for _ in range(3)} == {1}


def test_the_page_and_media_still_follow_the_cookie(plain):
    for cookie in ("0", "1"):
        for path in ("/heads", "/media/abc.png", "/_stcore/health"):
            r = plain.request(path, {"Cookie": f"attn_worker={cookie}"})
            assert json.loads(r.body)["worker"] == int(cookie)
            assert r.getheader("Set-Cookie") is None  # only a websocket sets the browser's worker


def test_the_workers_are_told_the_scheme_the_browser_used(plain, https):
    assert https.stream(cookie=None)["headers"]["X-Forwarded-Proto"] == "https"
    assert json.loads(https.request("/heads").body)["headers"]["X-Forwarded-Proto"] == "https"
    assert https.stream(cookie=None, proto="http")["headers"]["X-Forwarded-Proto"] == "https"  # never downgraded
    assert plain.stream(cookie=None)["headers"]["X-Forwarded-Proto"] == "http"
    # behind a proxy that serves HTTPS (--public-url https://...), its word passes on
    assert plain.stream(cookie=None, proto="https")["headers"]["X-Forwarded-Proto"] == "https"
    assert json.loads(plain.request("/heads", {"X-Forwarded-Proto": "https"}).body)["headers"]["X-Forwarded-Proto"] == (
        "https"
    )


def test_plain_http_on_the_https_port_is_sent_on_to_https_and_never_reaches_a_worker(https):
    seen = [len(w.seen) for w in https.workers]
    r = https.request("/heads?room=K7QX", {"Cookie": "attn_worker=0; attn_class=secret"}, tls=False)
    assert r.status == 302
    assert r.getheader("Location") == f"https://127.0.0.1:{https.port}/heads?room=K7QX"
    assert [len(w.seen) for w in https.workers] == seen  # the request stopped at nginx
    followed = https.request("/heads?room=K7QX")  # where it points answers, with a verified certificate
    assert followed.status == 200 and json.loads(followed.body)["worker"] in (0, 1)
