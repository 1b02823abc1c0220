"""Browser tests: the real app under `streamlit run`, driven by Playwright in Debian's Chromium.

One server per test session. Browser tests are skipped only when Chromium or Playwright is
missing AND no environment variable asks for them; with CI=true or REQUIRE_BROWSER=1 (which
scripts/test.sh, the README's test command, sets) a missing browser is a failure, so the suite can
never pass by skipping them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from harness.browser import CHROMIUM, CHROMIUM_ARGS, wait_idle
from harness.load.plan import PAGES as LOAD_TEST_PAGES
from harness.servers import ROOT, start_server

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "ROOT", "start_server", "wait_idle"]  # what the browser tests import from here
ARTIFACTS = ROOT / "artifacts" / "screenshots"
# How long a wait may take before it fails. A wait returns as soon as its condition holds, so this costs time only
# when a test fails; on a shared 2-core machine under load (load average 15) a first page took over 30 s to show.
WAIT_MS = 90_000
# The url path of every page a student reads (the Playground lives at /), as the load test's plan lists them;
# /class has its own tests (a room's pages).
PAGES = list(LOAD_TEST_PAGES.values())


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


@contextlib.contextmanager
def served(*extra_args: str, **variables: str):
    """`streamlit run app.py` on a free local port, with `variables` in its environment, for the browser tests (failed,
    not skipped, where a browser is required but missing); yields its URL and stops it after."""
    reason = _missing_browser_reason()
    if reason:
        if browser_required():
            pytest.fail(f"browser tests are required here but {reason}")
        pytest.skip(reason)
    with environment(**variables):
        proc, url = start_server(extra_args=extra_args)
    try:
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def class_server(*extra_args: str):
    """A server for class mode's browser tests: its own fresh SQLite store, and the bars' safety timer at an hour, so
    that a student who follows within a test's wait can only have been pushed (ui/classroom_push.py)."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="attention-class-"))
    return served(*extra_args, ATTENTION_DB_URL=f"sqlite:///{folder / 'class.db'}", ATTENTION_CLASS_SAFETY_S="3600")


@pytest.fixture(scope="session")
def app_url():
    with served() as url:
        yield url


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


def open_page(page, app_url: str, path: str = "", query: str = "") -> None:
    """Navigate to a page of the app (url_path, e.g. "playground") and wait for its first run."""
    url = f"{app_url}/{path}" + (f"?{query}" if query else "")
    page.goto(url)
    wait_idle(page)


def type_into_open_cell(page, text: str) -> None:
    """Type `text` into the grid's open cell editor as a person types (about 60 ms a key), then press Enter.

    The grid's editor keeps what was typed in its own state, a frame after the input box shows it: an Enter
    pressed in the same frame as the last key (which only a script can do) commits the old value. Measured
    with the Playground's grid: 8 of 10 edits lost typed at once and Enter at once, 0 of 10 typed at 80 ms a
    key. So: a person's typing speed, the input showing the text, and two painted frames before Enter.
    """
    from playwright.sync_api import expect

    editor = page.locator(".gdg-input")
    page.keyboard.type(text, delay=60)
    expect(editor).to_have_value(text)
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    page.keyboard.press("Enter")


def assert_no_exception(page) -> None:
    from playwright.sync_api import expect

    shown = page.locator('[data-testid="stException"]')
    try:
        expect(shown).to_have_count(0)
    except AssertionError:
        raise AssertionError(shown.first.inner_text()) from None


@contextlib.contextmanager
def environment(**variables: str):
    """Set environment variables for what starts inside (a server inherits them), then put back what was there."""
    before = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def closing_pages(name: str):
    """A list for the pages a test opens, each in its own browser context: if the test fails, each page's screen
    is saved as artifacts/screenshots/<name>_<i>.png (for a person to look at what each screen showed); at the
    end every context is closed."""
    pages: list = []
    try:
        yield pages
    except Exception:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        for i, page in enumerate(pages):
            try:
                page.screenshot(path=str(ARTIFACTS / f"{name}_{i}.png"), timeout=60_000)
            except Exception:  # noqa: BLE001 - the test's own failure is the one to report
                pass
        raise
    finally:
        for page in pages:
            page.context.close()


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


def run_async(coro, timeout: float = 240):
    """Run `coro` to its end on a thread of its own, within `timeout` s: Playwright's sync API keeps an event loop
    running in the test's thread while a browser fixture is alive, and asyncio.run() refuses to start there."""

    async def bounded():
        return await asyncio.wait_for(coro, timeout=timeout)

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, bounded()).result()
