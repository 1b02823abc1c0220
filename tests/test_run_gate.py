"""ui/run_gate.py: pages' scripts take turns for the process's run slots, and give theirs up while they wait."""

from __future__ import annotations

import threading
import time

from test_background import count_to

from ui.background import run_niced
from ui.run_gate import RUN_SLOTS, outside_run_gate, run_gate


def _most_at_once(n_threads: int, body) -> int:
    """Run `body` inside run_gate in n threads at once; the most that were inside together."""
    inside, most, lock = [0], [0], threading.Lock()

    def worker():
        with run_gate():
            with lock:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            body()
            with lock:
                inside[0] -= 1

    threads = [threading.Thread(target=worker) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads)
    return most[0]


def test_no_more_runs_than_slots_at_once():
    assert RUN_SLOTS == 1  # the default (ATTENTION_CONCURRENT_RUNS unset)
    assert _most_at_once(6, lambda: time.sleep(0.02)) == RUN_SLOTS


def test_a_run_waiting_outside_the_gate_lets_the_others_in():
    # every thread waits 0.3 s outside the gate: all six are inside run_gate's block together
    def wait():
        with outside_run_gate():
            time.sleep(0.3)

    assert _most_at_once(6, wait) == 6


def test_waiting_for_a_training_child_lets_another_session_run():
    finished_while_training = threading.Event()
    training = threading.Event()

    def train():
        with run_gate():
            training.set()
            run_niced(count_to, 3_000_000)  # a child process counting for a second or more

    def other_session():
        training.wait(timeout=30)
        time.sleep(0.2)  # the child has started and the trainer waits for it
        with run_gate():
            finished_while_training.set()

    trainer, other = threading.Thread(target=train), threading.Thread(target=other_session)
    trainer.start()
    other.start()
    other.join(timeout=30)
    assert finished_while_training.is_set() and trainer.is_alive()  # the other run went first
    trainer.join(timeout=120)


def test_outside_the_gate_is_a_no_op_without_it():
    with outside_run_gate():
        pass
    with run_gate():  # the slot was not released twice: it can still be taken and given back
        with outside_run_gate():
            pass
    assert _most_at_once(3, lambda: None) == 1
