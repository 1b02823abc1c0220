"""The induction page's models on this server: the shipped run, the runs students train here (in the background,
one at a time, with a progress bar), their measurements, and which model the page may truthfully show.

Training happens outside any cached function so that it can drive a progress bar; its result is then stored in
a cache keyed by its config (`stored_run`), as the scaling page does.
"""

from __future__ import annotations

import threading

import streamlit as st

from lessons.induction import Evaluation, InductionConfig, InductionRun, evaluate, load_run, train_induction
from locales import tr
from ui.background import one_at_a_time, queue_message, run_niced
from ui.page_state import PageState
from ui.run_gate import outside_run_gate

TRAIN_REQUEST_KEY = "_induction_train_requested"
TRAINING_KEY = "_induction_training"  # this session's training while it runs: its seed, steps and progress
PROGRESS_EVERY = 25  # steps between two updates of the bar: a message every step would cost more than the step


@st.cache_resource(show_spinner=False)
def shipped_run() -> InductionRun:
    """The model in lessons/data/induction_model.npz, read once per server (read-only)."""
    return load_run()


class NotTrainedYet(Exception):
    """Raised by `stored_run` on a cache miss (exceptions are never cached)."""


@st.cache_data(max_entries=16, show_spinner=False)
def stored_run(config: InductionConfig, _result: InductionRun | None = None) -> InductionRun:
    """A run trained on this server, by config; `_result` stores one."""
    if _result is None:
        raise NotTrainedYet
    return _result


def is_trained(config: InductionConfig) -> bool:
    """Whether a run of `config` was trained on this server (and is still in its cache)."""
    try:
        stored_run(config)
    except NotTrainedYet:
        return False
    return True


@st.cache_resource(show_spinner=False)
def training_lock() -> threading.Lock:
    """One training at a time on this server: a class pressing the button together must not swamp its cores."""
    return threading.Lock()


def train_with_progress(config: InductionConfig) -> InductionRun:
    """The cached run for `config`, or train it now with a progress bar and cache it (after any training that
    another session started first; if that was the same config, its result is used)."""
    try:
        return stored_run(config)
    except NotTrainedYet:
        pass
    bar = st.progress(0.0, text=tr("Training…"))
    # left in the session if this run is stopped (the student left the page or changed a control): the next
    # run says the training was cancelled, and at which step
    progress = st.session_state[TRAINING_KEY] = {"seed": config.seed, "steps": config.steps, "done": 0}

    def on_step(done: int, total: int) -> None:
        progress["done"] = done
        if done % PROGRESS_EVERY == 0 or done == total:
            bar.progress(done / total, text=tr("Training: step {done} of {total}", done=done, total=total))

    def on_queue(place: int, slots: int) -> None:
        bar.progress(0.0, text=queue_message(place, slots))

    def on_wait() -> None:
        bar.progress(0.0, text=tr("Waiting for a training another student started on this server…"))

    # waiting for another session's training must not hold the gate
    with outside_run_gate(), one_at_a_time(training_lock(), on_wait):
        try:
            run = stored_run(config)
        except NotTrainedYet:
            # in a child process at the lowest priority: the class's clicks on this server come first
            run = stored_run(config, _result=run_niced(train_induction, config, on_step, on_queue))
    st.session_state.pop(TRAINING_KEY, None)
    bar.empty()
    return run


def request_training(state: PageState) -> None:
    """The button's callback: show the student's model, and train it in this run."""
    state.set("model", "yours")
    st.session_state[TRAIN_REQUEST_KEY] = True


def training_requested() -> bool:
    """Whether the button asked for a training in this run (asked once: the request is used up)."""
    return st.session_state.pop(TRAIN_REQUEST_KEY, False)


def keep_model_truthful(state: PageState) -> str | None:
    """Before the radio is drawn: a training this session started and never finished is said to be cancelled,
    and 'the one you train' is only selected when that model exists (or is about to be trained). Returns what
    the page says about it, if anything. `state`: the page's, with its `model`, `seed` and `steps`."""
    config = InductionConfig(seed=int(state["seed"]), steps=int(state["steps"]))
    stopped = st.session_state.pop(TRAINING_KEY, None)
    note = None
    if stopped is not None and not is_trained(InductionConfig(seed=stopped["seed"], steps=stopped["steps"])):
        note = tr(
            "Your training (seed {seed}, {steps} steps) was cancelled at step {done}: a training runs only while its "
            "page waits for it, and leaving the page or changing a control stopped it. The shipped model is shown; "
            "press **Train it yourself** to start again.",
            seed=stopped["seed"],
            steps=stopped["steps"],
            done=stopped["done"],
        )
    if state["model"] == "yours" and not st.session_state.get(TRAIN_REQUEST_KEY) and not is_trained(config):
        state.set("model", "shipped")
        note = note or tr(
            "The model for seed {seed} and {steps} steps has not been trained on this server yet: the shipped model "
            "is shown. Press **Train it yourself** to train it.",
            seed=config.seed,
            steps=config.steps,
        )
    return note


def measured(key: tuple, run: InductionRun) -> Evaluation:
    """The model of `run` on 500 fresh sequences of 2 × 10 tokens (`key` names the run for the cache), with a
    spinner in the session's language while it is measured."""
    with st.spinner(tr("Measuring the model on fresh sequences…")):
        return _measured(key, run)


@st.cache_data(max_entries=32, show_spinner=False)
def _measured(key: tuple, _run: InductionRun) -> Evaluation:
    """`measured`, cached: the same for every session (numbers only)."""
    return evaluate(_run.params, half=10, n_sequences=500, seed=12345)
