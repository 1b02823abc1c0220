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
from locales import marked, num, tr, tr_n
from ui.charts import chart, show_snippet
from ui.classroom_open_question import answer_hidden, hidden_answer_card
from ui.declared.block import MAX_HEADS, STATE, compute
from ui.number_box import number_box
from ui.page_state import stop
from ui.snippets import block_snippet
from ui.tables import arrow_table

NORM_LABELS = {"post": marked("post-norm (the original Transformer, BERT)"), "pre": marked("pre-norm (GPT-2)")}
# The core's names of the block's steps (attention/block.py: TraceStep.label), each marked here to be shown translated
STEP_LABELS = (
    # Translators: the input of a transformer block (x is its name in the formulas)
    marked("input x"),
    marked("multi-head attention"),
    marked("residual add x + attention"),
    marked("layer norm 1"),
    marked("residual add y + feed-forward"),
    marked("layer norm 2"),
    marked("feed-forward hidden layer (relu)"),
    marked("feed-forward hidden layer (gelu)"),
    marked("feed-forward output"),
)


def step_label(label: str) -> str:
    """A block step's label from the core, in the session's language where it is one of STEP_LABELS."""
    return tr(label) if label in STEP_LABELS else label


def hidden_width_words(d_ff: int, d_model: int) -> str:
    """The feed-forward hidden layer's width said as it is: wider, as wide, or narrower than d_model."""
    if d_ff > d_model:
        return tr("d_ff = {d_ff}, wider than d_model (expanded {factor}×)", d_ff=d_ff, factor=num(d_ff / d_model, "g"))
    if d_ff == d_model:
        return tr("d_ff = {d_ff}, here as wide as d_model (4× wider in the original Transformer)", d_ff=d_ff)
    return tr(
        "d_ff = {d_ff}, here *narrower* than d_model = {d_model}: a bottleneck (4× wider in the original Transformer)",
        d_ff=d_ff,
        d_model=d_model,
    )


def widths_sentence(d_ff: int, d_model: int) -> str:
    """Which steps keep d_model columns, true whether the hidden layer is wider, as wide or narrower."""
    hidden = hidden_width_words(d_ff, d_model)
    if d_ff == d_model:
        return tr(
            "Every step keeps d_model columns, because a residual add needs both of its terms to have the same "
            "shape; the feed-forward hidden layer too, but only because d_ff was chosen equal to d_model here "
            "({hidden}): no residual add constrains it.",
            hidden=hidden,
        )
    return tr(
        "Only the feed-forward hidden layer has another width, {hidden}; everything else keeps d_model columns, "
        "because a residual add needs both of its terms to have the same shape.",
        hidden=hidden,
    )


def residual_stream_text(runs: dict, d_model: int) -> str:
    """Section 2's reading of the plot, in the numbers drawn: the post-norm lengths, how the pre-norm stream moved."""
    post, pre = runs["post"].residual_norms, runs["pre"].residual_norms  # (N + 1,) each: the input, then each block
    n_blocks = pre.size - 1
    grew = int(np.count_nonzero(np.diff(pre) > 0))
    low, high = post[1:].min(), post[1:].max()
    root = num(np.sqrt(d_model), ".2f")
    if f"{low:.2f}" == f"{high:.2f}":
        post_norm = tr(
            "Post-norm ends every block with a layer norm, which (with γ = 1 and β = 0, as here) leaves every vector "
            "with mean 0 and variance σ²/(σ² + ε), just under 1, so its length is just under √d_model = {root}: here "
            "{length} after every block.",
            root=root,
            length=num(low, ".2f"),
        )
    else:
        post_norm = tr(
            "Post-norm ends every block with a layer norm, which (with γ = 1 and β = 0, as here) leaves every vector "
            "with mean 0 and variance σ²/(σ² + ε), just under 1, so its length is just under √d_model = {root}: here "
            "between {low} and {high} after every block.",
            root=root,
            low=num(low, ".2f"),
            high=num(high, ".2f"),
        )
    pre_norm = tr_n(
        "Pre-norm only normalises the copy that enters each sub-layer and *adds* the result to the stream, which "
        "nothing normalises: here its average length goes from {start} at the input to {end} after block {n} (it "
        "grew in {grew} of the {n} block).",
        "Pre-norm only normalises the copy that enters each sub-layer and *adds* the result to the stream, which "
        "nothing normalises: here its average length goes from {start} at the input to {end} after block {n} (it "
        "grew in {grew} of the {n} blocks).",
        n_blocks,
        start=num(pre[0], ".2f"),
        end=num(pre[-1], ".2f"),
        n=n_blocks,
        grew=grew,
    )
    return tr(
        "The same blocks (same weights) applied post-norm and pre-norm; the plot shows the average length of a "
        "position's vector after each block. {post_norm} {pre_norm} GPT-2 (Radford et al. 2019, 'Language Models are "
        "Unsupervised Multitask Learners') moved the layer norm to the input of each sub-block and added a layer norm "
        "after the final self-attention block; this page's pre-norm stack has no such final layer norm, so the plot "
        "shows the stream itself.",
        post_norm=post_norm,
        pre_norm=pre_norm,
    )


def stop_with(message: str) -> None:
    st.error(message)
    stop()


STATE.load()
seq = STATE["seq"]
tokens = tuple(seq.tokens)

st.title(tr("The transformer block"))
st.markdown(
    tr(
        "A transformer is the same block repeated. Each block does two things to every position's vector: "
        "**multi-head attention** (positions exchange information) and a **feed-forward network** (each position "
        "is transformed on its own: mapped to a hidden layer of width d_ff, 4 × d_model in the original Transformer "
        "(Vaswani et al. 2017, 'Attention Is All You Need'), passed through a non-linearity, and mapped back to "
        "d_model). Each of the two is wrapped in a **residual add** (its result is added to its input, so "
        "information can skip it) and a **layer norm** (each vector is shifted and rescaled to mean 0 and variance "
        "1, or just under 1 because of the ε in its formula, then multiplied by a learned γ and shifted by a "
        "learned β; in this page's untrained blocks γ = 1 and β = 0)."
    )
)
STATE.show_warnings()

width_col, heads_col, ff_col, activation_col = st.columns(4)
d_model = number_box(
    width_col,
    "d_model",
    **STATE.widget("d_model"),
    help=tr("Width of each position's vector; a multiple of the number of heads."),
)
n_heads = heads_col.slider(
    # Translators: a slider's label: how many attention heads each block has
    tr("Heads"),
    **STATE.widget("n_heads"),
    help=tr("Attention heads per block; each gets d_model / heads columns."),
)
d_ff = number_box(
    ff_col,
    "d_ff",
    **STATE.widget("d_ff"),
    help=tr(
        "Width of the feed-forward hidden layer (1 to 4 × d_model). 4 × d_model in the original Transformer "
        "(Vaswani et al. 2017): the network expands each vector, applies the non-linearity, and contracts it back; "
        "below d_model it squeezes it instead."
    ),
)
STATE.notes(ff_col, ("d_ff",))
activation = activation_col.selectbox(
    tr("Activation"),
    **STATE.widget("activation"),
    help=tr(
        "The feed-forward non-linearity: ReLU max(0, x), as in the original Transformer (Vaswani et al. 2017), or "
        "GELU x·Φ(x), as in GPT (Radford et al. 2018) and BERT (Devlin et al. 2019)."
    ),
)
norm_col, blocks_col, seed_col, causal_col = st.columns(4)
norm = norm_col.radio(
    tr("Where the layer norm goes"),
    format_func=lambda v: tr(NORM_LABELS[v]),
    **STATE.widget("norm"),
    help=tr(
        "Post-norm: after each residual add. Pre-norm: on the copy that enters each sub-layer, "
        "leaving the residual stream itself alone."
    ),
)
n_blocks = blocks_col.slider(
    tr("Blocks in the stack"),
    **STATE.widget("n_blocks"),
    help=tr("How many blocks to apply one after another (each with its own random weights)."),
)
seed = number_box(
    seed_col,
    tr("Seed"),
    **STATE.widget("seed"),
    help=tr("Seeds the input's word vectors and every block's random weights."),
)
causal = causal_col.toggle(
    tr("Causal mask"),
    **STATE.widget("causal"),
    help=tr("Each position may only attend to itself and earlier positions."),
)

if not 1 <= seq.n <= MAX_POSITIONS:
    stop_with(tr("The Playground's sequence has {n} tokens; this page shows 1 to {most}.", n=seq.n, most=MAX_POSITIONS))
if d_model % n_heads:
    valid = ", ".join(str(h) for h in divisors(d_model) if h <= MAX_HEADS)
    stop_with(
        tr(
            "**d_model = {d_model} cannot be split into {n_heads} heads**: {d_model} / {n_heads} is not a whole "
            "number. For d_model = {d_model}, the valid head counts are {valid}.",
            d_model=d_model,
            n_heads=n_heads,
            valid=valid,
        )
    )

runs = compute(tokens, d_model, d_ff, n_heads, n_blocks, seed, causal, activation)
run = runs[norm]
first = run.traces[0]

st.header(tr("1 · One block, stage by stage"))
st.latex(POST_NORM_LATEX if norm == "post" else PRE_NORM_LATEX)
left, right = st.columns([3, 2], gap="large")
if answer_hidden("block", "shape"):
    hidden_answer_card(left, tr("The shape on every arrow of the block (its diagram, its table and its widths)"))
else:
    with left:
        chart(
            st,
            block_diagram(
                [(s.name, step_label(s.label), s.shape) for s in first.steps],
                residual_sources(first),
                title=tr("Block 1, post-norm: the shape of the tensor on every arrow")
                if norm == "post"
                else tr("Block 1, pre-norm: the shape of the tensor on every arrow"),
            ),
            width="stretch",
            key="block_diagram",
            config={"displayModeBar": False},
        )
    with right:
        st.markdown(
            tr(
                "Every shape below is read from the block's own trace. The input X is {n} × {d_model} (one row per "
                "token of the Playground, built as on the *Multi-head attention* page). {widths}",
                n=seq.n,
                d_model=d_model,
                widths=widths_sentence(d_ff, d_model),
            )
        )
        st.table(  # wraps its text: the column it stands in is narrow
            pd.DataFrame(
                {
                    # Translators: a table's column header: the name of a step of the block
                    tr("step"): [s.name for s in first.steps],
                    tr("operation"): [step_label(s.label) for s in first.steps],
                    # Translators: a table's column header: a tensor's shape, as (4, 16)
                    tr("shape"): [shape_text(s.shape) for s in first.steps],
                }
            ).set_index(tr("step")),
        )
with right:
    st.latex(LAYER_NORM_LATEX)
    st.latex(FEED_FORWARD_LATEX)

st.header(tr("2 · Post-norm or pre-norm: the size of the residual stream"))
hide_lengths = answer_hidden("block", "length")
if hide_lengths:
    hidden_answer_card(st, tr("The lengths of the vectors after each block (the reading and its plot)"))
else:
    st.markdown(residual_stream_text(runs, d_model))
    chart(
        st,
        residual_norm_figure({name: r.residual_norms for name, r in runs.items()}, d_model, highlight=norm),
        width="stretch",
        key="block_norm_fig",
    )

st.header(tr_n("3 · Blocks stack: {n} block", "3 · Blocks stack: {n} blocks", n_blocks, n=n_blocks))
shapes = [tuple(state.shape) for state in run.states]
chart(st, stack_figure(shapes), width="stretch", key="block_stack_fig", config={"displayModeBar": False})
input_metric, output_metric, norm_metric = st.columns(3)
input_metric.metric(tr("input shape"), shape_text(shapes[0]))
output_metric.metric(
    tr_n("output shape after {n} block", "output shape after {n} blocks", n_blocks, n=n_blocks), shape_text(shapes[-1])
)
if not hide_lengths:
    norm_metric.metric(tr("mean |x| at the output"), num(run.residual_norms[-1], ".2f"))
if shapes[0] == shapes[-1]:
    st.success(
        tr(
            "Input {input} and output {output} have the same shape: a block maps n vectors of width d_model to n "
            "vectors of width d_model, so the next block accepts its output as input, and any number of blocks can be "
            "stacked.",
            input=shape_text(shapes[0]),
            output=shape_text(shapes[-1]),
        )
    )
else:  # cannot happen with the core's block; said loudly if it ever does
    st.error(
        tr("Input {input} and output {output} differ.", input=shape_text(shapes[0]), output=shape_text(shapes[-1]))
    )

st.header(tr("4 · The heads inside any block"))
inspect = st.selectbox(
    tr("Block to look inside"),
    **STATE.widget("inspect"),
    format_func=lambda b: tr("block {block} of {n}", block=b, n=n_blocks),
    help=tr("Show the per-head attention weights of this block of the stack."),
)
STATE.notes(names=("inspect",))
weights = run.traces[inspect - 1].weights  # (n_heads, n, n)
summaries = [summarise_head(w, causal, tokens) for w in weights]
clean = sum(s.pattern != "mixed" for s in summaries)
if norm == "post":
    heads_said = tr(
        "Block {block}'s {n_heads} heads (post-norm, random weights, as in an untrained model): the captions find a "
        "single pattern in {clean} of them. Compare the hand-built ones on the *Multi-head attention* page.",
        block=inspect,
        n_heads=n_heads,
        clean=clean,
    )
else:
    heads_said = tr(
        "Block {block}'s {n_heads} heads (pre-norm, random weights, as in an untrained model): the captions find a "
        "single pattern in {clean} of them. Compare the hand-built ones on the *Multi-head attention* page.",
        block=inspect,
        n_heads=n_heads,
        clean=clean,
    )
st.markdown(heads_said)
chart(
    st,
    heads_grid(
        weights,
        tokens,
        [tr("block {block}, head {head}", block=inspect, head=h + 1) + "\n" + s.looks for h, s in enumerate(summaries)],
    ),
    width="stretch",
    key="block_heads_fig",
)
st.dataframe(
    arrow_table({tr("head"): range(1, n_heads + 1), tr("caption"): [s.caption for s in summaries]}),
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
