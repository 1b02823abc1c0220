"""deploy/serve.py's choices that need no server: which core each worker is pinned to, and whether nginx's
workers can read the static copy."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from deploy.serve import parse_args, worker_cores


def test_one_worker_per_core_pins_worker_i_to_core_i():
    assert worker_cores(2, "auto", [0, 1]) == [{0}, {1}]
    assert worker_cores(3, "auto", [2, 5, 7]) == [{2}, {5}, {7}]  # a container's CPU set, not 0..K-1


def test_auto_leaves_the_scheduler_free_when_workers_and_cores_differ():
    assert worker_cores(1, "auto", [0, 1]) == [None]  # one worker may use either core
    assert worker_cores(3, "auto", [0, 1]) == [None, None, None]
    assert worker_cores(1, "auto", [0]) == [None]


def test_on_pins_round_robin_and_off_never_pins():
    assert worker_cores(3, "on", [0, 1]) == [{0}, {1}, {0}]
    assert worker_cores(2, "off", [0, 1]) == [None, None]


def test_an_unknown_choice_is_refused():
    with pytest.raises(ValueError, match="pin must be auto, on or off"):
        worker_cores(2, "maybe", [0, 1])
    with pytest.raises(SystemExit):
        parse_args(["--pin", "maybe"])


def test_pinning_is_on_by_default():
    assert parse_args([]).pin == "auto"


def test_a_folder_closed_to_others_is_named_when_root_starts_nginx(monkeypatch):
    from deploy.serve import closed_to_nginx_workers

    with tempfile.TemporaryDirectory(dir="/tmp") as top:  # /tmp: every user can enter it (pytest's folders: not)
        Path(top).chmod(0o755)
        private, static = Path(top) / "private", Path(top) / "private" / "static-1"
        static.mkdir(parents=True)
        private.chmod(0o700)
        monkeypatch.setattr(os, "geteuid", lambda: 0)  # root starts nginx: its workers run as nobody
        assert closed_to_nginx_workers(static) == private
        private.chmod(0o755)
        assert closed_to_nginx_workers(static) is None
        monkeypatch.setattr(os, "geteuid", lambda: 1000)  # anyone else: the workers are that user
        private.chmod(0o700)
        assert closed_to_nginx_workers(static) is None
