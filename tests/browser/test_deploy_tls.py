"""`bash deploy/serve.sh --self-signed` (issue #44.14, #50.6): the app over HTTPS through nginx, its websocket over
wss in Chromium, plain HTTP on the same port sent on to https, and what the teacher is told.

One serve.sh (one worker) for the module, with its own certificate folder (ATTENTION_CACHE)."""

from __future__ import annotations

import http.client
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from deploy.serve import fingerprint, lan_ip
from harness.browser import wait_idle
from harness.servers import ROOT, proxy_ports, serve_dirs
from tests.browser.conftest import WAIT_MS
from tests.browser.test_deploy import _children

COLD_RUN_MS = 120_000
PUBLIC = "https://attention.test.example"  # the name a proxy in front of it would have (never resolved)


class TlsServe:
    def __init__(self, tmp: Path):
        if shutil.which("nginx") is None:
            pytest.fail("nginx is not installed (scripts/test.sh installs Debian's nginx)")
        self.port, worker_port = proxy_ports(1)
        self.cache = tmp / "cache"
        self.out = tmp / "serve.log"
        cmd = ["bash", str(ROOT / "deploy" / "serve.sh"), "--workers", "1", "--port", str(self.port), "--self-signed"]
        cmd += ["--address", "127.0.0.1", "--worker-port", str(worker_port), *serve_dirs(tmp / "run")]
        env = {
            **os.environ,
            "PYTHON": sys.executable,
            "ATTENTION_CACHE": str(self.cache),
            "ATTENTION_PUBLIC_URL": PUBLIC,
        }
        with open(self.out, "wb") as log:
            self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 120
        while "no warning: a certificate" not in self.said() and self.proc.poll() is None and time.time() < deadline:
            time.sleep(0.1)
        assert "serving over HTTPS" in self.said(), self.said()
        self.url = f"https://127.0.0.1:{self.port}"
        self.cert = self.cache / "tls" / "self-signed.crt"

    def said(self) -> str:
        return self.out.read_text(errors="replace")

    def get(self, path: str) -> tuple[int, bytes]:
        context = ssl.create_default_context(cafile=str(self.cert))  # verified against the pair serve.sh made
        with urllib.request.urlopen(self.url + path, timeout=10, context=context) as r:
            return r.status, r.read()

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    s = TlsServe(tmp_path_factory.mktemp("tls"))
    yield s
    assert s.stop() == 0


def test_the_app_is_served_over_https_with_a_certificate_for_this_machine(served):
    status, body = served.get("/heads")  # the hostname 127.0.0.1 is checked against the certificate
    assert status == 200 and b"<!DOCTYPE html>" in body
    assert served.get("/healthz") == (200, b"ok")
    san = subprocess.run(
        ["openssl", "x509", "-in", str(served.cert), "-noout", "-ext", "subjectAltName"], capture_output=True, text=True
    ).stdout
    assert "DNS:localhost" in san
    if lan_ip():  # the address the students are given is in it too
        assert f"IP Address:{lan_ip()}" in san
    context = ssl.create_default_context(cafile=str(served.cert))
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as raw:
        with pytest.raises(ssl.SSLCertVerificationError):  # and for no other name
            context.wrap_socket(raw, server_hostname="elsewhere.example")


def test_plain_http_is_sent_on_to_https(served):
    conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=10)
    conn.request("GET", "/causal?t=2")
    r = conn.getresponse()
    assert r.status == 302 and r.getheader("Location") == f"{served.url}/causal?t=2"
    conn.close()


def test_serve_says_what_browsers_show_and_how_to_avoid_it(served):
    said = served.said()
    assert f"made the self-signed certificate {served.cert}" in said
    assert "each device shows a warning page the first time" in said
    assert f"SHA-256 fingerprint (the browser shows it under the certificate): {fingerprint(served.cert)}" in said
    assert "no warning: a certificate for a DNS name" in said and "--cert FILE --key FILE" in said
    assert f"plain http:// to port {served.port} is sent on to https://" in said
    assert f"give the students:  {PUBLIC}  (--public-url)" in said and "students cannot reach it" not in said
    assert f"on this machine:    https://localhost:{served.port}" in said
    assert "plain HTTP: anyone on this network" not in said


def test_the_workers_are_told_where_the_class_connects(served):
    """The class page's student link reads these (ui/student_link.py): the public URL, and nginx's address (the
    workers' own is loopback, which would make the page say students cannot reach it)."""
    workers = []
    for pid in _children(served.proc.pid):  # serve.sh execs serve.py: its children are nginx and the worker
        try:
            if b"streamlit" not in Path(f"/proc/{pid}/cmdline").read_bytes():
                continue
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        workers.append(dict(e.decode(errors="replace").partition("=")[::2] for e in environ if b"=" in e))
    assert workers, "no worker found"
    for env in workers:
        assert env["ATTENTION_PUBLIC_URL"] == PUBLIC and env["ATTENTION_LISTEN_ADDRESS"] == "127.0.0.1"


def test_a_student_passes_the_warning_once_and_the_page_works_over_wss_in_chromium(served, browser):
    """As a student's Chromium: the address typed without https:// is sent on to https, the warning page says the
    certificate is not vouched for (its name is right: not a name error), Advanced then Proceed opens the app,
    and its websocket (a rerun) runs over wss."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = ctx.new_page()
        page.set_default_timeout(WAIT_MS)
        sockets = []
        page.on("websocket", lambda ws: sockets.append(ws.url))
        with pytest.raises(PlaywrightError, match="ERR_CERT_AUTHORITY_INVALID"):
            page.goto(f"http://127.0.0.1:{served.port}/heads")
        expect(page.locator("body")).to_contain_text("Your connection is not private")
        expect(page.locator("body")).to_contain_text(re.compile("net::ERR_CERT_AUTHORITY_INVALID", re.I))
        page.click("#details-button")
        page.click("#proceed-link")
        wait_idle(page, timeout=COLD_RUN_MS)
        assert page.url.startswith(f"{served.url}/heads")
        assert sockets and all(url.startswith(f"wss://127.0.0.1:{served.port}/") for url in sockets)
        box = page.locator('[data-testid="stCheckbox"]').filter(has=page.get_by_text("Causal mask", exact=True))
        was = box.locator('input[type="checkbox"]').is_checked()
        box.get_by_text("Causal mask", exact=True).click()  # a rerun: over the websocket
        wait_idle(page)
        expect(box.locator('input[type="checkbox"]')).to_be_checked(checked=not was)
        expect(page).to_have_url(re.compile("causal=" + ("0" if was else "1")))
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
        page.goto(f"{served.url}/block")  # the browser remembers its decision: no second warning
        wait_idle(page)
        expect(page.locator('[data-testid="stMain"] h1').first).to_have_text("The transformer block")
    finally:
        ctx.close()
