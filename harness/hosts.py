"""Several hosts on this machine, as the multi-host test and bench/bench_hosts.py run them: deploy/serve.py on
loopback addresses (127.0.0.2, 127.0.0.3, ...: every 127.x address is this machine's), each with its own nginx and
workers as a host of its own would have, all on one class database, and deploy/front.py's nginx in front."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from harness.servers import ROOT, free_port, proxy_ports, serve_dirs, wait_until_healthy

ADDRESSES = ("127.0.0.2", "127.0.0.3")


def started(cmd: list[str], log: Path, health: str, env: dict[str, str]) -> subprocess.Popen:
    """`cmd` in a process group of its own (a host is stopped whole: its nginx and workers), once `health`
    answers; its output in `log`."""
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    wait_until_healthy(proc, health, 120, lambda: log.read_text()[-3000:], poll=0.2)
    return proc


def stop(proc: subprocess.Popen) -> None:
    """Kill `proc`'s whole process group at once (SIGKILL: a host that loses its power)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=20)


@dataclass
class Hosts:
    front: str  # the front's URL: what the students open
    urls: list[str]  # each host's own URL (its nginx), host i at ADDRESSES[i]
    procs: list[subprocess.Popen]  # each host's deploy/serve.py (its group holds its nginx and workers)
    others: list[subprocess.Popen] = field(default_factory=list)  # the front

    def stop_host(self, i: int) -> None:
        stop(self.procs[i])

    def stop(self) -> None:
        for proc in [*self.others, *self.procs]:
            stop(proc)


def start_hosts(tmp: Path, env: dict[str, str], workers: int = 1) -> Hosts:
    """One deploy/serve.py per address of ADDRESSES with `workers` workers, and the front; `env` (the class
    database's ATTENTION_DB_URL, at least) for every host. Stop them with `Hosts.stop()`."""
    env = {**os.environ, **env}
    hosts = Hosts(front="", urls=[], procs=[])
    try:
        for i, address in enumerate(ADDRESSES):
            port, worker_port = proxy_ports(workers)
            cmd = [sys.executable, str(ROOT / "deploy" / "serve.py"), "--workers", str(workers), "--port", str(port)]
            cmd += ["--address", address, "--worker-port", str(worker_port), "--no-restart"]
            cmd += serve_dirs(tmp / f"host{i}")
            url = f"http://{address}:{port}"
            hosts.procs.append(started(cmd, tmp / f"host{i}.log", f"{url}/healthz", env))
            hosts.urls.append(url)
        port = free_port()
        cmd = [sys.executable, str(ROOT / "deploy" / "front.py"), "--port", str(port), "--address", "127.0.0.1"]
        cmd += [f"--host={url.removeprefix('http://')}" for url in hosts.urls] + ["--run-dir", str(tmp / "front")]
        hosts.front = f"http://127.0.0.1:{port}"
        hosts.others.append(started(cmd, tmp / "front.log", f"{hosts.front}/healthz", env))
    except BaseException:
        hosts.stop()
        raise
    return hosts
