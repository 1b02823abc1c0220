"""Serve the app to a class: nginx in front of K Streamlit workers, supervised. Started by deploy/serve.sh.

    python deploy/serve.py [--workers K] [--port P] [--address A] [--run-dir DIR] [--no-restart] [--pin auto|on|off]

- K workers (`streamlit run app.py`, default one per core) listen on 127.0.0.1 only, on the ports after P
  (P+1 ... P+K, unless --worker-port says otherwise); they share one cookie secret, made for this run. With one
  worker per core (the default), worker i is pinned to core i (`--pin`).
- nginx (deploy/nginx.conf.template, filled in here) listens on A:P and proxies to them: a cookie keeps a
  browser on one worker, and moves it to a live one when its worker is down. Streamlit's static bundles are
  served by nginx from a copy compressed ahead of time (made once per Streamlit version, under the run dir's
  parent: `static-<version>`).
- nginx starts once every worker answers, and "serving" is said once a request through nginx succeeds: a
  request to a worker that is not up yet would fail and mark it down for nginx's fail_timeout.
- The supervisor restarts a worker whose process ended or whose /_stcore/health stopped answering, and stops
  everything when it receives SIGINT (Ctrl-C) or SIGTERM. The children also die with it if it is killed
  outright (Linux's parent-death signal), so no process is left behind.
"""

from __future__ import annotations

import argparse
import ctypes
import gzip
import os
import re
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = Path(__file__).with_name("nginx.conf.template")
COMPRESSED = (".js", ".css", ".json", ".svg", ".map", ".txt", ".html", ".ttf")
HEALTH_EVERY_S = 2.0
HEALTH_FAILURES_BEFORE_RESTART = 5  # a worker that answers no health check for ~25 s is stuck: restarted
STOP_GRACE_S = 8.0


def log(msg: str) -> None:
    print(f"[serve {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def _die_with_parent() -> None:
    """In a child, before exec: SIGTERM it when the supervisor dies (even by SIGKILL); Linux only."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def usable_cores() -> list[int]:
    """The cores this process may run on (a container's CPU set, not the machine's count)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return list(range(os.cpu_count() or 1))


def worker_cores(workers: int, pin: str, cores: list[int]) -> list[set[int] | None]:
    """The cores each worker may run on (None: any). `pin` "auto" pins worker i to core i when there is one
    worker per core, the default (each interpreter lock then keeps its own core's caches, and the two never
    trade places); "on" pins them round-robin whatever their number; "off" leaves the scheduler free."""
    if pin not in ("auto", "on", "off"):
        raise ValueError(f"pin must be auto, on or off, not {pin!r}")
    if pin == "off" or not cores or (pin == "auto" and (workers != len(cores) or workers < 2)):
        return [None] * workers
    return [{cores[i % len(cores)]} for i in range(workers)]


# ---------------------------------------------------------------- the configuration


def static_dir() -> Path:
    import streamlit

    return Path(streamlit.__file__).parent / "static"


def compressed_static(cache_root: Path) -> Path:
    """A copy of Streamlit's static/ with a .gz beside every text file (nginx's gzip_static serves those);
    made once per Streamlit version. Returns the directory to use as nginx's root for /static/."""
    import streamlit

    target = cache_root / f"static-{streamlit.__version__}"
    if (target / ".complete").exists():
        return target
    log(f"compressing Streamlit's static files once (gzip -9) into {target} ...")
    t0 = time.time()
    partial = target.with_name(target.name + f".partial-{os.getpid()}")
    shutil.copytree(static_dir(), partial)
    raw = packed = 0
    for path in partial.rglob("*"):
        if path.is_file() and path.suffix in COMPRESSED:
            data = path.read_bytes()
            gz = gzip.compress(data, compresslevel=9, mtime=0)
            if len(gz) < len(data):
                path.with_name(path.name + ".gz").write_bytes(gz)
                raw, packed = raw + len(data), packed + len(gz)
    (partial / ".complete").write_text(streamlit.__version__)
    if target.exists():  # another serve.py finished first
        shutil.rmtree(partial)
    else:
        partial.rename(target)
    log(f"  {raw / 1e6:.1f} MB of text -> {packed / 1e6:.1f} MB compressed in {time.time() - t0:.0f} s")
    return target


def closed_to_nginx_workers(path: Path) -> Path | None:
    """The first folder on the way to `path` that nginx's worker processes cannot enter, or None.

    Started by root, nginx runs its workers as the unprivileged user `nobody` (its default `user`), who
    enters a folder only through its "others" execute bit; started by anyone else, the workers are that
    user. A folder they cannot enter makes every /static/ request fail in nginx ("stat() ... Permission
    denied") and fall back to the Streamlit workers, uncompressed and uncached.
    """
    if os.geteuid() != 0:
        return None
    for folder in (*reversed(path.parents), path):
        if not folder.stat().st_mode & stat.S_IXOTH:
            return folder
    return None


def upstreams(ports: list[int]) -> str:
    """The upstream groups and cookie maps for the workers: `attn_any` (new browsers: the worker with the
    fewest open connections through it, i.e. a new session's websocket goes to the worker with the fewest
    live sessions), and per worker i `attn_w<i>` (that worker, the others as backups)."""
    server = "        server 127.0.0.1:{port} max_fails=1 fail_timeout=5s{backup};"
    lines = ["    upstream attn_any {", "        least_conn;"]
    lines += [server.format(port=p, backup="") for p in ports] + ["    }"]
    for i, port in enumerate(ports):
        lines.append(f"    upstream attn_w{i} {{")
        lines.append(server.format(port=port, backup=""))
        lines += [server.format(port=p, backup=" backup") for p in ports if p != port]
        lines.append("    }")
    lines.append("    # the browser's worker, from its cookie; no cookie (or a stale one): any worker")
    lines.append("    map $cookie_attn_worker $attn_pool {")
    lines += [f'        "{i}" attn_w{i};' for i in range(len(ports))]
    lines += ["        default attn_any;", "    }"]
    lines.append("    # the worker that answered (the last one tried), to put in the cookie")
    lines.append("    map $upstream_addr $attn_served {")
    lines += [f'        "~(^|, )127\\.0\\.0\\.1:{p}$" {i};' for i, p in enumerate(ports)]
    lines += ['        default "";', "    }"]
    return "\n".join(lines)


def render_config(run_dir: Path, listen: str, ports: list[int], static_root: Path) -> Path:
    text = TEMPLATE.read_text()
    for name, value in {
        "RUN_DIR": str(run_dir),
        "LISTEN": listen,
        "STATIC_ROOT": str(static_root),
        "UPSTREAMS": upstreams(ports),
    }.items():
        text = text.replace(f"@@{name}@@", value)
    left = re.findall(r"@@[A-Z_]+@@", text)
    if left:
        raise ValueError(f"nginx.conf.template: fields left unfilled: {left}")
    for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (run_dir / "tmp" / sub).mkdir(parents=True, exist_ok=True)
    conf = run_dir / "nginx.conf"
    conf.write_text(text)
    return conf


# ---------------------------------------------------------------- the processes


@dataclass
class Worker:
    index: int
    port: int
    env: dict
    log_path: Path | None  # None: the worker writes to the supervisor's own output
    extra_args: list[str] = field(default_factory=list)
    cores: set[int] | None = None  # pinned to these cores (worker_cores), or None: any
    proc: subprocess.Popen | None = None
    failures: int = 0
    restarts: int = 0

    def start(self) -> None:
        cmd = [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(ROOT / "app.py"),
            "--server.address",
            "127.0.0.1",  # loopback only: the class reaches the workers through nginx
            "--server.port",
            str(self.port),
            "--server.headless",
            "true",
            *self.extra_args,
        ]
        out = open(self.log_path, "ab") if self.log_path else None
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT, preexec_fn=self._before_exec
        )
        if out:
            out.close()
        self.failures = 0

    def _before_exec(self) -> None:
        _die_with_parent()
        if self.cores:
            os.sched_setaffinity(0, self.cores)

    def healthy(self, timeout: float = 3.0) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_stcore/health", timeout=timeout) as r:
                return r.status == 200
        except OSError:
            return False


def port_free(port: int) -> bool:
    import socket

    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers do: TIME_WAIT is no obstacle
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def stop_process(proc: subprocess.Popen | None, sig: int = signal.SIGTERM) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(sig)


def wait_all(procs: list[subprocess.Popen], grace: float) -> None:
    deadline = time.time() + grace
    for p in procs:
        try:
            p.wait(timeout=max(0.1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


class Supervisor:
    def __init__(self, args) -> None:
        self.args = args
        self.stopping = threading.Event()
        self.nginx: subprocess.Popen | None = None
        self.workers: list[Worker] = []

    def run(self) -> int:
        args = self.args
        run_dir = Path(args.run_dir).resolve()
        run_dir.mkdir(parents=True, exist_ok=True)
        ports = [args.worker_port + i for i in range(args.workers)]
        busy = [p for p in [args.port, *ports] if not port_free(p)]
        if busy:
            log(f"port(s) {busy} already in use on 127.0.0.1; choose others with --port / --worker-port")
            return 2
        static_root = compressed_static(Path(args.cache_dir).resolve())
        closed = closed_to_nginx_workers(static_root)
        if closed is not None:
            log(
                f"nginx is started by root here, so its workers run as 'nobody', who cannot enter {closed}: "
                f"the static files in {static_root} would never be served by nginx. Choose a --cache-dir "
                "that every user can enter, e.g. --cache-dir /tmp/attention-serve-cache"
            )
            return 2
        conf = render_config(run_dir, f"{args.address}:{args.port}", ports, static_root)
        check = subprocess.run(["nginx", "-t", "-q", "-p", str(run_dir), "-c", str(conf)], capture_output=True)
        if check.returncode != 0:
            log(f"nginx rejected the configuration {conf}:\n{check.stderr.decode(errors='replace')}")
            return 2
        env = {**os.environ, "STREAMLIT_SERVER_COOKIE_SECRET": secrets.token_hex(32)}  # the same for all
        cores = worker_cores(len(ports), args.pin, usable_cores())
        self.workers = [
            Worker(
                i,
                port,
                {**env, "ATTENTION_WORKER": str(i)},
                None if args.worker_output == "inherit" else run_dir / f"worker{i}.log",
                args.streamlit_arg,
                cores[i],
            )
            for i, port in enumerate(ports)
        ]
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, lambda *_: self.stopping.set())
        try:
            for w in self.workers:
                w.start()
            log(f"{len(ports)} worker(s) starting on 127.0.0.1:{ports[0]}..{ports[-1]} (logs in {run_dir})")
            if any(cores):
                log("  pinned: " + ", ".join(f"worker {w.index} to core(s) {sorted(w.cores)}" for w in self.workers))
            # nginx starts once the workers answer: a request through it before then would fail ("connect()
            # failed" in its log) and mark the worker down for fail_timeout (5 s) after it came up.
            self._wait_ready()
            if self.stopping.is_set():
                return 0
            self.nginx = subprocess.Popen(
                ["nginx", "-p", str(run_dir), "-c", str(conf)], preexec_fn=_die_with_parent, stdin=subprocess.DEVNULL
            )
            if self._proxy_answers(args.address, args.port):
                host = "localhost" if args.address in ("0.0.0.0", "127.0.0.1", "::") else args.address
                log(f"serving http://{host}:{args.port}  ({len(ports)} workers; Ctrl-C stops everything)")
            self._supervise()
        finally:
            self._stop_all()
        return 0

    def _wait_ready(self, timeout: float = 120.0) -> None:
        deadline = time.time() + timeout
        pending = list(self.workers)
        while pending and time.time() < deadline and not self.stopping.is_set():
            pending = [w for w in pending if not w.healthy(timeout=0.5)]
            if pending:
                self.stopping.wait(0.2)
        if pending:
            log(f"worker(s) {[w.index for w in pending]} not healthy after {timeout:.0f} s; see their logs")

    def _proxy_answers(self, address: str, port: int, timeout: float = 30.0) -> bool:
        """Wait until nginx answers /healthz with a worker's 200 (the class's first request would succeed)."""
        host = {"0.0.0.0": "127.0.0.1", "::": "[::1]"}.get(address, address)
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        deadline = time.time() + timeout
        while time.time() < deadline and not self.stopping.is_set() and self.nginx.poll() is None:
            try:
                with urllib.request.urlopen(f"http://{host}:{port}/healthz", timeout=2) as r:
                    if r.status == 200:
                        return True
            except OSError:
                pass
            self.stopping.wait(0.1)
        if not self.stopping.is_set():
            log(f"nginx does not answer http://{host}:{port}/healthz after {timeout:.0f} s; see the messages above")
        return False

    def _supervise(self) -> None:
        while not self.stopping.wait(HEALTH_EVERY_S if self._all_alive() else 0.2):
            if self.nginx.poll() is not None:
                log(f"nginx exited with code {self.nginx.returncode}; stopping")
                return
            for w in self.workers:
                if w.proc.poll() is not None:
                    self._restart(w, f"its process ended (code {w.proc.returncode})")
                elif not w.healthy():
                    w.failures += 1
                    if w.failures >= HEALTH_FAILURES_BEFORE_RESTART:
                        w.proc.kill()
                        w.proc.wait()
                        self._restart(w, f"{w.failures} health checks in a row got no answer")
                else:
                    w.failures = 0

    def _all_alive(self) -> bool:
        return all(w.proc.poll() is None for w in self.workers)

    def _restart(self, w: Worker, why: str) -> None:
        if self.args.no_restart:
            return
        w.restarts += 1
        log(f"worker {w.index} (port {w.port}): {why}; restarting it (restart #{w.restarts})")
        w.start()

    def _stop_all(self) -> None:
        log("stopping nginx and the workers ...")
        procs = [p for p in [self.nginx, *(w.proc for w in self.workers)] if p is not None]
        stop_process(self.nginx, signal.SIGQUIT)  # nginx: finish the requests in flight, then exit
        for w in self.workers:
            stop_process(w.proc)
        wait_all(procs, STOP_GRACE_S)
        log("stopped; no process left behind")


def parse_args(argv: list[str] | None = None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="Streamlit processes (default: one per core)"
    )
    parser.add_argument("--port", type=int, default=8501, help="the port the class connects to (nginx)")
    parser.add_argument("--address", default="0.0.0.0", help="where nginx listens (default: every interface)")
    parser.add_argument("--worker-port", type=int, default=None, help="first worker's port (default: port + 1)")
    parser.add_argument("--run-dir", default=None, help="config, logs, pid (default: /tmp/attention-serve-<port>)")
    parser.add_argument("--cache-dir", default=None, help="where the compressed static copy is kept")
    parser.add_argument(
        "--worker-output",
        choices=("file", "inherit"),
        default="file",
        help="workers' output: into worker<i>.log in the run dir (default), or into this program's own output",
    )
    parser.add_argument("--no-restart", action="store_true", help="do not restart a worker that died")
    parser.add_argument(
        "--pin",
        choices=("auto", "on", "off"),
        default="auto",
        help="pin worker i to core i: auto (default) when there is one worker per core, on, or off",
    )
    parser.add_argument(
        "--streamlit-arg", action="append", default=[], help="one more argument for every worker (repeatable)"
    )
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    args.worker_port = args.worker_port or args.port + 1
    args.run_dir = args.run_dir or f"/tmp/attention-serve-{args.port}"
    args.cache_dir = args.cache_dir or str(Path(args.run_dir).parent / "attention-serve-cache")
    return args


def main(argv: list[str] | None = None) -> int:
    if shutil.which("nginx") is None:
        log("nginx is not installed: `apt-get install nginx` (Debian/Ubuntu) or your system's package")
        return 2
    return Supervisor(parse_args(argv)).run()


if __name__ == "__main__":
    sys.exit(main())
