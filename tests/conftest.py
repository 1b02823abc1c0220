"""Shared test setup. Kept minimal: module-specific helpers live in their own test files."""

import sys
from pathlib import Path

import pytest

# `attention` is imported from the working tree however pytest is started (`pytest`, `python -m pytest`).
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _run_app_py_on_every_apptest_run() -> None:
    """Make AppTest run app.py on every run, as the real server does.

    AppTest (Streamlit 1.67) resets PagesManager.uses_pages_directory before each run, so with a
    `pages/` folder every rerun after the first takes the legacy multipage path and runs the page
    file alone, skipping app.py's sidebar. The real server leaves legacy mode for good once
    st.navigation has run; this does the same for the test runner.
    """
    from streamlit.runtime.pages_manager import PagesManager

    original_init = PagesManager.__init__

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    PagesManager.__init__ = init


_run_app_py_on_every_apptest_run()


@pytest.fixture(scope="module")
def model():
    """The real model (all-MiniLM-L6-v2), loaded once per test module."""
    from attention.pretrained import load_minilm

    return load_minilm()


@pytest.fixture
def run_counter(monkeypatch):
    """Count the model's forward passes while a page runs (the page's cache sits in front of them)."""
    from attention.pretrained import MiniLM

    calls = []
    real_run = MiniLM.run

    def counting_run(self, text, **kwargs):
        calls.append(text)
        return real_run(self, text, **kwargs)

    monkeypatch.setattr(MiniLM, "run", counting_run)
    return calls
