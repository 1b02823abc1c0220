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
# deploy/serve.py's compressed copy of Streamlit's static files, shared by every test and bench run (made once
# per Streamlit version). In /tmp, which every user can enter: started by root, nginx's workers run as nobody.
STATIC_CACHE = Path(tempfile.gettempdir()) / "attention-serve-cache"


def serve_dirs(run_dir: Path) -> list[str]:
    """deploy/serve.py's folder arguments: its own run folder, and the shared static copy."""
    return ["--run-dir", str(run_dir), "--cache-dir", str(STATIC_CACHE)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _can_bind(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def proxy_ports(workers: int, port: int | None = None) -> tuple[int, int]:
    """Free local ports for deploy/serve.py: (the proxy's port, the first worker's port), where the workers take
    `workers` ports in a row from the second. Every one of them is checked free (a worker's port in use by another
    server makes serve.py refuse to start)."""
    port = port or free_port()
    while True:
        first = free_port()
        ports = range(first, first + workers)
        if port not in ports and all(_can_bind(p) for p in ports):
            return port, first


def start_server(
    port: int | None = None, extra_args: tuple[str, ...] = (), stdout: int | None = None, root: Path = ROOT
) -> tuple[subprocess.Popen, str]:
    """Start `streamlit run app.py` of `root` (this tree, or a snapshot) on a free local port; return the process
    and its base URL.

    Its output goes to a temporary file, or with `stdout=subprocess.PIPE` to `proc.stdout`, which the caller
    must then read all along (the benchmarks read each run's time from it)."""
    port = port or free_port()
    # a file unless asked: a pipe nobody reads stops the server (and its children) once it holds 64 kB of log
    log = tempfile.TemporaryFile() if stdout is None else None
    cmd = streamlit_command(root / "app.py", port, extra_args)
    proc = subprocess.Popen(cmd, cwd=root, stdout=stdout if log is None else log, stderr=subprocess.STDOUT)

    def said() -> str:
        if log is not None:
            log.seek(0)
        output = proc.stdout if log is None else log  # None if the caller sent it elsewhere
        return (output.read() if output is not None else b"").decode(errors="replace")

    url = f"http://127.0.0.1:{port}"
    wait_until_healthy(proc, f"{url}/_stcore/health", 60, said)
    return proc, url


def streamlit_command(script: Path, port: int, extra_args: tuple[str, ...] = ()) -> list[str]:
    """`streamlit run <script>` headless on 127.0.0.1:`port`, without usage statistics."""
    return [
        *(sys.executable, "-m", "streamlit", "run", str(script)),
        *("--server.headless", "true", "--server.port", str(port), "--server.address", "127.0.0.1"),
        *("--browser.gatherUsageStats", "false", *extra_args),
    ]


def wait_until_healthy(proc: subprocess.Popen, health_url: str, seconds: float, said, poll: float = 0.1) -> None:
    """Return once `health_url` answers 200. If `proc` exits first, raise RuntimeError with what it `said()`;
    after `seconds`, kill it and raise."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{' '.join(map(str, proc.args[1:5]))} exited early: {said()}")
        try:
            with urllib.request.urlopen(health_url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(poll)
    proc.kill()
    raise RuntimeError(f"{health_url} did not answer within {seconds:.0f} s")


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
    port, worker_port = proxy_ports(args.workers, args.port)
    serve_py = app_dir / "deploy" / "serve.py"
    if not serve_py.exists():
        raise SystemExit(f"--workers: {serve_py} does not exist (a commit from before deploy/ was written?)")
    cmd = [sys.executable, str(serve_py), "--workers", str(args.workers), "--port", str(port)]
    cmd += ["--address", "127.0.0.1", "--worker-port", str(worker_port), *serve_dirs(scratch / f"serve-{port}")]
    cmd += ["--worker-output", "inherit", f"--streamlit-arg=--server.disconnectedSessionTTL={args.ttl}"]
    proc = subprocess.Popen(cmd, cwd=app_dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    # the workers first: nginx would log each refused /healthz while they start
    health = [f"http://127.0.0.1:{worker_port + i}/_stcore/health" for i in range(args.workers)] + [f"{url}/healthz"]
    deadline = time.time() + 120

    def said() -> str:
        return proc.stdout.read().decode(errors="replace")

    for health_url in health:
        wait_until_healthy(proc, health_url, deadline - time.time(), said, poll=0.2)
    args.worker_ports = [worker_port + i for i in range(args.workers)]
    return proc, url
