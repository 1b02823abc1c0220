"""Browser tests: the real app under `streamlit run`, driven by Playwright in Debian's Chromium.

One server per test session. Browser tests are skipped only when Chromium or Playwright is
missing AND no environment variable asks for them; with CI=true or REQUIRE_BROWSER=1 (which
scripts/test.sh, the README's test command, sets) a missing browser is a failure, so the suite can
never pass by skipping them.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
    "--disable-dev-shm-usage",
]
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
SKELETON = '[data-testid="stSkeleton"]'  # placeholders of elements (charts, grids) still loading in the browser
ARTIFACTS = ROOT / "artifacts" / "screenshots"
# How long a wait may take before it fails. A wait returns as soon as its condition holds, so this costs time only
# when a test fails; on a shared 2-core machine under load (load average 15) a first page took over 30 s to show.
WAIT_MS = 90_000


def browser_required() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true") or os.environ.get("REQUIRE_BROWSER") == "1"


def _missing_browser_reason() -> str | None:
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        return f"Chromium not found at {CHROMIUM}"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(
    port: int | None = None, extra_args: tuple[str, ...] = (), stdout: int | None = None
) -> tuple[subprocess.Popen, str]:
    """Start `streamlit run app.py` on a free local port; return the process and its base URL.

    Its output goes to a temporary file, or with `stdout=subprocess.PIPE` to `proc.stdout`, which the caller
    must then read all along (the benchmarks read each run's time from it)."""
    port = port or _free_port()
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(ROOT / "app.py"),
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--browser.gatherUsageStats",
        "false",
        *extra_args,
    ]
    # a file unless asked: a pipe nobody reads stops the server (and its children) once it holds 64 kB of log
    log = tempfile.TemporaryFile() if stdout is None else None
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=stdout if log is None else log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        if proc.poll() is not None:
            if log is not None:
                log.seek(0)
            output = proc.stdout if log is None else log  # None if the caller sent it elsewhere
            said = output.read() if output is not None else b""
            raise RuntimeError(f"streamlit exited early: {said.decode(errors='replace')}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("streamlit did not become healthy within 60 s")


@pytest.fixture(scope="session")
def app_url():
    reason = _missing_browser_reason()
    if reason:
        if browser_required():
            pytest.fail(f"browser tests are required here but {reason}")
        pytest.skip(reason)
    proc, url = start_server()
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="session")
def browser(app_url):
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=WAIT_MS)  # as the pages' own default: on a busy machine a chart takes a while
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def context(browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    yield ctx
    ctx.close()


@pytest.fixture
def page(context):
    pg = context.new_page()
    pg.set_default_timeout(WAIT_MS)
    yield pg


def wait_idle(page, timeout: float = WAIT_MS, settle: float = 0.5) -> None:
    """Wait until Streamlit's script is not running, nothing is still loading, and both have held
    for `settle` seconds.

    A single look is not enough: an interaction's rerun (or the first run's redirect through
    app.py) may not have started yet when we look, so the state must hold steadily.
    """
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout)
    deadline = time.time() + timeout / 1000
    idle_since = None
    while time.time() < deadline:
        if page.locator(IDLE).count() and not page.locator(SKELETON).count():
            idle_since = idle_since or time.time()
            if time.time() - idle_since >= settle:
                return
        else:
            idle_since = None
        page.wait_for_timeout(50)
    raise TimeoutError(f"the app was still running after {timeout / 1000:.0f} s")


def open_page(page, app_url: str, path: str = "", query: str = "") -> None:
    """Navigate to a page of the app (url_path, e.g. "playground") and wait for its first run."""
    url = f"{app_url}/{path}" + (f"?{query}" if query else "")
    page.goto(url)
    wait_idle(page)


def assert_no_exception(page) -> None:
    from playwright.sync_api import expect

    shown = page.locator('[data-testid="stException"]')
    try:
        expect(shown).to_have_count(0)
    except AssertionError:
        raise AssertionError(shown.first.inner_text()) from None


def screenshot(page, name: str) -> Path:
    """Save a whole-page screenshot under artifacts/screenshots/ (for a person to look at).

    Streamlit scrolls inside its main block, so a "full page" screenshot would stop at the window:
    grow the window to the content's height for the shot, then put it back.
    """
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    viewport = page.viewport_size
    height = page.evaluate("() => (document.querySelector('[data-testid=\"stMain\"]') || document.body).scrollHeight")
    if viewport:
        page.set_viewport_size({"width": viewport["width"], "height": min(int(height) + 100, 16000)})
        page.wait_for_timeout(800)  # plotly redraws at the new size
        wait_idle(page)
    page.screenshot(path=str(path), full_page=True)
    if viewport:
        page.set_viewport_size(viewport)
    return path
