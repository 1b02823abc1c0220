"""ui/background.py: long work in a child process at the lowest priority, its progress relayed."""

from __future__ import annotations

import os

import pytest

from ui.background import NICE, run_niced


def count_to(total: int, on_step=None) -> tuple[int, int]:
    """A stand-in training: reports every step; returns (its process id, its nice value)."""
    for done in range(1, total + 1):
        if on_step is not None:
            on_step(done, total)
    return os.getpid(), os.nice(0)


def cores_of_child(config, on_step=None) -> set[int]:
    return os.sched_getaffinity(0)


def fail(config, on_step=None):
    raise ValueError(f"bad config {config!r}")


def test_the_work_runs_in_a_niced_child_and_reports_its_progress():
    seen = []
    pid, nice = run_niced(count_to, 25, lambda done, total: seen.append((done, total)))
    assert pid != os.getpid() and nice == min(19, os.nice(0) + NICE)
    assert seen == [(10, 25), (20, 25), (25, 25)]  # every 10th step and the last


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2, reason="Linux, 2+ cores")
def test_a_child_of_a_worker_pinned_to_one_core_may_use_every_core():
    """deploy/serve.py pins each worker to one core; its training children take the other cores' idle time."""
    every = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(every)})  # this process plays the pinned worker
    try:
        assert run_niced(cores_of_child, None) == every
    finally:
        os.sched_setaffinity(0, every)


def test_a_failure_in_the_child_is_raised_here():
    with pytest.raises(RuntimeError, match="ValueError: bad config 3"):
        run_niced(fail, 3)


def test_leaving_stops_the_child():
    class Left(Exception):
        pass

    def leave(done, total):
        raise Left  # what Streamlit does to a run the student left (StopException / RerunException)

    with pytest.raises(Left):
        run_niced(count_to, 10**9, leave)  # would run for minutes if the child were not stopped


def test_the_child_does_not_run_the_main_script_again(tmp_path, monkeypatch):
    """Under Streamlit the main module is the app's script; a spawned child re-ran it (the whole app and a
    page, in bare mode) before its work, and blocked there once its warnings filled an unread pipe."""
    import sys
    import types

    marker = tmp_path / "ran"
    script = tmp_path / "app_like.py"
    script.write_text(f"open({str(marker)!r}, 'w').write('the child ran the main script')\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(script)  # as Streamlit's module for a run of app.py: a file, no __spec__
    main.__spec__ = None
    monkeypatch.setitem(sys.modules, "__main__", main)
    pid, _ = run_niced(count_to, 3)
    assert pid != os.getpid()
    assert not marker.exists()


def test_one_at_a_time_says_it_waits_only_while_another_holds_the_lock():
    import threading

    from ui.background import one_at_a_time

    lock, said = threading.Lock(), []
    with one_at_a_time(lock, lambda: said.append("waiting")):
        assert lock.locked()
    assert said == [] and not lock.locked()  # alone: no waiting message

    lock.acquire()  # another student's training holds it
    waiting, ran = threading.Event(), []

    def other() -> None:
        with one_at_a_time(lock, waiting.set):
            ran.append(True)

    thread = threading.Thread(target=other)
    thread.start()
    assert waiting.wait(timeout=30)  # it said it waits ...
    assert ran == []  # ... and does wait
    lock.release()
    thread.join(timeout=30)
    assert ran == [True] and not lock.locked()
