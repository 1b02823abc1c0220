"""The load test's view of the processes: the server's process tree, its memory and CPU, the machine's speed, and
the server's output."""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from harness.servers import ROOT
from harness.speed_probe import mean_speed_ms


def _children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        kids.setdefault(ppid, []).append(int(entry))
    return kids


def process_tree(pid: int) -> list[int]:
    """pid and all its descendants."""
    kids = _children_map()
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def rss_kib(pids: list[int]) -> int:
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            pass
    return total


def cpu_seconds(pids: list[int]) -> float:
    """CPU time of the processes, plus that of their children that exited and were waited for
    (Chromium's renderers of closed contexts)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime
        except OSError:
            pass
    return total / tick


def machine_cpu() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot, all cores."""
    with open("/proc/stat") as f:
        values = [int(x) for x in f.readline().split()[1:]]
    tick = os.sysconf("SC_CLK_TCK")
    idle = values[3] + values[4]  # idle, iowait
    return (sum(values[:8]) - idle) / tick, sum(values[:8]) / tick


class MemorySampler(threading.Thread):
    """The server's RSS (process + children) every `interval` s, as (monotonic time, KiB); and its CPU
    seconds and the machine's busy CPU seconds at the same moments, to measure a window of a wave."""

    def __init__(self, pid: int, interval: float = 0.1):
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.samples: list[tuple[float, int]] = []
        self.cpu: list[tuple[float, float, float]] = []  # (monotonic time, server CPU-s, machine busy CPU-s)
        self._stop = threading.Event()
        self._pids = [pid]

    def run(self) -> None:
        last_tree = 0.0
        while not self._stop.is_set():
            now = time.monotonic()
            if now - last_tree > 2.0:  # look for child processes every 2 s
                self._pids, last_tree = process_tree(self.pid), now
            kib = rss_kib(self._pids)
            if kib:
                self.samples.append((now, kib))
            self.cpu.append((now, cpu_seconds(self._pids), machine_cpu()[0]))
            self._stop.wait(self.interval)

    def stop(self) -> None:
        self._stop.set()

    def window(self, start: float, end: float | None = None) -> list[int]:
        end = end if end is not None else time.monotonic()
        return [kib for t, kib in self.samples if start <= t <= end]

    def peak(self, start: float, end: float | None = None) -> int:
        return max(self.window(start, end), default=0)

    def cpu_between(self, start: float, end: float) -> tuple[float, float]:
        """(server, machine) CPU seconds between the samples nearest to start and end."""
        if not self.cpu:
            return 0.0, 0.0
        a = min(self.cpu, key=lambda c: abs(c[0] - start))
        b = min(self.cpu, key=lambda c: abs(c[0] - end))
        return b[1] - a[1], b[2] - a[2]

    def median_last(self, seconds: float) -> int:
        w = self.window(time.monotonic() - seconds)
        return int(statistics.median(w)) if w else 0


class SpeedProbe(threading.Thread):
    """harness/speed_probe.py in a process of its own beside the server: the machine's speed over the run, as
    (monotonic time, ms of the probe's fixed work) samples. Its CPU (2 % of a core) is not the server's."""

    def __init__(self, every: float = 0.5):
        super().__init__(daemon=True)
        self.samples: list[tuple[float, float]] = []
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "harness" / "speed_probe.py"), "--every", str(every)],
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(self) -> None:
        for line in self.proc.stdout:
            t, ms = line.split()
            self.samples.append((float(t), float(ms)))

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=5)

    def mean_ms(self, start: float, end: float) -> float | None:
        return mean_speed_ms(self.samples, start, end)


class ServerOutput(threading.Thread):
    """Drains the server's stdout (a full pipe would block the server) and keeps what matters."""

    def __init__(self, proc: subprocess.Popen, log_path: Path):
        super().__init__(daemon=True)
        self.proc, self.log_path = proc, log_path
        self.run_ms: list[tuple[float, float]] = []  # (monotonic time, script run ms) from ATTENTION_LOG_RUN_MS
        self.problems: list[str] = []
        self.proxy_notes: list[str] = []  # nginx's upstream errors (expected when a worker is killed)

    def run(self) -> None:
        with open(self.log_path, "w") as log:
            for raw in iter(self.proc.stdout.readline, b""):
                line = raw.decode(errors="replace").rstrip()
                log.write(line + "\n")
                log.flush()
                m = re.match(r"run_ms=([0-9.]+)$", line)
                if m:
                    self.run_ms.append((time.monotonic(), float(m.group(1))))
                elif re.match(r"\d{4}/\d\d/\d\d \d\d:\d\d:\d\d \[(error|warn)\]", line) and "upstream" in line:
                    self.proxy_notes.append(line[:300])
                elif re.search(r"Traceback|Exception|Error", line):
                    self.problems.append(line[:300])


def worker_pid(root_pid: int, port: int) -> int | None:
    for pid in process_tree(root_pid):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"streamlit" in cmdline and str(port).encode() in cmdline:
            return pid
    return None


def browser_pids(exclude: set[int]) -> list[int]:
    """Chromium processes started under this Python process (through Playwright's driver)."""
    return [p for p in process_tree(os.getpid()) if p != os.getpid() and p not in exclude]
