"""Debian's Chromium for benchmarks and browser tests: its path, the flags every headless run uses, and waiting
until the app is idle in a Playwright (sync API) page. Tests import these; nothing here imports the tests."""

from __future__ import annotations

import os
import time

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
WAITING = "is on its way"  # ui.after_charts's box (the Playground's grid), there until its next run


def wait_idle(page, timeout: float = 90_000, settle: float = 0.5) -> None:
    """Wait until Streamlit's script is not running, nothing is still loading, and both have held
    for `settle` seconds.

    A single look is not enough: an interaction's rerun (or the first run's redirect through
    app.py) may not have started yet when we look, so the state must hold steadily.
    """
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout)
    deadline = time.time() + timeout / 1000
    idle_since = None
    while time.time() < deadline:
        if page.locator(IDLE).count() and not page.locator(SKELETON).count() and not page.get_by_text(WAITING).count():
            idle_since = idle_since or time.time()
            if time.time() - idle_since >= settle:
                return
        else:
            idle_since = None
        page.wait_for_timeout(50)
    raise TimeoutError(f"the app was still running after {timeout / 1000:.0f} s")
