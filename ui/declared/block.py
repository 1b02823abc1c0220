"""The declared state and class questions of pages/block.py (see ui/declared/__init__.py), with the computation
its questions read their true values from."""

import streamlit as st

from attention import ACTIVATIONS, NORMS
from lessons.head_library import MAX_POSITIONS, embed_tokens, run_stack, stack_params
from locales import marked, tr, tr_n
from ui.page_questions import ask_from
from ui.page_state import PageState
from ui.questions import block as block_questions
from ui.shared_state import playground_sequence
from ui.url import Choice, Flag, Int

MAX_HEADS, MAX_BLOCKS = 8, 12
D_MODEL_MAX = 64
STATE = PageState(
    "block",
    seq=playground_sequence(),  # the Playground's tokens, which this page reads
    d_model=Int(16, lo=4, hi=D_MODEL_MAX),
    n_heads=Int(4, lo=1, hi=MAX_HEADS),
    d_ff=Int(
        64,
        lo=1,
        hi=lambda v: 4 * v["d_model"],
        label="d_ff",
        why=lambda v, _: tr("at most 4 × d_model = {limit}", limit=4 * v["d_model"]),
    ),
    activation=Choice("relu", url="act", choices=ACTIVATIONS),
    norm=Choice("post", choices=NORMS),
    causal=Flag(False),
    n_blocks=Int(4, url="blocks", lo=1, hi=MAX_BLOCKS),
    seed=Int(0, lo=0, hi=9999),
    inspect=Choice(
        1,
        choices=tuple(range(1, MAX_BLOCKS + 1)),
        allowed=lambda v: tuple(range(1, v["n_blocks"] + 1)),
        label=marked("Block to look inside"),
        why=lambda v, _: tr_n("the stack has {n} block", "the stack has {n} blocks", v["n_blocks"], n=v["n_blocks"]),
    ),
)


@st.cache_data(max_entries=64, show_spinner=False)
def compute(
    tokens: tuple[str, ...],
    d_model: int,
    d_ff: int,
    n_heads: int,
    n_blocks: int,
    seed: int,
    causal: bool,
    activation: str,
):
    """The same stack of seeded random blocks run post-norm and pre-norm: {"post": StackRun, "pre": StackRun}."""
    x = embed_tokens(tokens, d_model, seed).x  # (n, d_model)
    blocks = stack_params(d_model, d_ff, n_blocks, seed)
    return {norm: run_stack(x, blocks, n_heads, causal=causal, activation=activation, norm=norm) for norm in NORMS}


def shown_runs(values) -> tuple[tuple[str, ...], dict]:
    """The tokens and the runs the page shows for `values` (a class question's true value is read from them)."""
    seq = values["seq"]
    if not 1 <= seq.n <= MAX_POSITIONS:
        raise ValueError(f"the Playground's sequence has {seq.n} tokens: the page shows no block")
    d_model, n_heads = values["d_model"], values["n_heads"]
    if d_model % n_heads:
        raise ValueError(f"d_model = {d_model} cannot be split into {n_heads} heads: the page shows no block")
    keys = ("d_model", "d_ff", "n_heads", "n_blocks", "seed", "causal", "activation")
    return tuple(seq.tokens), compute(tuple(seq.tokens), *(values[k] for k in keys))


QUESTIONS = ask_from(STATE, "block", *block_questions.questions(shown_runs))
