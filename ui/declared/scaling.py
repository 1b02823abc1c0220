"""The declared state and class questions of pages/scaling.py (see ui/declared/__init__.py), with the measurement
its questions read their true values from."""

import streamlit as st

from lessons.scaling import (
    DEFAULT_KEYS,
    MAX_DRAWS,
    MAX_KEYS,
    SAMPLE_COUNTS,
    SWEEP_D_KS,
    ScalingStats,
    check_sweep,
    sample_counts_within,
    sweep_stats,
)
from lessons.training import MAX_D_K as MAX_TRAIN_D_K
from locales import marked, num, tr
from ui import background
from ui.page_questions import NotShownYet, ask_from
from ui.page_state import PageState
from ui.questions import scaling
from ui.url import Choice, ChoiceList, Int

MAX_SHOWN = 6
TRAIN_D_KS = tuple(d for d in SWEEP_D_KS if d <= MAX_TRAIN_D_K)
LR_OPTIONS = (0.1, 0.3, 1.0, 3.0)
STEPS_MIN, STEPS_MAX, STEPS_STEP = 50, 1000, 50
# keys x samples above which the sweep is measured in a child too: 20,000 draws take about half a second of CPU
# (the default, 8 x 1000, a fifth of that); the largest, 80,000 draws, about 2 s, and a run holds its worker's one
# run slot (ui/run_gate.py), so the class's clicks would queue behind it for that long
SWEEP_IN_PROCESS_DRAWS = 20_000
STATE = PageState(
    "scaling",
    d_ks=ChoiceList([4, 64, 1024], url="dk", choices=SWEEP_D_KS, max_items=MAX_SHOWN, sort_unique=True),
    keys=Int(DEFAULT_KEYS, lo=1, hi=MAX_KEYS),
    samples=Choice(
        1000,
        choices=SAMPLE_COUNTS,
        allowed=lambda v: sample_counts_within(v["keys"]),
        label=marked("Samples per d_k"),
        why=lambda v, asked: tr(
            "with {keys} keys, {asked} samples would be {draws} draws, more than {max_draws}",
            keys=v["keys"],
            asked=num(asked, ","),
            draws=num(asked * v["keys"], ","),
            max_draws=num(MAX_DRAWS, ","),
        ),
    ),
    seed=Int(0, lo=0, hi=9999),
    train_d_k=Choice(256, url="tdk", choices=TRAIN_D_KS),
    lr=Choice(1.0, choices=LR_OPTIONS),
    steps=Int(300, lo=STEPS_MIN, hi=STEPS_MAX),
)


@st.cache_data(max_entries=32, show_spinner="Drawing random vectors and measuring…")
def measure(n_keys: int, n_samples: int, seed: int, _swept: ScalingStats | None = None) -> ScalingStats:
    config = (n_keys, n_samples, seed)
    if n_keys * n_samples <= SWEEP_IN_PROCESS_DRAWS:
        return sweep_stats(config)
    if _swept is None:  # a large sweep is measured by `measured`, outside this function: it shows its queue place
        raise NotTrainedYet
    return _swept


def measured(n_keys: int, n_samples: int, seed: int) -> ScalingStats:
    """measure(), a large sweep in a child at the lowest priority, after its turn in the machine's queue."""
    try:
        return measure(n_keys, n_samples, seed)
    except NotTrainedYet:
        check_sweep(SWEEP_D_KS, n_keys, n_samples, seed)  # a ValueError for the page, not a RuntimeError
    with st.spinner("Drawing random vectors and measuring…"), background.queue_notice() as on_queue:
        swept = background.run_niced(sweep_stats, (n_keys, n_samples, seed), on_queue=on_queue)
    return measure(n_keys, n_samples, seed, _swept=swept)


class NotTrainedYet(Exception):
    """Raised by `stored_comparison` on a cache miss (exceptions are never cached)."""


def shown_stats(values) -> ScalingStats:
    """The measurement the page shows for `values` (a class question's true value is read from it)."""
    try:
        return measure(values["keys"], values["samples"], values["seed"])
    except NotTrainedYet:
        raise NotShownYet("the page is still measuring: ask again once it shows the measurements") from None


QUESTIONS = ask_from(STATE, "scaling", *scaling.questions(shown_stats))
