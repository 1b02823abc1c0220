"""Multi-head attention: d_model split into heads, one heatmap per head, concatenation, output projection."""

from ui.shared_state import require_app_entry

require_app_entry()

import streamlit as st

from attention import attention_steps
from attention.heads import MULTI_HEAD_LATEX
from figures.heads import column_blocks_figure, head_split_figure, heads_grid
from figures.heatmaps import matrix_heatmap
from figures.steps import steps_heatmap
from lessons.head_library import (
    EMBEDDING_LATEX,
    ENTROPY_LATEX,
    MAX_POSITIONS,
    PRESET_LABELS,
    buildable_presets,
    embed_tokens,
    entropy_range,
    preset_bullets,
    summary_table,
)
from lessons.heads import attention_latex, how_each_head_attends, scores_title, split_problem, split_table
from locales import tr
from ui.charts import chart, show_snippet
from ui.classroom_open_question import answer_hidden, hidden_answer_card
from ui.declared.heads import MAX_HEADS, STATE, compute
from ui.number_box import number_box
from ui.page_state import stop
from ui.snippets import heads_snippet
from ui.tables import arrow_table

STATE.load()
seq = STATE["seq"]
tokens = tuple(seq.tokens)

st.title(tr("Multi-head attention"))
st.markdown(
    tr(
        "One attention head compares every query with every key in **one** way. Multi-head attention runs "
        "**h heads side by side**: the d_model columns of Q, K and V are cut into h chunks of d_head = d_model / h "
        "columns, each head attends with its own chunk, and the h outputs are glued back together and mixed by W_O. "
        "Different heads can learn to look for different things: Clark et al. (2019, 'What Does BERT Look At? An "
        "Analysis of BERT's Attention') found heads in BERT that attend to the previous token, to the next token, to "
        "the separator token [SEP], or broadly over the whole sentence."
    )
)
st.latex(MULTI_HEAD_LATEX)
STATE.show_warnings()

width_col, heads_col, seed_col, switches_col = st.columns([3, 3, 2, 3])
d_model = number_box(
    width_col,
    "d_model",
    **STATE.widget("d_model"),
    help=tr("Width of each token's vector; it must be a multiple of the number of heads."),
)
n_heads = heads_col.slider(
    tr("Number of heads h"),
    **STATE.widget("n_heads"),
    help=tr("How many heads share the d_model columns; each gets d_model / h of them."),
)
seed = number_box(
    seed_col,
    tr("Seed"),
    **STATE.widget("seed"),
    help=tr("Seeds the random word vectors, W_V, W_O and the heads set to 'random'."),
)
causal = switches_col.toggle(
    tr("Causal mask"),
    **STATE.widget("causal"),
    help=tr("Each position may only attend to itself and earlier positions (applied in every head)."),
)
scale = switches_col.toggle(
    tr("Divide by √d_head"),
    **STATE.widget("scale"),
    help=tr("Scale every head's scores by 1/√d_head before the softmax."),
)

if not 1 <= seq.n <= MAX_POSITIONS:
    st.error(
        tr(
            "The Playground's sequence has {n} tokens; this page shows 1 to {most}. Shorten it on the Playground.",
            n=seq.n,
            most=MAX_POSITIONS,
        )
    )
    stop()
if problem := split_problem(d_model, n_heads, MAX_HEADS):
    st.error(problem)
    stop()
d_head = d_model // n_heads

st.header(tr("1 · The input X"))
st.markdown(
    tr(
        "The {n} tokens come from the **Playground**. There, you typed each token's q, k and v directly; here we go "
        "one step back, to the vectors X that a transformer starts from, and each head makes its *own* q, k and v "
        "from X. Each row of X is built from the token's **position** (sinusoids, so that a head can find "
        "'the previous position') and its **word** (random angles keyed by the word's text, so the same word always "
        "gets the same columns). The original Transformer (Vaswani et al. 2017, 'Attention Is All You Need') adds the "
        "two; we put them side by side so that a head can read one and ignore the other exactly.",
        n=seq.n,
    )
)
st.latex(EMBEDDING_LATEX)
emb = embed_tokens(tokens, d_model, seed)
k_pos = 2 * emb.n_position_pairs
chart(
    st,
    column_blocks_figure(
        emb.x,
        tokens,
        # Translators: "position" and "word" name the two groups of columns of X (a token's position, its word)
        [(0, k_pos, tr("position"), "#6a3d9a"), (k_pos, d_model, tr("word"), "#b15928")],
        column_labels=emb.columns if d_model <= 24 else None,
        title=tr("X: {n} tokens × d_model = {d_model}", n=seq.n, d_model=d_model),
    ),
    width="stretch",
    key="heads_x_fig",
)

st.header(tr("2 · The head library"))
st.markdown(
    tr(
        "Each head's columns of W_Q and W_K decide what it looks for. Pick a preset per head; the presets are built "
        "by hand (no training) and really produce their pattern:"
    )
    + "\n"
    + preset_bullets(causal)
)
st.info(
    tr(
        "**A clean pattern is evidence, not proof.** A heatmap that looks like 'previous token' says where a head "
        "*reads*; what it does with what it read depends on its values (W_V), on W_O and on everything after it. "
        "These heads are tidy because they were built by hand to be; the same pattern can move very different "
        "information, depending on the values (see *Pitfalls*, section 3: one pattern, two different outputs)."
    ),
    icon=":material/search:",
)
preset_cols = st.columns(min(n_heads, 4))
chosen = [
    preset_cols[h % 4].selectbox(
        tr("Head {head}", head=h + 1),
        format_func=lambda p: tr(PRESET_LABELS[p]),
        **STATE.widget("presets", slot=h),
        help=tr("What this head's W_Q and W_K are built to look for."),
    )
    for h in range(n_heads)
]
presets, problems = buildable_presets(chosen, d_head, emb)
for h, problem in enumerate(problems):
    if problem:
        st.warning(tr("Head {head}: {problem}. This head uses random weights instead.", head=h + 1, problem=problem))

emb, hw, steps, summaries = compute(tokens, d_model, n_heads, presets, seed, causal, scale)

st.header(tr("3 · Split d_model into heads"))
st.markdown(
    tr(
        "Q = X W_Q (+ b_Q) has d_model = {d_model} columns. Head h takes its own {d_head} of them "
        "(d_head = {d_model} / {n_heads} = {d_head}); K and V are cut the same way. No number is changed: the split "
        "is a reshape, (n, d_model) = ({n}, {d_model}) → (n, h, d_head) = ({n}, {n_heads}, {d_head}), then a "
        "transpose of the first two axes → (h, n, d_head) = ({n_heads}, {n}, {d_head}).",
        d_model=d_model,
        d_head=d_head,
        n_heads=n_heads,
        n=seq.n,
    )
)
chart(
    st,
    head_split_figure(
        steps.q_heads.swapaxes(0, 1).reshape(seq.n, d_model),
        n_heads,
        tokens,
        title=tr(
            "Q = X W_Q + b_Q: {n} × {d_model}, in {n_heads} chunks of {d_head} columns",
            n=seq.n,
            d_model=d_model,
            n_heads=n_heads,
            d_head=d_head,
        ),
    ),
    width="stretch",
    key="heads_split_fig",
)
st.dataframe(arrow_table(split_table(steps.q_heads)), hide_index=True, key="heads_split_table")

st.header(tr("4 · Every head attends on its own"))
st.markdown(
    tr(
        "{attends} The heatmaps share one colour scale (0 to 1), so their colours can be compared. Each caption is "
        "computed from the head's weights (and, for the same-word pattern, the tokens' texts): the pattern it fits "
        "best, the entropy of its rows ({entropy}) and how far from the diagonal it looks on average.",
        attends=how_each_head_attends(causal, scale, d_head),
        entropy=entropy_range(causal, seq.n),
    )
)
st.latex(attention_latex(causal, scale))
st.latex(ENTROPY_LATEX)
if answer_hidden("heads"):
    hidden_answer_card(st, tr("Every head's weights and their summary (pattern, entropy, distance)"))
else:
    titles = [
        tr("head {head} · {preset}", head=h + 1, preset=tr(PRESET_LABELS[p])) + "\n" + s.looks
        for h, (p, s) in enumerate(zip(presets, summaries))
    ]
    chart(st, heads_grid(steps.weights, tokens, titles), width="stretch", key="heads_grid_fig")
    table = arrow_table(summary_table(presets, summaries))
    st.dataframe(table, hide_index=True, width="stretch", key="heads_summary_table")

st.header(tr("5 · Concatenate, then project with W_O"))
st.markdown(
    tr(
        "The {n_heads} head outputs (each {n} × {d_head}) are put side by side again: the concatenation is "
        "{n} × {d_model}, the same shape as X. W_O ({d_model} × {d_model}) then mixes the heads' columns, so "
        "every output column can use what every head found.",
        n_heads=n_heads,
        n=seq.n,
        d_head=d_head,
        d_model=d_model,
    )
)
# With a question about the heads open, a head's output gives its answer away: row i is query i's weights · V_h,
# and section 6 shows V_h of the enlarged head (with sharp weights, row i is V_h's row of the key that wins; with
# spread ones, an average of V_h's rows, which tells which head is closest to uniform).
hide_outputs = answer_hidden("heads")
left, right = st.columns(2)
with left:
    if hide_outputs:
        hidden_answer_card(st, tr("The heads' outputs side by side (their rows are weights · V_h)"))
    else:
        chart(
            st,
            head_split_figure(
                steps.concat, n_heads, tokens, title=f"Concat(head₁ … head_{n_heads}): {seq.n} × {d_model}"
            ),
            width="stretch",
            key="heads_concat_fig",
        )
with right:
    chart(
        st,
        matrix_heatmap(
            steps.output,
            tokens,
            [str(c) for c in range(d_model)],
            title=tr("Output = Concat · W_O: {n} × {d_model}", n=seq.n, d_model=d_model),
            digits=2 if d_model <= 16 else 1,
        ),
        width="stretch",
        key="heads_output_fig",
        share=0.5,
    )

st.header(tr("6 · One head, step by step"))
focus = st.selectbox(
    tr("Head to enlarge"),
    **STATE.widget("focus"),
    format_func=lambda h: tr("head {head} · {preset}", head=h, preset=tr(PRESET_LABELS[presets[h - 1]])),
    help=tr("Show this head's Q, K, V chunks, scores, weights and output."),
)
STATE.notes()
h = focus - 1
one = attention_steps(steps.q_heads[h], steps.k_heads[h], steps.v_heads[h], causal=causal, scale=scale)
cols = [f"{c}" for c in range(h * d_head, (h + 1) * d_head)]
for col, name, m in zip(st.columns(3), "QKV", (one.q, one.k, one.v)):
    chart(
        col,
        matrix_heatmap(
            m,
            tokens,
            cols,
            title=tr(
                "{matrix}_{head}: {n} × {d_head} (columns {first}–{last})",
                matrix=name,
                head=focus,
                n=seq.n,
                d_head=d_head,
                first=cols[0],
                last=cols[-1],
            ),
        ),
        width="stretch",
        key=f"heads_focus_{name}",
        share=1 / 3,
    )
if answer_hidden("heads"):  # a row's largest score is its largest weight
    hidden_answer_card(st, tr("Head {head}'s scores, weights and summary", head=focus))
else:
    scores_col, weights_col = st.columns(2)
    chart(
        scores_col,
        matrix_heatmap(
            one.masked,
            tokens,
            tokens,
            title=scores_title(scale, causal, d_head),
        ),
        width="stretch",
        key="heads_focus_scores",
        share=0.5,
    )
    chart(
        weights_col,
        steps_heatmap(one, tokens, title=tr("weights of head {head} (softmax of each row)", head=focus)),
        width="stretch",
        key="heads_focus_weights",
        share=0.5,
    )
    st.caption(summaries[h].caption)
output_col, note_col = st.columns(2)
if hide_outputs:  # beside V_h above, its rows say which key each query weighs most
    hidden_answer_card(output_col, tr("Head {head}'s output (weights · V_{head})", head=focus))
else:
    chart(
        output_col,
        matrix_heatmap(
            one.output,
            tokens,
            cols,
            title=tr("head {head} output = weights · V_{head}: {n} × {d_head}", head=focus, n=seq.n, d_head=d_head),
        ),
        width="stretch",
        key="heads_focus_output",
        share=0.5,
    )
note_col.markdown(
    tr(
        "This head's output fills columns {first}–{last} of the concatenation in step 5. Each row is "
        "the weighted average of the rows of V, with that query's weights.",
        first=cols[0],
        last=cols[-1],
    )
)

show_snippet(
    heads_snippet(tokens, d_model=d_model, n_heads=n_heads, presets=presets, seed=seed, causal=causal, scale=scale)
)
