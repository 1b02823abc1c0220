"""plotly never handed a module that another thread is still importing (entry "half-imported-modules" of
ui/streamlit_internals).

plotly asks `_plotly_utils.optional_imports.get_module(name, should_load=False)` whether pandas, numpy or PIL is
loaded, so as not to import them itself, and reads `sys.modules` for the answer. A module enters `sys.modules`
before its body runs: while one session's thread imports pandas (the app imports it where a table is drawn, so
that a page's first run does not wait for it), another session's thread building or encoding a chart gets the
half-built module and fails on `pd.Series` or `pd.NaT` ("partially initialized module 'pandas' has no
attribute ..."): a crash of the page that happened to draw a chart at that moment. narwhals, which plotly also
uses, makes the same check the way CPython's import system does (`module.__spec__._initializing`, narwhals
issue #4067); this makes plotly's `get_module` make it too: a module still being imported is not loaded yet,
which is true, since no object of it can have reached a chart.
"""

from __future__ import annotations

import sys


def initializing(module) -> bool:
    """Whether `module` is still running its body in some thread (CPython's own test, importlib._bootstrap)."""
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


def hide_half_imported_modules() -> None:
    """Replace plotly's get_module, in its own module and in every plotly module that imported the name, with one
    that answers None for a module still being imported; once per process."""
    from _plotly_utils import optional_imports

    original = getattr(optional_imports.get_module, "replaced", optional_imports.get_module)
    if optional_imports.get_module is not original:
        return

    def get_module(name, should_load=True):
        if not should_load:
            module = sys.modules.get(name)
            return None if module is None or initializing(module) else module
        return original(name, should_load)  # import_module waits for another thread's import of `name`

    get_module.replaced = original
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith(("plotly", "_plotly_utils")):
            if getattr(module, "get_module", None) is original:
                module.get_module = get_module


def pandas():
    """pandas, imported on first use (a page's first run draws no table and does not wait 0.27 s for it;
    docs/performance.md, "pandas when a table is drawn"). Race-free: CPython's per-module import lock makes a second
    thread's import wait until the first has finished, and plotly, the one reader of `sys.modules` that did not
    wait, is answered by `get_module` above (tests/test_import_race.py)."""
    import pandas as pd

    return pd
