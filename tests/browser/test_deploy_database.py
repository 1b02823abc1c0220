"""deploy/serve.py checks the classroom database before it starts anything (issue #44.5): a database it cannot use
stops it with exit code 2 and the problem, before a worker or nginx is started, and never with the password."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from harness.servers import ROOT, _can_bind, free_port, proxy_ports, serve_dirs
from tests.browser.conftest import browser_required

SERVE = ROOT / "deploy" / "serve.py"


def _serve(tmp_path, db_url: str) -> tuple[subprocess.CompletedProcess, list[int]]:
    if shutil.which("nginx") is None:
        message = "nginx is not installed (scripts/test.sh installs Debian's nginx)"
        pytest.fail(message) if browser_required() else pytest.skip(message)
    port, worker_port = proxy_ports(2)
    cmd = [sys.executable, str(SERVE), "--workers", "2", "--port", str(port), "--address", "127.0.0.1"]
    cmd += ["--worker-port", str(worker_port), *serve_dirs(tmp_path / "run")]
    env = {**os.environ, "ATTENTION_DB_URL": db_url}
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    return out, [port, worker_port, worker_port + 1]


def _closed_port() -> int:
    port = free_port()  # bound and released: nothing listens on it
    assert _can_bind(port)
    return port


@pytest.mark.parametrize(
    "db_url, problem",
    [
        ("garbage", "ATTENTION_DB_URL is not a database URL"),
        (f"postgresql+psycopg://u:secretpw@127.0.0.1:{_closed_port()}/db", "Connection refused"),
    ],
    ids=["not-a-url", "postgres-down"],
)
def test_a_database_that_cannot_be_used_stops_serve_before_anything_starts(tmp_path, db_url, problem):
    out, ports = _serve(tmp_path, db_url)
    said = out.stdout + out.stderr
    assert out.returncode == 2, said
    assert "class mode cannot start:" in said and problem in said
    assert "nothing was started: correct ATTENTION_DB_URL" in said
    assert "secretpw" not in said
    if "postgresql" in db_url:
        assert "u:***@127.0.0.1" in said  # the database is named, without its password
    assert "worker(s) starting" not in said and "] serving" not in said
    assert not (tmp_path / "run" / "nginx.conf").exists()  # not even nginx's configuration was written
    assert all(_can_bind(p) for p in ports)  # nothing listens on the proxy's port or the workers'
