"""The server CPU of each page's heaviest reachable interaction (issue #17: at most about 2 s each).

    python bench/bench_heavy.py

One server (`streamlit run app.py`), one browser-less session (harness/protocol.py). For every entry of
harness/load/plan.py's mischief_plan (the link a mischievous student can type, at every limit, plus the
button where the work needs one), first with seed 1000 (a cold run: nothing cached) and then again with
seed 1001 (a new seed defeats the cross-session cache: what a student changing the seed costs):
the server process's own CPU time for the run (utime + stime from /proc, its threads included) and, apart,
the CPU of the child processes it waited for (the trainings ui/background.py runs at nice 19, off the
request path). Wall time is BackMsg sent -> script_finished received.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.load.plan import PAGES, mischief_plan  # noqa: E402
from harness.protocol import ProtocolSession  # noqa: E402
from harness.servers import start_server  # noqa: E402

BUDGET_S = 2.0


def cpu(pid: int) -> tuple[float, float]:
    """(own CPU s, CPU s of waited-for children) of a process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick, (int(fields[13]) + int(fields[14])) / tick


async def measure(url: str, pid: int) -> list[tuple[str, str, float, float, float, str]]:
    rows = []
    for seed in (1000, 1001):
        for page, query, button in mischief_plan(seed):
            # a typed link opens a new session (a page reads its link on its first run in a session)
            s = ProtocolSession(url, timeout=300)
            await s.connect(PAGES[page])
            try:
                steps = [("link", lambda s=s, p=page, q=query: s.open(PAGES[p], urlencode(q)))]
                if button:
                    steps.append((button, lambda s=s, b=button: s.click(b)))
                for what, act in steps:
                    own0, kids0 = cpu(pid)
                    result = await act()
                    own1, kids1 = cpu(pid)
                    note = result.status if result.status != "FINISHED_SUCCESSFULLY" else ""
                    note += " " + "; ".join(result.exceptions + result.errors)[:80]
                    rows.append((f"{page} (seed {seed})", what, own1 - own0, kids1 - kids0, result.ms / 1000, note))
            finally:
                await s.close()
    return rows


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()  # --help, and nothing else
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    proc, url = start_server()
    try:
        rows = asyncio.run(measure(url, proc.pid))
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    print(f"{'page':<28} {'what':<18} {'server CPU':>10} {'niced child':>11} {'wall':>7}")
    worst = 0.0
    for page, what, own, kids, wall, note in rows:
        worst = max(worst, own)
        print(f"{page:<28} {what:<18} {own:>9.2f}s {kids:>10.2f}s {wall:>6.1f}s {note.strip()}")
    verdict = "PASS" if worst <= BUDGET_S * 1.25 else "FAIL"
    print(f"{verdict}  the heaviest interaction's server CPU: {worst:.2f} s (target: about {BUDGET_S:.0f} s)")
    print("load average at the end: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
