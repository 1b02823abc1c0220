"""Benchmark the position page ("Where is position?"): its server-side rerun per interaction.

    python bench/bench_positions_page.py                # 15 interactions of each kind
    python bench/bench_positions_page.py --check        # exit 1 if the median rerun is over the target

One `streamlit run` server (app.py prints each script run's duration with ATTENTION_LOG_RUN_MS=1) and
browser-less sessions speaking Streamlit's own protocol (harness/protocol.py), so no browser competes with
the server for the CPU. Interactions: the shuffle button, the ALiBi heads slider, the padding's causal
toggle. For each: the script run as app.py records it (the page's rerun; target <= 100 ms median) and the
round trip from sending the widget change to the server's `script_finished` (run + serialising + transfer).
Reference, measured in the same run on the same server: the Playground's rerun when its causal mask is
toggled (its own target is 50 ms), so the ratio stays meaningful on a slower or busier machine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.machine import print_machine  # noqa: E402
from harness.protocol import ProtocolSession  # noqa: E402
from harness.servers import start_server  # noqa: E402

TARGET_MS = 100.0


class RunLog:
    """The server's run_ms lines, read as they come (a thread drains the server's output)."""

    def __init__(self, proc) -> None:
        self.ms: list[float] = []
        threading.Thread(target=self._read, args=(proc,), daemon=True).start()

    def _read(self, proc) -> None:
        for line in iter(proc.stdout.readline, b""):
            found = re.match(rb"run_ms=([0-9.]+)", line)
            if found:
                self.ms.append(float(found.group(1)))

    def since(self, start: int, count: int) -> list[float]:
        """The `count` runs logged after the first `start`, waiting briefly for the reader to catch up."""
        deadline = time.time() + 5
        while len(self.ms) < start + count and time.time() < deadline:
            time.sleep(0.02)
        return self.ms[start : start + count]


async def measure(session: ProtocolSession, log: RunLog, action, repeats: int) -> tuple[list[float], list[float]]:
    """(script run ms, round-trip ms) of `repeats` interactions, after two warm-up ones."""
    for _ in range(2):
        await action()
    start, trips = len(log.ms), []
    for _ in range(repeats):
        result = await action()
        if result.exceptions or result.status != "FINISHED_SUCCESSFULLY":
            raise RuntimeError(f"the page failed: {result.status} {result.exceptions}")
        trips.append(result.ms)
    return log.since(start, repeats), trips


async def run(url: str, log: RunLog, repeats: int) -> dict[str, tuple[list[float], list[float]]]:
    figures = {}
    playground = ProtocolSession(url)
    await playground.connect()
    await playground.open("")
    figures["Playground: toggle the causal mask (reference)"] = await measure(
        playground, log, lambda: _toggle(playground, "Causal mask"), repeats
    )
    await playground.close()
    positions = ProtocolSession(url)
    await positions.connect()
    opened = await positions.open("positions")
    if opened.exceptions or opened.h1 != "Where is position?":
        raise RuntimeError(f"the position page did not open: {opened.status} {opened.exceptions} {opened.h1!r}")
    figures["positions: press Shuffle the words"] = await measure(
        positions, log, lambda: positions.click("Shuffle the words"), repeats
    )
    steps = iter([1, -1] * repeats)
    figures["positions: move the ALiBi heads slider"] = await measure(
        positions, log, lambda: positions.slide("Heads H", next(steps)), repeats
    )
    figures["positions: toggle the padding's causal mask"] = await measure(
        positions, log, lambda: _toggle(positions, "Causal mask too"), repeats
    )
    await positions.close()
    return figures


async def _toggle(session: ProtocolSession, label: str):
    result, _, _ = await session.toggle(label)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15, help="timed interactions of each kind (default 15)")
    parser.add_argument("--check", action="store_true", help="exit 1 if a median rerun of the page is over target")
    args = parser.parse_args()
    print_machine()
    os.environ["ATTENTION_LOG_RUN_MS"] = "1"  # app.py prints each run's duration
    proc, url = start_server(stdout=subprocess.PIPE)  # RunLog reads each run's time from it
    try:
        figures = asyncio.run(run(url, RunLog(proc), args.repeats))
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    reference = statistics.median(next(iter(figures.values()))[0])
    over = False
    for name, (runs, trips) in figures.items():
        median = statistics.median(runs)
        verdict = "" if name.startswith("Playground") else f"; target {TARGET_MS:.0f} ms: "
        if verdict:
            over |= median > TARGET_MS
            verdict += "ok" if median <= TARGET_MS else "OVER"
        print(
            f"{name:<48} rerun median {median:6.1f} ms (min {min(runs):5.1f}, max {max(runs):6.1f}) = "
            f"{median / reference:4.1f}x the Playground's; round trip median {statistics.median(trips):6.1f} ms"
            f"{verdict}"
        )
    return 1 if args.check and over else 0


if __name__ == "__main__":
    sys.exit(main())
