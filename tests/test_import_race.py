"""A chart drawn while another session's thread imports pandas: the crash seen on a projector (issue #44), and its
fix (ui/streamlit_internals/imports.py). Each case runs in a fresh interpreter, where pandas is not imported yet:
one thread imports it while another asks plotly what it asks while it validates and encodes a chart."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

RACE = textwrap.dedent(
    """
    import sys, threading
    sys.setswitchinterval(1e-5)  # the threads take turns often: the import's window is seen for sure
    import numpy as np
    import plotly.graph_objects as go
    import plotly.io as pio
    from _plotly_utils.optional_imports import get_module
    if "fix" in sys.argv:
        from ui.streamlit_internals.imports import hide_half_imported_modules
        hide_half_imported_modules()
        from _plotly_utils.optional_imports import get_module
    assert "pandas" not in sys.modules
    seen, failures, done = [], [], threading.Event()

    def charts():
        while not done.is_set():
            pd = get_module("pandas", should_load=False)
            if pd is not None and not hasattr(pd, "Series"):
                seen.append("half-built pandas")
            try:
                fig = go.Figure(go.Bar(x=["a", "b"], y=np.array([1.0, 2.0])))  # what the answers chart builds
                pio.to_json(fig)  # what st.plotly_chart's encoding does
            except Exception as err:
                failures.append(repr(err))

    thread = threading.Thread(target=charts)
    thread.start()
    import pandas  # noqa: F401  - another session drawing its first table
    done.set()
    thread.join()
    print("seen", len(seen), "failures", len(failures), (failures or [""])[0][:200])
    """
)


def run(*flags: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", RACE, *flags], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout.strip()


def test_without_the_fix_plotly_is_handed_the_half_imported_pandas():
    """The race is real in this environment: the test below would catch it coming back."""
    out = run()
    assert not out.startswith("seen 0 "), out


def test_with_the_fix_no_chart_sees_pandas_half_imported_nor_fails():
    assert run("fix") == "seen 0 failures 0", run("fix")


def test_the_app_puts_the_fix_in_place_before_any_page_draws():
    from _plotly_utils import optional_imports

    from tests.apptest_helpers import open_page

    at = open_page("pages/playground.py")
    assert not at.exception
    assert getattr(optional_imports.get_module, "replaced", None) is not None
    import plotly.basedatatypes as basedatatypes
    import plotly.io._json as plotly_json

    assert basedatatypes.get_module is optional_imports.get_module
    assert plotly_json.get_module is optional_imports.get_module
