"""deploy/: nginx in front of two workers, as `bash deploy/serve.sh --workers 2` starts them (issue #17).

One proxy and two workers for the module (deploy/serve.py on free ports, run times logged by each worker):
the proxy serves a page and compresses the big bundle; a session stays on its worker across reruns; a page
works through the proxy in Chromium; killing its worker brings the same view back from the other one; Ctrl-C
leaves no process behind; serve.sh says what is missing instead of installing it.
"""

from __future__ import annotations

import asyncio
import gzip
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

from harness.browser import wait_idle
from harness.protocol import ProtocolSession
from harness.servers import ROOT, proxy_ports, serve_dirs
from tests.browser.conftest import WAIT_MS, browser_required, run_async

SERVE = ROOT / "deploy" / "serve.py"
COLD_RUN_MS = 120_000  # a fresh worker's first run imports the app: on a busy shared machine, well over 30 s


def _get(url: str, headers: dict | None = None) -> tuple[int, dict, bytes]:
    req = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()


def _children(pid: int) -> set[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    kids = {int(p) for p in out}
    for k in list(kids):
        kids |= _children(k)
    return kids


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class Proxy:
    def __init__(self, workers: int, tmp: Path):
        if shutil.which("nginx") is None:
            message = "nginx is not installed (scripts/test.sh installs Debian's nginx)"
            if browser_required():
                pytest.fail(message)
            pytest.skip(message)
        self.port, self.worker_port = proxy_ports(workers)  # the workers' ports follow worker_port
        self.run_dir = tmp / f"serve-{self.port}"
        self.url = f"http://127.0.0.1:{self.port}"
        cmd = [sys.executable, str(SERVE), "--workers", str(workers), "--port", str(self.port)]
        cmd += ["--address", "127.0.0.1", "--worker-port", str(self.worker_port), *serve_dirs(self.run_dir)]
        env = {**os.environ, "ATTENTION_LOG_RUN_MS": "1"}
        self.log = open(tmp / f"serve-{self.port}.log", "wb")
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        self.wait_healthy(range(workers))

    def worker_url(self, i: int) -> str:
        return f"http://127.0.0.1:{self.worker_port + i}"

    def worker_pid(self, i: int) -> int:
        for pid in _children(self.proc.pid):
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"streamlit" in cmdline and str(self.worker_port + i).encode() in cmdline:
                return pid
        raise LookupError(f"no worker {i} under the supervisor")

    def runs(self, i: int) -> int:
        """Script runs worker i has logged (app.py prints run_ms=... with ATTENTION_LOG_RUN_MS=1)."""
        return (self.run_dir / f"worker{i}.log").read_text(errors="replace").count("run_ms=")

    def wait_healthy(self, workers, timeout: float = 90) -> None:
        deadline = time.time() + timeout
        pending = [self.url + "/healthz", *(self.worker_url(i) + "/_stcore/health" for i in workers)]
        while pending and time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"serve.py exited: {(self.log.name and Path(self.log.name).read_text())}")
            still = []
            for url in pending:
                try:
                    _get(url)
                except OSError:
                    still.append(url)
            pending = still
            time.sleep(0.2)
        assert not pending, f"not healthy after {timeout} s: {pending}"

    def stop(self) -> set[int]:
        """Ctrl-C; returns the processes that were running under the supervisor."""
        tree = _children(self.proc.pid) | {self.proc.pid}
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()
        return tree


@pytest.fixture(scope="module")
def proxy(tmp_path_factory):
    p = Proxy(2, tmp_path_factory.mktemp("deploy"))
    yield p
    p.stop()


def test_the_proxy_serves_the_page_and_its_health(proxy):
    status, headers, body = _get(proxy.url + "/causal")
    assert status == 200 and b"<!DOCTYPE html>" in body
    assert headers["x-attention-worker"] in ("0", "1")  # a worker answered, and the browser is told which
    assert "set-cookie" not in headers  # the page does not pick the browser's worker: its websocket does
    assert _get(proxy.url + "/healthz")[2] == b"ok"
    assert _get(proxy.url + "/_stcore/health")[2] == b"ok"


def test_with_one_worker_per_core_each_worker_has_its_own_core(proxy):
    from deploy.serve import usable_cores, worker_cores

    cores = usable_cores()
    pinned = [os.sched_getaffinity(proxy.worker_pid(i)) for i in range(2)]
    if len(cores) == 2:  # this machine (and CI's): one worker per core, so each is pinned to its own
        assert pinned == [{cores[0]}, {cores[1]}]
    else:  # two workers on another number of cores: the scheduler places them
        assert worker_cores(2, "auto", cores) == [None, None] and pinned == [set(cores)] * 2


def test_the_big_bundle_is_compressed_and_cached_for_a_year(proxy):
    import streamlit

    js = Path(streamlit.__file__).parent / "static" / "static" / "js"
    biggest = max(js.glob("*.js"), key=lambda p: p.stat().st_size)  # plotly's bundle
    raw = biggest.read_bytes()
    assert len(raw) > 2_000_000
    status, headers, body = _get(f"{proxy.url}/static/js/{biggest.name}", {"Accept-Encoding": "gzip"})
    assert status == 200 and headers.get("content-encoding") == "gzip"
    assert len(body) < 0.4 * len(raw)
    assert gzip.decompress(body) == raw
    assert "max-age=31536000" in headers["cache-control"] and "immutable" in headers["cache-control"]
    # a client that takes no compression still gets the file
    status, headers, body = _get(f"{proxy.url}/static/js/{biggest.name}")
    assert "content-encoding" not in headers and body == raw
    # the page itself is compressed on the fly, and never cached
    _, headers, _ = _get(proxy.url + "/", {"Accept-Encoding": "gzip"})
    assert headers.get("content-encoding") == "gzip" and headers["cache-control"] == "no-cache"


def test_a_session_stays_on_its_worker_across_reruns(proxy):
    async def scenario():
        s = ProtocolSession(proxy.url)
        await s.connect()
        try:
            opened = await s.open("heads")
            worker = s.worker
            before = [proxy.runs(0), proxy.runs(1)]
            runs = [await s.toggle("Causal mask") for _ in range(3)]
            runs.append((await s.goto("block"), None, None))
            runs.append(await s.toggle("Causal mask"))
            after = [proxy.runs(0), proxy.runs(1)]
            # the session's HTTP requests (health, media) go to the same worker, by the cookie
            headers = await asyncio.to_thread(
                lambda: _get(proxy.url + "/_stcore/health", s._cookie_header())[1]["x-attention-worker"]
            )
            return opened, worker, runs, before, after, headers
        finally:
            await s.close()

    opened, worker, runs, before, after, http_worker = run_async(scenario())
    assert opened.status == "FINISHED_SUCCESSFULLY" and worker in ("0", "1")
    assert all(r[0].status == "FINISHED_SUCCESSFULLY" and not r[0].exceptions for r in runs)
    w, other = int(worker), 1 - int(worker)
    assert after[w] - before[w] == len(runs)  # every rerun ran on the session's worker...
    assert after[other] == before[other]  # ...and none on the other
    assert http_worker == worker


def test_a_new_session_goes_to_the_worker_with_the_fewest_live_sessions(proxy):
    """The websocket, not the page request, picks a new browser's worker, by open websockets: sessions that
    closed free their worker. Round robin over page requests (what choosing at the page did) would alternate."""

    async def scenario():
        async def new_session() -> ProtocolSession:
            s = ProtocolSession(proxy.url)
            await s.connect()
            assert s.cookies.get("attn_worker") == s.worker  # the websocket's answer names the worker
            return s

        first = [await new_session() for _ in range(4)]
        split = sorted(s.worker for s in first)
        emptied = first[0].worker
        for s in first:
            if s.worker == emptied:
                await s.close()
        await asyncio.sleep(0.5)  # nginx sees both close
        later = [await new_session() for _ in range(2)]
        for s in first + later:
            await s.close()
        return split, emptied, [s.worker for s in later]

    split, emptied, later = run_async(scenario())
    assert split == ["0", "0", "1", "1"]  # two and two
    assert later == [emptied, emptied]  # 0 live against 2, then 1 against 2: both go to the emptied worker


@pytest.fixture
def proxy_page(browser, proxy):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(WAIT_MS)
    yield ctx, page
    ctx.close()


def _worker_cookie(ctx) -> str:
    return next(c["value"] for c in ctx.cookies() if c["name"] == "attn_worker")


def _toggle(page, label: str):
    box = page.locator('[data-testid="stCheckbox"]').filter(has=page.get_by_text(label, exact=True))
    return box.locator('input[type="checkbox"]'), box.get_by_text(label, exact=True)


def _no_exception(page) -> None:
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def test_a_page_through_the_proxy_works_in_chromium(proxy, proxy_page):
    ctx, page = proxy_page
    failed = []
    page.on("requestfailed", lambda r: failed.append(r.url))
    page.goto(proxy.url + "/heads")
    wait_idle(page, timeout=COLD_RUN_MS)
    worker = _worker_cookie(ctx)
    box, label = _toggle(page, "Causal mask")
    was = box.is_checked()
    label.click()
    wait_idle(page)
    expect(box).to_be_checked(checked=not was)
    assert parse_qs(urlparse(page.url).query)["causal"] == ["1" if not was else "0"]
    page.locator(f'[data-testid="stSidebarNav"] a[href="{proxy.url}/block"]').click()
    page.wait_for_url("**/block*")
    wait_idle(page)
    expect(page.locator('[data-testid="stMain"] h1').first).to_have_text("The transformer block")
    _no_exception(page)
    assert _worker_cookie(ctx) == worker and not failed


def test_killing_its_worker_brings_the_same_view_back(proxy, proxy_page):
    ctx, page = proxy_page
    page.goto(proxy.url + "/heads")
    wait_idle(page, timeout=COLD_RUN_MS)
    box, label = _toggle(page, "Causal mask")
    if not box.is_checked():
        label.click()
        wait_idle(page)
    url, worker = page.url, int(_worker_cookie(ctx))
    other = 1 - worker
    expect(box).to_be_checked()
    assert "causal=1" in url
    runs_other = proxy.runs(other)
    os.kill(proxy.worker_pid(worker), signal.SIGKILL)
    # the app notices, reconnects through the proxy to the live worker and reruns itself there
    page.wait_for_function("() => (window.__attnRerunAfterReconnect && window.__attnReconnectReruns || 0) > 0")
    wait_idle(page)
    # the other worker drew the page (its log line may follow the drawn page by a moment: waited for)...
    deadline = time.time() + 30
    while proxy.runs(other) <= runs_other and time.time() < deadline:
        time.sleep(0.1)
    assert proxy.runs(other) > runs_other
    assert _worker_cookie(ctx) == str(other)  # ...and the browser now belongs to it
    assert page.url == url  # the same view
    expect(box).to_be_checked()
    expect(page.locator('[data-testid="stMain"] h1').first).to_have_text("Multi-head attention")
    _no_exception(page)
    label.click()  # and the page works on: the next change is drawn by the live worker
    wait_idle(page)
    expect(box).not_to_be_checked()
    expect(page).to_have_url(re.compile("causal=0"))
    _no_exception(page)
    proxy.wait_healthy([worker], timeout=60)  # the supervisor restarted the killed worker


def test_ctrl_c_leaves_no_process_behind(tmp_path):
    p = Proxy(1, tmp_path)
    tree = p.stop()
    assert len(tree) >= 3  # the supervisor, nginx (master and worker), the Streamlit worker
    deadline = time.time() + 10
    while any(_alive(pid) for pid in tree) and time.time() < deadline:
        time.sleep(0.2)
    assert not [pid for pid in tree if _alive(pid)]
    assert p.proc.returncode == 0


NGINX_ERRORS = ("[emerg]", "[alert]", "[crit]", "[error]", "connect() failed", "no live upstreams")


def test_serve_sh_says_serving_once_a_request_through_it_succeeds_and_logs_no_error(tmp_path):
    """A normal start: while it starts, a browser keeps asking for the page through the proxy; the moment
    serve.sh says "serving", the page and the health check answer through it, and its output holds no
    error line (nginx's "connect() failed" or "no live upstreams" come from asking a worker that is not up)."""
    if shutil.which("nginx") is None:
        pytest.fail("nginx is not installed (scripts/test.sh installs Debian's nginx)")
    port, worker_port = proxy_ports(1)
    out = tmp_path / "serve.log"
    cmd = ["bash", str(ROOT / "deploy" / "serve.sh"), "--workers", "1", "--port", str(port)]
    cmd += ["--address", "127.0.0.1", "--worker-port", str(worker_port), *serve_dirs(tmp_path / "run")]
    url = f"http://127.0.0.1:{port}"
    asked = 0
    with open(out, "wb") as log:
        proc = subprocess.Popen(cmd, env={**os.environ, "PYTHON": sys.executable}, stdout=log, stderr=log)
    try:
        deadline = time.time() + 120
        while "] serving" not in out.read_text() and proc.poll() is None and time.time() < deadline:
            asked += 1
            try:
                _get(url + "/heads")
            except OSError:  # refused (nginx not started) or 502: either way the user was not told to come yet
                pass
            time.sleep(0.05)
        while "(docs/deploying.md)" not in out.read_text() and time.time() < deadline:  # the block's last line
            time.sleep(0.05)
        said = out.read_text()
        assert "serving with 1 worker(s)" in said and f"on this machine:    http://localhost:{port}\n" in said, said
        # the classroom database was checked before anything started, and the teacher told which it is
        assert said.index("classroom database: sqlite:///") < said.index("worker(s) starting"), said
        assert "students cannot reach it: it listens on 127.0.0.1 only" in said  # the test listens on loopback
        assert "plain HTTP: anyone on this network who listens can read the teacher's key" in said
        health, page = _get(url + "/healthz"), _get(url + "/heads")  # right after the line: both answer
        assert health[0] == 200 and health[2] == b"ok"
        assert page[0] == 200 and b"<!DOCTYPE html>" in page[2]
        bundle = re.search(rb'src="\.?/?(static/js/[^"]+\.js)"', page[2])
        assert bundle, page[2][:2000]
        script = _get(f"{url}/{bundle.group(1).decode()}")  # nginx serves it from the compressed copy
        assert script[0] == 200 and len(script[2]) > 1000
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    said = out.read_text()
    assert asked > 0  # the start was watched from outside, as a class would
    assert not [line for line in said.splitlines() if any(e in line for e in NGINX_ERRORS)], said
    assert proc.returncode == 0


def test_serve_sh_says_what_is_missing_and_installs_nothing(tmp_path):
    bin_dir = tmp_path / "bin"  # a PATH with bash's helpers and Python, but no nginx
    bin_dir.mkdir()
    for tool in ("dirname", "bash"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    (bin_dir / "python3").symlink_to(sys.executable)
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path)}
    out = subprocess.run(
        [str(bin_dir / "bash"), str(ROOT / "deploy" / "serve.sh"), "--workers", "1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert "nginx" in out.stderr and "apt-get install nginx" in out.stderr


def test_check_sh_passes_in_the_project_environment():
    """deploy/check.sh after the test command: the nginx configuration and the Kubernetes schema check both
    run (kubernetes-validate comes with requirements-dev.txt) and pass, with the environment's Python."""
    if shutil.which("nginx") is None:
        pytest.fail("nginx is not installed (scripts/test.sh installs Debian's nginx)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHON"}
    env["VIRTUAL_ENV"] = sys.prefix  # as scripts/test.sh leaves it: the project's environment is active
    out = subprocess.run(
        ["bash", str(ROOT / "deploy" / "check.sh")], env=env, capture_output=True, text=True, timeout=300
    )
    lines = out.stdout.splitlines()
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"INFO     Python: {sys.prefix}/bin/python" in lines
    assert any(line.startswith("PASS     nginx -t on the configuration for 2 workers") for line in lines), out.stdout
    assert any(line.startswith("PASS     nginx -t on the HTTPS configuration") for line in lines), out.stdout
    assert any(line.startswith("PASS     nginx -t on deploy/front.py's configuration") for line in lines), out.stdout
    assert any(line.startswith("PASS     deploy/kubernetes/*.yaml against the Kubernetes schema") for line in lines)
    assert not [line for line in lines if line.startswith("FAIL")]
