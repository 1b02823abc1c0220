"""Training children started without re-running the app's script (entry "spawn-without-main" of
ui/streamlit_internals).

A spawned child re-runs the parent's main script before anything else, and under Streamlit the main module
is the app's script (Streamlit puts each run's module in sys.modules["__main__"]): every training child
would run app.py, and the page it defaults to, in bare mode, with a warning per Streamlit call, enough to
fill a stderr pipe that nobody reads and stop the child there. The child needs nothing from it (the
functions it runs are importable), so the preparation data sent to it leaves the main script out.
"""

from __future__ import annotations

import multiprocessing.spawn


def spawn_without_main() -> None:
    """Children spawned from this process from now on do not re-run its main script; once per process."""
    original = multiprocessing.spawn.get_preparation_data
    if getattr(original, "replaced", None) is not None:
        return

    def get_preparation_data(name):
        data = original(name)
        data.pop("init_main_from_path", None)
        data.pop("init_main_from_name", None)
        return data

    get_preparation_data.replaced = original
    multiprocessing.spawn.get_preparation_data = get_preparation_data
