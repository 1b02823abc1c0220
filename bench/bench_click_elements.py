"""What each kind of element on a page costs a click that redraws something else. Prints figures; not a CI test.

    python bench/bench_click_elements.py [--clicks 24] [--count 28] [--seed 0]

The Playground's switches and heatmap are a section of the page (an `st.fragment`): a click reruns that section
alone, yet the browser's work for the click grows with the rest of the page. This measures by how much, for
each kind of element the Playground shows. Every variant is bench/floor_app.py's toggle and heatmap in a
fragment, followed by `--count` elements of one kind that the click does not redraw (or, for "sidebar", inside a
navigation of 13 pages in two groups in the sidebar, app.py's has 13 in six; or that navigation hidden and its 13
pages as links in the sidebar). The floor app itself (its whole script reruns) is the reference, the Playground
(app.py) the last line. Every app has its own server and page in one Chromium; the apps' clicks come in a
shuffled order each round. Per click: bench/bench_playground.py's click ("Causal mask" -> the heatmap's upper-right cell
repainted), and the page's main thread busy for it (the DevTools protocol's TaskDuration, from the click to
0.3 s after the run's end). Printed per app: the medians of both, their ratios to the floor's, and what one
element adds to the busy time, against the fragment alone.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._threads import print_machine  # noqa: E402
from bench.bench_playground import APPS, click_until_repainted, open_for_clicks  # noqa: E402
from bench.browser import CHROMIUM, CHROMIUM_ARGS, IDLE, wait_idle  # noqa: E402

SECTION = f"""import sys

sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})

import numpy as np
import pandas as pd
import streamlit as st

from bench.floor_app import draw

section = st.fragment(draw)  # the floor's toggle and heatmap, in a fragment


"""
# Thirteen pages, the section's the first (what the navigation variants share).
PAGES = """
def other(i):
    def page():
        st.write(f"page {i}")

    page.__name__ = f"page{i}"
    return page


pages = [st.Page(section, title="Floor", url_path="floor", default=True)]
pages += [st.Page(other(i), title=f"Page number {i}", url_path=f"p{i}") for i in range(12)]
"""
# What follows the section in each variant; N is the count of elements.
KINDS = {
    "fragment alone": "section()\n",
    "markdown": 'section()\nfor i in range(N):\n    st.markdown(f"Paragraph {i}: some **bold** text, no formula.")\n',
    "markdown with $math$": (
        'section()\nfor i in range(N):\n    st.markdown(f"Paragraph {i}: each row of scores $x$ gives $e^{{x_i}}$.")\n'
    ),
    "caption": 'section()\nfor i in range(N):\n    st.caption(f"Caption {i}: rows are queries, columns are keys.")\n',
    "latex": (
        "section()\nfor i in range(N):\n    st.latex(r'\\mathrm{softmax}(x)_i = \\frac{e^{x_i}}{\\sum_k e^{x_k}}')\n"
    ),
    "text input": 'section()\nfor i in range(N):\n    st.text_input(f"Label {i}", key=f"t{i}")\n',
    "button": 'section()\nfor i in range(N):\n    st.button(f"Button {i}", key=f"b{i}")\n',
    "select box": 'section()\nfor i in range(N):\n    st.selectbox(f"Choice {i}", ["a", "b"], key=f"s{i}")\n',
    "grid (one, 4 x 6)": (
        'section()\nst.data_editor(pd.DataFrame(np.arange(24.0).reshape(4, 6), columns=list("abcdef")), key="grid")\n'
    ),
    "sidebar of 13 pages": PAGES + "st.navigation({'First': pages[:5], 'Second': pages[5:]}).run()\n",
    "13 page links instead": (  # the same navigation hidden, its pages as links in the sidebar
        PAGES + "nav = st.navigation(pages, position='hidden')\n"
        "with st.sidebar:\n    for page in pages:\n        st.page_link(page)\n"
        "nav.run()\n"
    ),
}


def write_variants(folder: Path, count: int) -> dict[str, Path]:
    scripts = {}
    for i, (kind, tail) in enumerate(KINDS.items()):
        script = folder / f"variant_{i}.py"
        script.write_text(SECTION + f"N = {count}\n" + tail)
        scripts[kind] = script
    return scripts


def busy_ms(devtools) -> float:
    """The page's main thread busy so far, in ms (the DevTools protocol's TaskDuration: every task it ran)."""
    metrics = devtools.send("Performance.getMetrics")["metrics"]
    return 1000 * next(m["value"] for m in metrics if m["name"] == "TaskDuration")


def click(page, devtools) -> tuple[float, float]:
    """Click "Causal mask": ms until the heatmap's upper-right cell has changed on screen (bench_playground's
    time_click: Playwright finds the toggle by its text and clicks it), and the main thread's busy ms from just
    before the click to 0.3 s after the run's end (the page's own work for the click; meanwhile nothing polls the
    page but a frame-by-frame look at the heatmap and at the run's state)."""
    page.bring_to_front()
    busy = busy_ms(devtools)
    t0, repainted = click_until_repainted(page)
    page.wait_for_selector(IDLE, state="attached", timeout=10_000)
    page.wait_for_timeout(300)  # the work the run's end leaves (layout, paint), with nothing polling the page
    busy = busy_ms(devtools) - busy
    wait_idle(page, settle=0.2)
    return (repainted - t0) * 1000, busy


def measure(scripts: dict[str, Path], clicks: int, seed: int) -> dict[str, list[tuple[float, float]]]:
    from playwright.sync_api import sync_playwright

    times: dict[str, list[tuple[float, float]]] = {name: [] for name in scripts}
    shuffle = random.Random(seed).shuffle
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        opened: dict = {}
        try:
            devtools = {}
            for name, script in scripts.items():
                open_for_clicks(browser, script, opened, name)
                page = opened[name][2]
                devtools[name] = page.context.new_cdp_session(page)
                devtools[name].send("Performance.enable")
            for _ in range(clicks):
                order = list(scripts)
                shuffle(order)
                for name in order:
                    times[name].append(click(opened[name][2], devtools[name]))
        finally:
            for server, context, _ in opened.values():
                context.close()
                server.stop()
            browser.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clicks", type=int, default=24, help="clicks per app (default 24)")
    parser.add_argument("--count", type=int, default=28, help="elements of each kind (default 28)")
    parser.add_argument("--seed", type=int, default=0, help="the click order's seed")
    args = parser.parse_args()
    print_machine()
    with tempfile.TemporaryDirectory(prefix="click_elements_") as folder:
        scripts = {
            "floor (whole script)": APPS["floor"],
            **write_variants(Path(folder), args.count),
            "the Playground (app.py)": APPS["real"],
        }
        times = measure(scripts, max(1, args.clicks), args.seed)
    print(
        f"{args.clicks} clicks per app (seed {args.seed}), {args.count} elements of each kind; medians of the click ->"
        " repainted heatmap"
        " and of the page's main thread busy for the click; what one element adds to the latter, against the"
        " fragment alone"
    )
    wall = {name: statistics.median(t[0] for t in rows) for name, rows in times.items()}
    busy = {name: statistics.median(t[1] for t in rows) for name, rows in times.items()}
    floor, alone = "floor (whole script)", "fragment alone"
    for name in times:
        extra = busy[name] - busy[alone]
        if name in (floor, alone, "the Playground (app.py)"):
            each = ""
        elif name.startswith(("sidebar", "grid", "13 page")):
            each = f"   in all {extra:+6.1f} ms"
        else:
            each = f"   per element {extra / args.count:+5.2f} ms"
        print(
            f"  {name:<24} click {wall[name]:6.1f} ms ({wall[name] / wall[floor]:4.2f})"
            f"   busy {busy[name]:6.1f} ms ({busy[name] / busy[floor]:4.2f}){each}"
        )


if __name__ == "__main__":
    main()
