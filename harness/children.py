"""The one-line JSON conversation with a benchmark child (ours or PyTorch's side of a side-by-side run), shared by
bench/bench_core.py and bench/bench_pretrained.py."""

from __future__ import annotations

import json
import subprocess


def ask(child: subprocess.Popen, command: str) -> dict:
    """Send one command line to a child and return its one-line JSON answer."""
    child.stdin.write(command + "\n")
    child.stdin.flush()
    return read_reply(child)


def read_reply(child: subprocess.Popen) -> dict:
    line = child.stdout.readline()
    if not line:  # the child died; its traceback went to our stderr
        raise RuntimeError(f"benchmark child {child.args[3]} exited with status {child.wait()}")
    return json.loads(line)
