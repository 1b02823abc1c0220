"""Starting the app locally for benchmarks and browser tests: `streamlit run app.py` on a free port, of this
tree or of a snapshot of a commit, and deploy/serve.py's proxy with its workers. Tests import these; nothing
here imports the tests."""

from __future__ import annotations

import functools
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(
    port: int | None = None, extra_args: tuple[str, ...] = (), stdout: int | None = None, root: Path = ROOT
) -> tuple[subprocess.Popen, str]:
    """Start `streamlit run app.py` of `root` (this tree, or a snapshot) on a free local port; return the process
    and its base URL.

    Its output goes to a temporary file, or with `stdout=subprocess.PIPE` to `proc.stdout`, which the caller
    must then read all along (the benchmarks read each run's time from it)."""
    port = port or free_port()
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(root / "app.py"),
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--browser.gatherUsageStats",
        "false",
        *extra_args,
    ]
    # a file unless asked: a pipe nobody reads stops the server (and its children) once it holds 64 kB of log
    log = tempfile.TemporaryFile() if stdout is None else None
    proc = subprocess.Popen(cmd, cwd=root, stdout=stdout if log is None else log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        if proc.poll() is not None:
            if log is not None:
                log.seek(0)
            output = proc.stdout if log is None else log  # None if the caller sent it elsewhere
            said = output.read() if output is not None else b""
            raise RuntimeError(f"streamlit exited early: {said.decode(errors='replace')}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("streamlit did not become healthy within 60 s")


def serve_reading_output(serve, port: int | None, extra_args: tuple[str, ...]) -> tuple[subprocess.Popen, str]:
    """`serve` (a start_server) with the server's output on a pipe, which the caller must read all along (the
    load test's ServerOutput reads each run's time from it)."""
    return serve(port, extra_args, stdout=subprocess.PIPE)


def snapshot_of(scratch: Path, rev: str = "HEAD"):
    """Extract the last commit (or `rev`) into scratch/snapshot-<sha>; return it and a start_server that serves it."""
    sha = subprocess.run(
        ["git", "rev-parse", "--short", rev], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    target = scratch / f"snapshot-{sha}"
    if not (target / "app.py").exists():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.Popen(["git", "archive", sha], cwd=ROOT, stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", str(target)], stdin=archive.stdout, check=True)
        if archive.wait() != 0:
            raise SystemExit(f"git archive {sha} failed")
    return target, functools.partial(start_server, root=target)


def start_proxy(args, scratch: Path, app_dir: Path = ROOT) -> tuple[subprocess.Popen, str]:
    """app_dir's deploy/serve.py with args.workers workers, their output on its own (run times are read from it)."""
    port = args.port or free_port()
    worker_port = free_port()
    while abs(worker_port - port) <= args.workers:
        worker_port = free_port()
    serve_py = app_dir / "deploy" / "serve.py"
    if not serve_py.exists():
        raise SystemExit(f"--workers: {serve_py} does not exist (a commit from before deploy/ was written?)")
    cmd = [sys.executable, str(serve_py), "--workers", str(args.workers), "--port", str(port)]
    cmd += ["--address", "127.0.0.1", "--worker-port", str(worker_port), "--run-dir", str(scratch / f"serve-{port}")]
    cmd += ["--worker-output", "inherit", f"--streamlit-arg=--server.disconnectedSessionTTL={args.ttl}"]
    proc = subprocess.Popen(cmd, cwd=app_dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    # the workers first: nginx would log each refused /healthz while they start
    health = [f"http://127.0.0.1:{worker_port + i}/_stcore/health" for i in range(args.workers)] + [f"{url}/healthz"]
    deadline = time.time() + 120
    while health and time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"serve.py exited: {proc.stdout.read().decode(errors='replace')}")
        try:
            with urllib.request.urlopen(health[0], timeout=2):
                health.pop(0)
        except OSError:
            time.sleep(0.2)
    if health:
        proc.kill()
        raise RuntimeError(f"not healthy within 120 s: {health}")
    args.worker_ports = [worker_port + i for i in range(args.workers)]
    return proc, url
