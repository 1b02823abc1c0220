"""How many Python function calls a full run of each page makes, at two or more commits, side by side.

    python bench/call_counts.py --revs ea9d759 HEAD                 # every page of the load test's plan
    python bench/call_counts.py --revs d990b41 415ad34 --pages heads,positions --runs 10

Server CPU per run (bench/compare_revisions.py) is the figure that matters, but on a shared machine it moves
by 5-10 % from minute to minute. The number of function calls a run makes does not: it changes only with the
code, so it shows which pages a change made heavier, and where (--top prints the functions whose call counts
grew most on one page). Each commit is extracted with `git archive`; each (commit, page) runs in a child
process (the page through AppTest, its default link, `--runs` runs after 4 to warm up), counted by a
profile hook in the scripts' threads. AppTest's own work is included the same at every commit. Not a CI test.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.load.plan import PAGES  # noqa: E402
from bench.servers import snapshot_of  # noqa: E402


def child(root: str, page: str, runs: int) -> None:
    """In the child: count the calls of `runs` full runs of pages/<page>.py from the tree at `root`; print a
    JSON line. AppTest runs each script in a new thread, and threading.setprofile reaches exactly those."""
    os.chdir(root)
    sys.path[:0] = [root]
    from streamlit.testing.v1 import AppTest

    counts: Counter[str] = Counter()

    def count(frame, event, arg) -> None:
        if event == "call":
            counts[f"{frame.f_code.co_filename.removeprefix(root).lstrip('/')}:{frame.f_code.co_name}"] += 1
        elif event == "c_call":
            counts[f"~:{getattr(arg, '__qualname__', arg)}"] += 1

    at = AppTest.from_file(str(Path(root) / "app.py"), default_timeout=120)
    at.switch_page(f"pages/{page}.py")  # straight on the page, as opening its URL
    for _ in range(4):
        at.run()
    threading.setprofile(count)
    for _ in range(runs):
        at.run()
    threading.setprofile(None)
    print(json.dumps({"calls": sum(counts.values()) / runs, "functions": counts, "runs": runs}))


def measure(root: Path, page: str, runs: int) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(root), page, str(runs)], capture_output=True, text=True, cwd=root
    )
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        raise SystemExit(f"{root.name} {page}: the child failed\n{out.stderr[-2000:]}")
    return json.loads(lines[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--revs", nargs="+", help="two or more commits; the first is the base")
    ap.add_argument("--pages", default=",".join(p for p in PAGES if p != "class"))
    ap.add_argument("--runs", type=int, default=20, help="profiled runs per page (default 20)")
    ap.add_argument("--top", type=int, default=0, help="per page, the functions whose calls grew most")
    ap.add_argument("--scratch", default="/tmp/callcounts")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]))
        return
    if not args.revs or len(args.revs) < 2:
        ap.error("--revs needs two or more commits")
    trees = [snapshot_of(Path(args.scratch), rev)[0] for rev in args.revs]
    print(f"Python function calls per full run (AppTest, default link, {args.runs} runs after 4):")
    print(f"{'page':<18}" + "".join(f"{rev:>12}" for rev in args.revs) + "   last/first")
    totals = [0.0] * len(trees)
    for page in args.pages.split(","):
        found = [measure(tree, page, args.runs) for tree in trees]
        for i, f in enumerate(found):
            totals[i] += f["calls"]
        calls = [f["calls"] for f in found]
        print(f"{page:<18}" + "".join(f"{c:>12,.0f}" for c in calls) + f"   {calls[-1] / calls[0]:>9.2f}")
        if args.top:
            first, last = found[0]["functions"], found[-1]["functions"]
            grew = sorted(((last.get(k, 0) - first.get(k, 0)) / args.runs, k) for k in set(first) | set(last))
            for more, where in reversed(grew[-args.top :]):
                print(f"    {more:+9.0f}  {where}")
    print(f"{'all pages':<18}" + "".join(f"{t:>12,.0f}" for t in totals) + f"   {totals[-1] / totals[0]:>9.2f}")


if __name__ == "__main__":
    main()
