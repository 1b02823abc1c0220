"""Generation and the KV cache: token-by-token decoding of the trained induction model, each step's attention row,
the cache growing, the work per new token with and without it, the cache checked live, and MHA vs GQA vs MQA."""

from ui.shared_state import require_app_entry

require_app_entry()

import numpy as np
import pandas as pd
import streamlit as st

from attention.decoder import (
    CACHE_BYTES_LATEX,
    CAUSAL_CACHE_LATEX,
    SAMPLING_LATEX,
    DecoderConfig,
    next_token_probabilities,
)
from figures.generation import (
    bytes_text,
    cache_growth_figure,
    probabilities_figure,
    step_rows_figure,
    timing_figure,
    work_figure,
)
from figures.induction import head_names
from lessons.generation import (
    ContextTiming,
    cache_verdict,
    context_timing,
    last_step_work,
    step_attention_rows,
    work_per_new_token,
)
from lessons.induction import LETTERS, check_input_fits, ids_to_letters, letters_to_ids
from locales import num, sentence_space, tr
from ui.charts import chart, show_snippet
from ui.classroom_open_question import answer_hidden, hidden_answer_card
from ui.declared.generation import MAX_PROMPT_CHARS, REPEATS, STATE, model, report
from ui.generation_kinds import cache_kinds_section
from ui.number_box import number_box
from ui.page_state import stop
from ui.safe_text import escape_markdown
from ui.snippets import generation_snippet

TIMING_LENGTHS = (16, 64, 128, 256, 512)
TIMING_CONFIG = DecoderConfig(26, 4, 8, 8, 128, 512)  # a larger random model, to time longer contexts


def timing() -> ContextTiming:
    """`timed`, with a spinner in the session's language while it is timed."""
    with st.spinner(tr("Timing one decoding step at longer contexts (once per server)…")):
        return timed_steps()


@st.cache_data(max_entries=1, show_spinner=False)
def timed_steps() -> ContextTiming:
    return context_timing(TIMING_CONFIG, TIMING_LENGTHS, repeats=REPEATS)


STATE.load()
params = model()
config = params.config
letters = list(LETTERS[: config.vocab_size])

st.title(tr("Generation and the KV cache"))
st.markdown(
    tr(
        "A decoder writes one token at a time: it predicts the next token, appends it, and runs again. Run naively, "
        "each step recomputes every token so far, the prompt's and the ones generated. But a token's key and value "
        "depend only on itself and the tokens before it (the causal mask guarantees it), so they never change: keep "
        "them in a **KV cache**, and each new token only computes its own query, key and value and reads the cached "
        "ones. The model here is the one from *Watch an induction head form*: it has learned to continue repeats, so "
        "you can check its output by eye."
    )
)
st.latex(CAUSAL_CACHE_LATEX)
STATE.show_warnings()

st.header(tr("1 · Generate, one token at a time"))
prompt_col, new_col = st.columns([3, 1])
prompt_text = prompt_col.text_input(
    tr("Prompt (letters a to z)"),
    **STATE.widget("prompt"),
    max_chars=MAX_PROMPT_CHARS,
    help=tr("Spaces are ignored. Repeat something (a b c d a b) and the model continues the pattern."),
)
n_new = number_box(new_col, tr("New tokens"), **STATE.widget("n_new"), help=tr("How many tokens to generate."))
temp_col, k_col, seed_col = st.columns([3, 2, 1])
greedy = tr("0 (greedy)")
temperature = temp_col.select_slider(
    tr("Temperature T"),
    **STATE.widget("temperature"),
    format_func=lambda t: greedy if t == 0 else num(t, "g"),
    help=tr(
        "0 = greedy: always the most likely token. Above 0: draw from softmax(logits / T); small T sharpens the "
        "distribution, large T flattens it."
    ),
)
top_k = number_box(
    k_col,
    tr("top-k (0 = all)"),
    **STATE.widget("top_k"),
    help=tr(
        "When sampling, keep only the k most likely tokens (their probabilities renormalised); 0 keeps all {vocab}.",
        vocab=config.vocab_size,
    ),
)
seed = number_box(seed_col, tr("Seed"), **STATE.widget("seed"), help=tr("Seeds the sampling (not used when greedy)."))
st.latex(SAMPLING_LATEX)
st.caption(tr("z: the model's logits, one score per letter before the softmax; T: the temperature."))
if temperature == 0:
    st.caption(tr("Greedy: top-k and the seed change nothing (the most likely token is always in the top k)."))

try:
    prompt = letters_to_ids(prompt_text)
    check_input_fits(prompt.size, int(n_new), config)
except ValueError as err:
    st.error(escape_markdown(tr("Cannot generate: {error}.", error=err)))
    stop()
result = report(tuple(int(t) for t in prompt), int(n_new), float(temperature), int(top_k) or None, int(seed))
tokens = ids_to_letters(result.ids)
st.markdown(f"#### {' '.join(tokens[: prompt.size])} → **{' '.join(tokens[prompt.size :])}**")

fed = tokens[:-1]  # the last new token is never fed back in
rows = step_attention_rows(result.steps)  # (layers x heads, n_new, len(fed))
STATE.fit("step")  # also while its slider is hidden: the link then holds a step that was generated
if n_new > 1:
    step_no = st.slider(
        tr("Inspect step"),
        **STATE.widget("step"),
        help=tr("Which generation step the outlined row, the probabilities and the cache below refer to."),
    )
else:
    step_no = 1
STATE.notes(names=("step",))
chosen = result.steps[step_no - 1]
# the cache question asks how many bytes the cache holds after a step: its rows (each step's row as long as the
# tokens cached), the cache's table and sizes, and the last step's count of tokens stay hidden while it is open
hide_cache = answer_hidden("generation", "cache")
if hide_cache:
    hidden_answer_card(st, tr("Each step's attention row (as long as the tokens the cache holds then)"))
else:
    chart(
        st,
        step_rows_figure(
            rows, [f"{t}{i}" for i, t in enumerate(fed)], prompt.size, head_names(2, config.n_heads), chosen=step_no - 1
        ),
        key="gen_rows",
    )
    st.caption(
        tr(
            "Each row is one step's **attention row**: the weights of the newest token's query over every token so "
            "far (the dotted line ends the prompt). Step 1 is the prompt's last token; each later row is one "
            "position longer, because the token chosen at the step before has joined the sequence."
        )
    )
prob_col, cache_col = st.columns([3, 2], gap="large")
with prob_col:
    chosen_letter = letters[chosen.token]
    st.markdown(
        tr(
            "**Step {step}: what the model predicts, and what the token was drawn from** (chosen: **{letter}**)",
            step=step_no,
            letter=chosen_letter,
        )
    )
    model_probs = next_token_probabilities(chosen.logits, 1.0)
    chart(st, probabilities_figure(model_probs, chosen.probabilities, letters, chosen.token), key="gen_probs")
with cache_col:
    st.markdown(tr("**The cache after step {step}**", step=step_no))
    if hide_cache:
        hidden_answer_card(st, tr("The cache's shape and size after each step (its table, its bytes, its growth)"))
    else:
        # Translators: a table's column headers: a layer of the model, its cached keys and its cached values
        layer_column, keys_column, values_column = tr("layer"), tr("keys"), tr("values")
        st.dataframe(
            pd.DataFrame(
                {
                    layer_column: [tr("layer {layer}", layer=i + 1) for i in range(config.n_layers)],
                    keys_column: [str(chosen.cache_shape)] * config.n_layers,
                    values_column: [str(chosen.cache_shape)] * config.n_layers,
                }
            ).set_index(layer_column),
            key="gen_cache_table",
        )
        st.caption(
            tr(
                "Per layer: (n_kv_heads, tokens, d_head), the key/value heads (section 5), the tokens so far and the "
                "width of one head. {tokens} tokens × {layers} layers × K and V, {dtype}: **{size}** ({bytes} bytes).",
                tokens=chosen.cache_shape[1],
                layers=config.n_layers,
                dtype=np.dtype(params.dtype).name,
                size=bytes_text(chosen.cache_nbytes),
                bytes=num(chosen.cache_nbytes, ","),
            )
        )

st.header(tr("2 · The cache grows by one row per layer per token"))
st.latex(CACHE_BYTES_LATEX)
growth_col, note_col = st.columns([3, 2], gap="large")
if hide_cache:
    hidden_answer_card(growth_col, tr("The cache's size after every step (its plot and the bytes per token)"))
else:
    with growth_col:
        figure = cache_growth_figure(
            np.array([s.cache_shape[1] for s in result.steps]), [s.cache_nbytes for s in result.steps]
        )
        chart(st, figure, key="gen_growth")
    with note_col:
        first, last = result.steps[0], result.steps[-1]
        itemsize = np.dtype(params.dtype).itemsize
        per_token = 2 * config.n_layers * config.n_kv_heads * config.d_head * itemsize
        filled = tr(
            "Step 1 runs the whole prompt of {tokens} tokens and fills the cache: {shape} per layer, {size}. Each "
            "later step appends one row to every layer's K and V: 2 × {layers} layers × {heads} heads × d_head "
            "{d_head} × {itemsize} bytes = **{per_token} bytes per token**.",
            tokens=prompt.size,
            shape=first.cache_shape,
            size=bytes_text(first.cache_nbytes),
            layers=config.n_layers,
            heads=config.n_kv_heads,
            d_head=config.d_head,
            itemsize=itemsize,
            per_token=per_token,
        )
        after = (
            tr("After the last step: {shape}, {size}.", shape=last.cache_shape, size=bytes_text(last.cache_nbytes))
            if len(result.steps) > 1
            else tr("With one new token there is no later step: the cache stays as step 1 left it.")
        )
        st.markdown(f"{filled} {after}")

st.header(tr("3 · The work per new token, with and without the cache"))
count_col, time_col = st.columns(2, gap="large")
with count_col:
    chart(st, work_figure(*work_per_new_token(config, longest=4096)), key="gen_work", share=0.5)
    st.caption(
        tr(
            "Counted multiply-adds for this model's shape. With the cache a new token costs the same projections "
            "every time plus one row of scores and its weighted sum of the values, growing linearly with the "
            "context; without it, everything is redone for all t tokens so far."
        )
        # the last step's work, unless the question asked now is about the cache (it would answer it)
        + ("" if hide_cache else sentence_space() + last_step_work(result))
    )
with time_col:
    chart(st, timing_figure(result.ms_cached, result.ms_uncached), key="gen_timing", share=0.5)
    times = dict(
        repeats=REPEATS,
        cached=num(result.ms_cached.sum(), ".2f"),
        uncached=num(result.ms_uncached.sum(), ".2f"),
        steps=n_new,
    )
    measured_said = (
        tr(
            "Measured on this server, best of {repeats}: {cached} ms with the cache, {uncached} ms without, for all "
            "{steps} steps (step 1 runs the whole prompt either way).",
            **times,
        )
        if n_new > 1
        else tr(
            "Measured on this server, best of {repeats}: {cached} ms with the cache, {uncached} ms without, for its "
            "one step (step 1 runs the whole prompt either way).",
            **times,
        )
    )
    st.caption(
        measured_said
        + sentence_space()
        + tr(
            "At a few dozen tokens of a tiny model both are mostly Python's own overhead; the gap opens with the "
            "context, as below."
        )
    )
timed = timing()
context_column = tr("context (tokens)")
ms_cached_column, ms_uncached_column = tr("ms with the cache"), tr("ms without")
madds_cached_column, madds_uncached_column = tr("multiply-adds with"), tr("multiply-adds without")
faster_column = tr("times faster")
st.dataframe(
    pd.DataFrame(
        {
            context_column: timed.n_total,
            ms_cached_column: timed.ms_cached,
            ms_uncached_column: timed.ms_uncached,
            faster_column: timed.ms_uncached / timed.ms_cached,
            madds_cached_column: timed.madds_cached,
            madds_uncached_column: timed.madds_uncached,
        }
    ).set_index(context_column),
    key="gen_context_timing",
    column_config={
        ms_cached_column: st.column_config.NumberColumn(format="%.3f"),
        madds_cached_column: st.column_config.NumberColumn(format="localized"),
        madds_uncached_column: st.column_config.NumberColumn(format="localized"),
        ms_uncached_column: st.column_config.NumberColumn(format="%.3f"),
        faster_column: st.column_config.NumberColumn(format="%.1f"),
    },
)
st.caption(
    tr(
        "One decoding step of a larger random model ({layers} layers, {heads} heads, d_model {d_model}), timed once "
        "per server. With the cache the step is one token against the cached keys; without, the whole context runs "
        "again.",
        layers=TIMING_CONFIG.n_layers,
        heads=TIMING_CONFIG.n_heads,
        d_model=TIMING_CONFIG.d_model,
    )
)

st.header(tr("4 · The check that makes the cache trustworthy"))
ok = result.max_diff_float64 < 1e-12
st.markdown(
    tr(
        "The logits of cached, one-token-at-a-time decoding (the prompt at once, then each new token alone, as "
        "above) against the logits of running the whole sequence in one go, for every position:"
    )
)
check_cols = st.columns(3)
check_cols[0].metric(
    tr("largest difference, float64"), num(result.max_diff_float64, ".1e"), help=tr("Must be below 1e-12.")
)
check_cols[1].metric(tr("largest difference, float32"), num(result.max_diff_float32, ".1e"))
check_cols[2].metric(tr("same tokens without the cache"), tr("yes") if result.same_tokens else tr("NO"))
if ok and result.same_tokens:
    st.success(cache_verdict(result))
else:
    st.error(tr("The cached logits differ from the recomputed ones: the cache is wrong."))

st.header(tr("5 · MHA, GQA and MQA: the same model, three caches"))
cache_kinds_section()  # its own controls of a model's shape, the three caches, the formula checked

show_snippet(
    generation_snippet(
        prompt=prompt_text, n_new=int(n_new), temperature=float(temperature), top_k=int(top_k) or None, seed=int(seed)
    )
)
