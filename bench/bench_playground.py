"""Benchmark the Playground as a user feels it. Prints figures; not part of the test suite.

    python bench/bench_playground.py [--repeats 15]

1. server-side rerun time for one interaction (toggling the causal mask) at the default size:
   the script run's own duration as app.py records it under `streamlit run`; target <= 50 ms median;
2. time from clicking the causal toggle to the repainted heatmap in headless Chromium;
   target <= 300 ms median;
3. time from starting `streamlit run` to the first heatmap on screen; target <= 5 s.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, start_server, wait_idle  # noqa: E402

HEATMAP = '[data-testid="stPlotlyChart"] .js-plotly-plot'
UPPER_RIGHT = "el => el._fullData && el._fullData[0] ? el._fullData[0].z[0][3] : null"


def browser_figures(repeats: int) -> tuple[float, list[float], list[float]]:
    """(seconds to first heatmap, click-to-repaint ms per click, server script-run ms per click)."""
    from playwright.sync_api import sync_playwright

    os.environ["ATTENTION_LOG_RUN_MS"] = "1"  # app.py prints each run's duration
    with sync_playwright() as p:
        # The browser is already open, as a teacher's would be: the clock starts with the server.
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        start = time.perf_counter()
        proc, url = start_server()
        try:
            page.goto(url)
            page.wait_for_function(
                f"() => document.querySelector('{HEATMAP}') && document.querySelector('{HEATMAP}')._fullData",
                timeout=60_000,
            )
            first_heatmap = time.perf_counter() - start
            wait_idle(page)
            toggle = page.get_by_text("Causal mask", exact=True)
            times = []
            for _ in range(repeats):
                before = page.locator(HEATMAP).first.evaluate(UPPER_RIGHT)
                t0 = time.perf_counter()
                toggle.click()
                page.wait_for_function(
                    f"before => {{ const el = document.querySelector('{HEATMAP}'); "
                    f"return el && el._fullData && el._fullData[0].z[0][3] !== before; }}",
                    arg=before,
                    polling="raf",
                    timeout=10_000,
                )
                times.append((time.perf_counter() - t0) * 1000)
                wait_idle(page, settle=0.2)
            browser.close()
        finally:
            proc.terminate()
    runs = [float(m) for m in re.findall(r"run_ms=([0-9.]+)", proc.stdout.read().decode(errors="replace"))]
    return first_heatmap, times, runs[-repeats:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    first, clicks, rerun = browser_figures(args.repeats)
    print(
        f"server rerun (toggle causal, default size): median {statistics.median(rerun):6.1f} ms, "
        f"min {min(rerun):6.1f} ms  (target <= 50 ms median)"
    )
    print(
        f"click causal -> repainted heatmap (Chromium): median {statistics.median(clicks):6.1f} ms, "
        f"min {min(clicks):6.1f} ms  (target <= 300 ms median)"
    )
    print(f"server start -> first heatmap on screen:      {first:6.2f} s  (target <= 5 s)")


if __name__ == "__main__":
    main()
