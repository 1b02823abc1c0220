"""The floor of a timer fragment: the server CPU one `st.fragment(run_every=1)` rerun costs in the least app that
has one (a line of text, redrawn every second), to compare with what a following student's bar costs in class
mode (bench/load/classroom.py prints that). Prints figures; not a CI test.

    python bench/fragment_floor.py [--sessions 30] [--seconds 30]

One `streamlit run` of a two-line app (written to a temporary folder, with the app's .streamlit/config.toml) on a
free port; N browser-less sessions
(bench/ws_client.py) each send the fragment's timer reruns once a second, as the browser's setInterval does; the
server's CPU over the window divided by the reruns it served.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.load.processes import cpu_seconds, process_tree  # noqa: E402
from bench.servers import ROOT, start_server  # noqa: E402

APP = """import streamlit as st

@st.fragment(run_every=1.0)
def bar():
    st.markdown("**Room ABCDEF** (anonymous) · following the teacher")

bar()
"""


async def session(url: str, stop: float, counts: list[int]) -> None:
    from bench.ws_client import ProtocolSession

    s = ProtocolSession(url, timeout=60)
    await s.connect()
    try:
        await s.open("")
        (fid,) = s.auto_reruns
        next_at = time.monotonic() + 1.0
        while time.monotonic() < stop:
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            next_at += 1.0
            result = await s.tick(fid)
            if result.status == "FINISHED_SUCCESSFULLY" and result.fragment:
                counts.append(1)
    finally:
        await s.close()


async def main_async(args) -> None:
    folder = Path(tempfile.mkdtemp(prefix="fragment-floor-"))
    (folder / "app.py").write_text(APP)
    (folder / ".streamlit").mkdir()
    config = (ROOT / ".streamlit" / "config.toml").read_text()  # the app's own server settings (no file watcher,
    (folder / ".streamlit" / "config.toml").write_text(config)  # no full garbage collection after each run)
    proc, url = start_server(root=folder)
    try:
        pids = process_tree(proc.pid)
        counts: list[int] = []
        start = time.monotonic()
        stop = start + args.seconds
        tasks = [asyncio.ensure_future(session(url, stop, counts)) for _ in range(args.sessions)]
        await asyncio.sleep(5)  # every session open and ticking
        n0, cpu0, t0 = len(counts), cpu_seconds(pids), time.monotonic()
        await asyncio.gather(*tasks)
        reruns, cpu, wall = len(counts) - n0, cpu_seconds(pids) - cpu0, time.monotonic() - t0
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(
        f"{args.sessions} sessions, one timer rerun a second each: {reruns} reruns in {wall:.0f} s, server CPU "
        f"{cpu:.1f} s ({100 * cpu / wall:.0f} % of a core): {1000 * cpu / max(1, reruns):.1f} ms per rerun"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=30.0)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
