"""`python -m classroom.check`, which deploy/serve.py runs before it serves: the database the app will use."""

from __future__ import annotations

import subprocess
import sys

from harness.servers import ROOT


def _check(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "classroom.check", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )


def test_help_answers_without_opening_or_making_a_database(tmp_path):
    import os

    data = tmp_path / "data"
    env = {**os.environ, "ATTENTION_DATA_DIR": str(data)}
    env.pop("ATTENTION_DB_URL", None)
    helped = _check("--help", env=env)
    assert helped.returncode == 0 and "usage: python -m classroom.check" in helped.stdout
    assert not data.exists()  # --help opened nothing
    wrong = _check("--url", "x", env=env)
    assert wrong.returncode == 2 and "unrecognized arguments" in wrong.stderr and not data.exists()
    checked = _check(env=env)
    assert checked.returncode == 0 and str(data / "classroom.db") in checked.stdout


def test_the_app_and_the_check_read_the_database_from_the_environment_alone(monkeypatch):
    from ui.classroom_session import configured_url

    monkeypatch.delenv("ATTENTION_DB_URL", raising=False)
    assert configured_url() is None  # the default SQLite file, as the check opens it
    monkeypatch.setenv("ATTENTION_DB_URL", "  sqlite:////tmp/x.db ")
    assert configured_url() == "sqlite:////tmp/x.db"


def test_the_wrong_code_limit_counts_the_browsers_address_behind_a_trusted_front():
    from ui.classroom_session import forwarded_client

    # one machine's nginx appends the address it saw: the browser's, or the front's
    assert forwarded_client("192.168.1.7", "") == "192.168.1.7"
    assert forwarded_client("192.168.1.7, 10.0.0.1", "") == "10.0.0.1"  # no front named: the front's, shared
    assert forwarded_client("192.168.1.7, 10.0.0.1", "10.0.0.1") == "192.168.1.7"
    assert forwarded_client("192.168.1.7, 10.0.0.1", " 10.0.0.9 , 10.0.0.1") == "192.168.1.7"
    # what the browser sent itself stays to the left of what the front saw: a forged entry is never chosen
    assert forwarded_client("6.6.6.6, 192.168.1.7, 10.0.0.1", "10.0.0.1") == "192.168.1.7"
    assert forwarded_client("10.0.0.1", "10.0.0.1") == "10.0.0.1"  # nothing left of the front: its own
    assert forwarded_client(" , ", "10.0.0.1") == "unknown"
    assert len(forwarded_client("x" * 500, "")) == 64
