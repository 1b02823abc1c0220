"""The declared state and class questions of pages/heads.py (see ui/declared/__init__.py), with the computation
its questions read their true values from."""

import streamlit as st

from attention import multi_head_steps
from lessons.head_library import (
    MAX_POSITIONS,
    PRESETS,
    buildable_presets,
    embed_tokens,
    head_library_weights,
    summarise_head,
)
from locales import marked, tr_n
from ui.page_questions import ask_from
from ui.page_state import PageState
from ui.questions import heads
from ui.questions.heads import ShownHeads
from ui.shared_state import playground_sequence
from ui.url import Choice, Flag, Int, Slots

MAX_HEADS = 8
SEED_MAX = 9999
DEFAULT_PRESETS = ("previous", "first", "self", "similar", "uniform", "random", "random", "random")
STATE = PageState(
    "heads",
    seq=playground_sequence(),  # the Playground's tokens, which this page reads
    d_model=Int(16, lo=4, hi=64),
    n_heads=Int(4, lo=1, hi=MAX_HEADS),
    seed=Int(0, lo=0, hi=SEED_MAX),
    causal=Flag(False),
    scale=Flag(True),
    presets=Slots(DEFAULT_PRESETS, key="preset", choices=PRESETS, slots=MAX_HEADS, count=lambda v: v["n_heads"]),
    focus=Choice(
        1,
        choices=tuple(range(1, MAX_HEADS + 1)),
        allowed=lambda v: tuple(range(1, v["n_heads"] + 1)),
        label=marked("Head to enlarge"),
        why=lambda v, _: tr_n("the page has {n} head", "the page has {n} heads", v["n_heads"], n=v["n_heads"]),
    ),
)


@st.cache_data(max_entries=64, show_spinner=False)
def compute(
    tokens: tuple[str, ...], d_model: int, n_heads: int, presets: tuple[str, ...], seed: int, causal: bool, scale: bool
):
    """Embeddings, weights, every intermediate of multi-head attention and one summary per head."""
    emb = embed_tokens(tokens, d_model, seed)
    hw = head_library_weights(emb, presets, seed)
    steps = multi_head_steps(emb.x, hw.w_q, hw.w_k, hw.w_v, hw.w_o, n_heads, b_q=hw.b_q, causal=causal, scale=scale)
    summaries = tuple(summarise_head(w, causal, tokens) for w in steps.weights)
    return emb, hw, steps, summaries


def shown_heads(values) -> ShownHeads:
    """The heads the page shows for its declared `values` (a class question's truth is read from them), computed as
    the page computes them; ValueError where the page shows none."""
    seq, d_model, n_heads, seed = values["seq"], values["d_model"], values["n_heads"], values["seed"]
    if not 1 <= seq.n <= MAX_POSITIONS:
        raise ValueError(f"the sequence has {seq.n} tokens; this page shows 1 to {MAX_POSITIONS}")
    if d_model % n_heads:
        raise ValueError(f"d_model = {d_model} cannot be split into {n_heads} heads")
    tokens = tuple(seq.tokens)
    emb = embed_tokens(tokens, d_model, seed)
    presets, _ = buildable_presets(values["presets"][:n_heads], d_model // n_heads, emb)
    _, _, steps, summaries = compute(tokens, d_model, n_heads, presets, seed, values["causal"], values["scale"])
    return ShownHeads(tokens, presets, steps.weights, summaries)


QUESTIONS = ask_from(STATE, "heads", *heads.questions(shown_heads))
