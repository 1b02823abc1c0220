"""Server CPU per run of two versions of the app, side by side on the same machine at the same moments.

    python bench/compare_revisions.py --base <commit>               # that commit against the working tree
    python bench/compare_revisions.py --base HEAD~1 --new HEAD --rounds 8

This machine's speed changes from second to second (harness/speed_probe.py: the same loop takes 10 ms, then
17 ms), which hides a 5-10 % change between two load tests run one after the other. Here both versions
serve at once, each on its own server, and one browser-less session (harness/protocol.py) takes every step
on one and then on the other (the order alternating by round): go to a page, then use its first option
(harness/load/plan.py's ACTIONS), page after page, as the load test's class does. Each run's CPU is read from the
server's process tree (/proc) before and after it. What differs between the two columns is the code.

Prints, per page and for the whole mix, the mean server CPU per run of each version and their ratio, and
the ratio of each round (new / base) so that its spread shows. One session at a time: the figures are the
CPU a run costs on an otherwise idle machine, lower than under a class, where the load generator and the
other sessions share the cores and caches. Not a CI test.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.load.plan import ACTIONS, PAGES  # noqa: E402
from harness.load.processes import cpu_seconds, process_tree  # noqa: E402
from harness.protocol import ProtocolSession  # noqa: E402
from harness.servers import snapshot_of, start_server  # noqa: E402


async def step(
    session: ProtocolSession, page: str, action: tuple[str, str] | None, pids: list[int], up: bool = True
) -> float:
    """One run (a page change, or an option of the page); its server CPU in ms."""
    before = cpu_seconds(pids)
    if action is None:
        result = await session.goto(PAGES[page])
    else:
        result, _, _ = await session.use(*action, 1 if up else -1)  # a slider back and forth: never past its end
    spent = (cpu_seconds(pids) - before) * 1000
    if result.status != "FINISHED_SUCCESSFULLY" or result.exceptions:
        raise SystemExit(f"{page} {action}: {result.status} {result.exceptions[:1]}")
    return spent


async def compare(servers: dict[str, tuple[str, list[int]]], pages: list[str], rounds: int, seed: int) -> dict:
    rng = random.Random(seed)
    sessions = {}
    for name, (url, _pids) in servers.items():
        sessions[name] = ProtocolSession(url, timeout=120)
        await sessions[name].connect()
        await sessions[name].open("")
    spent: dict[str, dict[str, list[float]]] = {name: {p: [] for p in pages} for name in servers}
    per_round: list[dict[str, float]] = []
    names = list(servers)
    try:
        for r in range(rounds + 1):  # round 0 warms both servers' caches and is not counted
            order = list(pages)
            rng.shuffle(order)
            totals = dict.fromkeys(names, 0.0)
            for page in order:
                steps = [None] + ([ACTIONS[page][r % len(ACTIONS[page])]] if ACTIONS[page] else [])
                for name in names if r % 2 == 0 else names[::-1]:
                    for action in steps:
                        ms = await step(sessions[name], page, action, servers[name][1], up=r % 2 == 0)
                        if r:
                            spent[name][page].append(ms)
                            totals[name] += ms
            if r:
                per_round.append(totals)
    finally:
        for s in sessions.values():
            await s.close()
    return {"spent": spent, "per_round": per_round}


def report(result: dict, base: str, new: str, pages: list[str]) -> None:
    spent, per_round = result["spent"], result["per_round"]
    print(f"\nserver CPU per run, ms (mean over {len(per_round)} rounds; one session, alternating):")
    print(f"{'page':18s} {'runs':>5s} {base:>12s} {new:>12s} {'new/base':>9s}")
    for page in pages:
        a, b = spent["base"][page], spent["new"][page]
        ratio = statistics.mean(b) / statistics.mean(a) if statistics.mean(a) else float("nan")
        print(f"{page:18s} {len(a):5d} {statistics.mean(a):12.1f} {statistics.mean(b):12.1f} {ratio:9.2f}")
    all_a = [x for p in pages for x in spent["base"][p]]
    all_b = [x for p in pages for x in spent["new"][p]]
    mean_a, mean_b = statistics.mean(all_a), statistics.mean(all_b)
    print(f"{'the mix':18s} {len(all_a):5d} {mean_a:12.1f} {mean_b:12.1f} {mean_b / mean_a:9.2f}")
    ratios = sorted(t["new"] / t["base"] for t in per_round if t["base"])
    print(
        f"per round, new/base: median {statistics.median(ratios):.2f}, from {ratios[0]:.2f} to {ratios[-1]:.2f} "
        f"({', '.join(f'{x:.2f}' for x in ratios)})"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the commit to compare against")
    ap.add_argument("--new", default=None, help="a commit (default: the working tree)")
    ap.add_argument("--rounds", type=int, default=6, help="rounds over every page (plus one to warm up)")
    ap.add_argument("--pages", default=",".join(PAGES))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scratch", default="/tmp/loadtest")
    args = ap.parse_args()
    pages = [p for p in args.pages.split(",") if p]
    unknown = [p for p in pages if p not in PAGES]
    if unknown:
        ap.error(f"unknown page(s) {unknown}; choose from {','.join(PAGES)}")
    scratch = Path(args.scratch)
    procs, servers = [], {}
    try:
        for name, rev in (("base", args.base), ("new", args.new)):
            if rev is None:
                proc, url = start_server()
                label = "working tree"
            else:
                target, start = snapshot_of(scratch, rev)
                proc, url = start()
                label = target.name.removeprefix("snapshot-")
            procs.append(proc)
            servers[name] = (url, process_tree(proc.pid))
            print(f"{name}: {label} at {url}")
        result = asyncio.run(compare(servers, pages, args.rounds, args.seed))
        base_label = args.base
        new_label = args.new or "working tree"
        report(result, base_label[:12], new_label[:12], pages)
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=20)
    return 0


if __name__ == "__main__":
    sys.exit(main())
