"""The declared state and class questions of pages/generation.py (see ui/declared/__init__.py), with the model and
the generation its questions read their true values from."""

import numpy as np
import streamlit as st

from attention.decoder import MAX_LAYERS
from lessons.generation import DTYPE_BYTES, GenerationReport, generation_report
from lessons.induction import check_input_fits, letters_to_ids, load_induction_model
from locales import marked, tr, tr_n
from ui.page_questions import ask_from
from ui.page_state import PageState
from ui.questions import generation as generation_questions
from ui.url import Choice, Int, Text

MAX_PROMPT_CHARS = 100
MAX_NEW = 24
TEMPERATURES = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0)
HEAD_CHOICES = (8, 16, 32, 64)
GQA_CHOICES = (2, 4, 8)
D_HEAD_CHOICES = (32, 64, 128)
CONTEXT_CHOICES = (512, 1024, 2048, 4096, 8192, 32768, 131072)
REPEATS = 3  # each timing is the best of this many runs


def step_why(values, asked) -> str:
    """Why the inspected step is lowered below `asked`: there are only the steps generated."""
    n_new = values["n_new"]
    return tr_n("only {n} token is generated", "only {n} tokens are generated", n_new, n=n_new)


STATE = PageState(
    "gen",
    prompt=Text("a b c d e f a b", max_chars=MAX_PROMPT_CHARS),
    n_new=Int(10, lo=1, hi=MAX_NEW),
    temperature=Choice(0.0, choices=TEMPERATURES),
    top_k=Int(0, lo=0, hi=26),
    seed=Int(0, lo=0, hi=9999),
    # Translators: "Step" is a noun here: the generation step inspected
    step=Int(1, lo=1, hi=lambda values: values["n_new"], label=marked("Step"), why=step_why),
    layers=Int(32, lo=1, hi=MAX_LAYERS),  # the core's limit (DecoderConfig), so every value the box takes runs
    heads=Choice(32, choices=HEAD_CHOICES),
    kv=Choice(
        8,
        choices=GQA_CHOICES,
        allowed=lambda values: tuple(k for k in GQA_CHOICES if values["heads"] % k == 0),  # the core's rule
        label=marked("GQA kv heads"),
        why=lambda values, asked: tr(
            "{asked} does not divide the {heads} query heads", asked=asked, heads=values["heads"]
        ),
    ),
    d_head=Choice(128, choices=D_HEAD_CHOICES),
    context=Choice(4096, choices=CONTEXT_CHOICES),
    dtype=Choice("float16", choices=tuple(DTYPE_BYTES)),
)


@st.cache_resource(show_spinner=False)
def model():
    """The shipped induction model (read-only, shared by every session)."""
    return load_induction_model()


@st.cache_data(max_entries=64, show_spinner="Generating, with and without the cache…")
def report(prompt: tuple[int, ...], n_new: int, temperature: float, top_k: int | None, seed: int) -> GenerationReport:
    return generation_report(
        model(), np.array(prompt), n_new, temperature=temperature, top_k=top_k, seed=seed, repeats=REPEATS
    )


def shown_report(values) -> GenerationReport:
    """The generation the page shows for `values` (a class question's true value is read from it): from the
    page's cache, or run again (a few tens of ms: the model is tiny)."""
    prompt = letters_to_ids(values["prompt"])
    check_input_fits(prompt.size, values["n_new"], model().config)  # the ValueError the page shows as an error
    top_k = int(values["top_k"]) or None
    return report(
        tuple(int(t) for t in prompt), int(values["n_new"]), float(values["temperature"]), top_k, int(values["seed"])
    )


QUESTIONS = ask_from(STATE, "generation", *generation_questions.questions(shown_report, model))
