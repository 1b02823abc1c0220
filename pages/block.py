"""The transformer block: its stages with the shape at every arrow, post- vs pre-norm, and stacks of blocks."""

from ui.shared_state import require_app_entry

require_app_entry()

import numpy as np
import pandas as pd
import streamlit as st

from attention import divisors
from attention.block import POST_NORM_LATEX, PRE_NORM_LATEX
from attention.ffn import FEED_FORWARD_LATEX
from attention.norms import LAYER_NORM_LATEX
from figures.block import block_diagram, residual_norm_figure, shape_text, stack_figure
from figures.heads import heads_grid
from lessons.head_library import MAX_POSITIONS, residual_sources, summarise_head
from ui.charts import chart, show_snippet
from ui.classroom_open_question import answer_hidden, hidden_answer_card
from ui.declared.block import MAX_HEADS, STATE, compute
from ui.number_box import number_box
from ui.page_state import stop
from ui.snippets import block_snippet
from ui.tables import arrow_table

NORM_LABELS = {"post": "post-norm (the original Transformer, BERT)", "pre": "pre-norm (GPT-2)"}
ORIGINAL = "the original Transformer (Vaswani et al. 2017, 'Attention Is All You Need')"


def hidden_width_words(d_ff: int, d_model: int) -> str:
    """The feed-forward hidden layer's width said as it is: wider, as wide, or narrower than d_model."""
    if d_ff > d_model:
        return f"d_ff = {d_ff}, wider than d_model (expanded {d_ff / d_model:g}×)"
    if d_ff == d_model:
        return f"d_ff = {d_ff}, here as wide as d_model (4× wider in the original Transformer)"
    return (
        f"d_ff = {d_ff}, here *narrower* than d_model = {d_model}: a bottleneck (4× wider in the original Transformer)"
    )


def widths_sentence(d_ff: int, d_model: int) -> str:
    """Which steps keep d_model columns, true whether the hidden layer is wider, as wide or narrower."""
    same = "because a residual add needs both of its terms to have the same shape"
    if d_ff == d_model:
        hidden = hidden_width_words(d_ff, d_model)
        return (
            f"Every step keeps d_model columns, {same}; the feed-forward hidden layer too, but only because d_ff was "
            f"chosen equal to d_model here ({hidden}): no residual add constrains it."
        )
    return (
        f"Only the feed-forward hidden layer has another width, {hidden_width_words(d_ff, d_model)}; everything "
        f"else keeps d_model columns, {same}."
    )


def residual_stream_text(runs: dict, d_model: int) -> str:
    """Section 2's reading of the plot, in the numbers drawn: the post-norm lengths, how the pre-norm stream moved."""
    post, pre = runs["post"].residual_norms, runs["pre"].residual_norms  # (N + 1,) each: the input, then each block
    n_blocks = pre.size - 1
    grew = int(np.count_nonzero(np.diff(pre) > 0))
    low, high = f"{post[1:].min():.2f}", f"{post[1:].max():.2f}"
    post_lengths = low if low == high else f"between {low} and {high}"
    return (
        "The same blocks (same weights) applied post-norm and pre-norm; the plot shows the average length of a "
        "position's vector after each block. Post-norm ends every block with a layer norm, which (with γ = 1 and "
        "β = 0, as here) leaves every vector with mean 0 and variance σ²/(σ² + ε), just under 1, so its length is "
        f"just under √d_model = {np.sqrt(d_model):.2f}: here {post_lengths} after every block. Pre-norm only "
        "normalises the copy that enters each sub-layer and *adds* the result to the stream, which nothing "
        f"normalises: here its average length goes from {pre[0]:.2f} at the input to {pre[-1]:.2f} after block "
        f"{n_blocks} (it grew in {grew} of the {n_blocks} block{'s' * (n_blocks != 1)}). GPT-2 (Radford et al. "
        "2019, 'Language Models are Unsupervised Multitask Learners') moved the layer norm to the input of each "
        "sub-block and added a layer norm after the final self-attention block; this page's pre-norm stack has no "
        "such final layer norm, so the plot shows the stream itself."
    )


def stop_with(message: str) -> None:
    st.error(message)
    stop()


STATE.load()
seq = STATE["seq"]
tokens = tuple(seq.tokens)

st.title("The transformer block")
st.markdown(
    "A transformer is the same block repeated. Each block does two things to every position's vector: "
    "**multi-head attention** (positions exchange information) and a **feed-forward network** (each position "
    "is transformed on its own: mapped to a hidden layer of width d_ff, 4 × d_model in " + ORIGINAL + ", passed "
    "through a non-linearity, and mapped back to d_model). Each of the two is wrapped in a **residual add** (its "
    "result is added to its input, so information can skip it) and a **layer norm** (each vector is shifted and "
    "rescaled to mean 0 and variance 1, or just under 1 because of the ε in its formula, then multiplied by a "
    "learned γ and shifted by a learned β; in this page's untrained blocks γ = 1 and β = 0)."
)
STATE.show_warnings()

width_col, heads_col, ff_col, activation_col = st.columns(4)
d_model = number_box(
    width_col,
    "d_model",
    **STATE.widget("d_model"),
    help="Width of each position's vector; a multiple of the number of heads.",
)
n_heads = heads_col.slider(
    "Heads",
    **STATE.widget("n_heads"),
    help="Attention heads per block; each gets d_model / heads columns.",
)
d_ff = number_box(
    ff_col,
    "d_ff",
    **STATE.widget("d_ff"),
    help="Width of the feed-forward hidden layer (1 to 4 × d_model). 4 × d_model in the original Transformer "
    "(Vaswani et al. 2017): the network expands each vector, applies the non-linearity, and contracts it back; "
    "below d_model it squeezes it instead.",
)
STATE.notes(ff_col, ("d_ff",))
activation = activation_col.selectbox(
    "Activation",
    **STATE.widget("activation"),
    help="The feed-forward non-linearity: ReLU max(0, x), as in the original Transformer (Vaswani et al. 2017), or "
    "GELU x·Φ(x), as in GPT (Radford et al. 2018) and BERT (Devlin et al. 2019).",
)
norm_col, blocks_col, seed_col, causal_col = st.columns(4)
norm = norm_col.radio(
    "Where the layer norm goes",
    format_func=NORM_LABELS.get,
    **STATE.widget("norm"),
    help="Post-norm: after each residual add. Pre-norm: on the copy that enters each sub-layer, "
    "leaving the residual stream itself alone.",
)
n_blocks = blocks_col.slider(
    "Blocks in the stack",
    **STATE.widget("n_blocks"),
    help="How many blocks to apply one after another (each with its own random weights).",
)
seed = number_box(
    seed_col,
    "Seed",
    **STATE.widget("seed"),
    help="Seeds the input's word vectors and every block's random weights.",
)
causal = causal_col.toggle(
    "Causal mask",
    **STATE.widget("causal"),
    help="Each position may only attend to itself and earlier positions.",
)

if not 1 <= seq.n <= MAX_POSITIONS:
    stop_with(f"The Playground's sequence has {seq.n} tokens; this page shows 1 to {MAX_POSITIONS}.")
if d_model % n_heads:
    valid = ", ".join(str(h) for h in divisors(d_model) if h <= MAX_HEADS)
    stop_with(
        f"**d_model = {d_model} cannot be split into {n_heads} heads**: {d_model} / {n_heads} is not a whole "
        f"number. For d_model = {d_model}, the valid head counts are {valid}."
    )

runs = compute(tokens, d_model, d_ff, n_heads, n_blocks, seed, causal, activation)
run = runs[norm]
first = run.traces[0]

st.header("1 · One block, stage by stage")
st.latex(POST_NORM_LATEX if norm == "post" else PRE_NORM_LATEX)
left, right = st.columns([3, 2], gap="large")
if answer_hidden("block", "shape"):
    hidden_answer_card(left, "The shape on every arrow of the block (its diagram, its table and its widths)")
else:
    with left:
        chart(
            st,
            block_diagram(
                [(s.name, s.label, s.shape) for s in first.steps],
                residual_sources(first),
                title=f"Block 1, {norm}-norm: the shape of the tensor on every arrow",
            ),
            width="stretch",
            key="block_diagram",
            config={"displayModeBar": False},
        )
    with right:
        st.markdown(
            f"Every shape below is read from the block's own trace. The input X is {seq.n} × {d_model} (one row per "
            f"token of the Playground, built as on the *Multi-head attention* page). {widths_sentence(d_ff, d_model)}"
        )
        st.table(  # wraps its text: the column it stands in is narrow
            pd.DataFrame(
                {
                    "step": [s.name for s in first.steps],
                    "operation": [s.label for s in first.steps],
                    "shape": [shape_text(s.shape) for s in first.steps],
                }
            ).set_index("step"),
        )
with right:
    st.latex(LAYER_NORM_LATEX)
    st.latex(FEED_FORWARD_LATEX)

st.header("2 · Post-norm or pre-norm: the size of the residual stream")
hide_lengths = answer_hidden("block", "length")
if hide_lengths:
    hidden_answer_card(st, "The lengths of the vectors after each block (the reading and its plot)")
else:
    st.markdown(residual_stream_text(runs, d_model))
    chart(
        st,
        residual_norm_figure({name: r.residual_norms for name, r in runs.items()}, d_model, highlight=norm),
        width="stretch",
        key="block_norm_fig",
    )

st.header(f"3 · Blocks stack: {n_blocks} block{'s' if n_blocks > 1 else ''}")
shapes = [tuple(state.shape) for state in run.states]
chart(st, stack_figure(shapes), width="stretch", key="block_stack_fig", config={"displayModeBar": False})
input_metric, output_metric, norm_metric = st.columns(3)
input_metric.metric("input shape", shape_text(shapes[0]))
output_metric.metric(f"output shape after {n_blocks} block{'s' if n_blocks > 1 else ''}", shape_text(shapes[-1]))
if not hide_lengths:
    norm_metric.metric("mean |x| at the output", f"{run.residual_norms[-1]:.2f}")
if shapes[0] == shapes[-1]:
    st.success(
        f"Input {shape_text(shapes[0])} and output {shape_text(shapes[-1])} have the same shape: a block "
        "maps n vectors of width d_model to n vectors of width d_model, so the next block accepts its output "
        "as input, and any number of blocks can be stacked."
    )
else:  # cannot happen with the core's block; said loudly if it ever does
    st.error(f"Input {shape_text(shapes[0])} and output {shape_text(shapes[-1])} differ.")

st.header("4 · The heads inside any block")
inspect = st.selectbox(
    "Block to look inside",
    **STATE.widget("inspect"),
    format_func=lambda b: f"block {b} of {n_blocks}",
    help="Show the per-head attention weights of this block of the stack.",
)
STATE.notes(names=("inspect",))
weights = run.traces[inspect - 1].weights  # (n_heads, n, n)
summaries = [summarise_head(w, causal, tokens) for w in weights]
clean = sum(s.pattern != "mixed" for s in summaries)
st.markdown(
    f"Block {inspect}'s {n_heads} heads ({norm}-norm, random weights, as in an untrained model): the captions find "
    f"a single pattern in {clean} of them. Compare the hand-built ones on the *Multi-head attention* page."
)
chart(
    st,
    heads_grid(weights, tokens, [f"block {inspect}, head {h + 1}\n{s.looks}" for h, s in enumerate(summaries)]),
    width="stretch",
    key="block_heads_fig",
)
st.dataframe(
    arrow_table({"head": range(1, n_heads + 1), "caption": [s.caption for s in summaries]}),
    hide_index=True,
    width="stretch",
    key="block_heads_table",
)

show_snippet(
    block_snippet(
        tokens,
        d_model=d_model,
        d_ff=d_ff,
        n_heads=n_heads,
        n_blocks=n_blocks,
        seed=seed,
        causal=causal,
        activation=activation,
        norm=norm,
    )
)
