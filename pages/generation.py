"""Generation and the KV cache: token-by-token decoding of the trained induction model, each step's attention row,
the cache growing, the work per new token with and without it, the cache checked live, and MHA vs GQA vs MQA."""

from ui.shared_state import require_app_entry

require_app_entry()

from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from attention.decoder import (
    CACHE_BYTES_LATEX,
    CAUSAL_CACHE_LATEX,
    GQA_LATEX,
    MAX_LAYERS,
    SAMPLING_LATEX,
    DecoderConfig,
    decode_step_madds,
    next_token_probabilities,
)
from figures.generation import (
    cache_growth_figure,
    cache_kinds_figure,
    format_bytes,
    probabilities_figure,
    step_rows_figure,
    timing_figure,
    work_figure,
)
from figures.induction import head_names
from lessons.generation import (
    DTYPE_BYTES,
    LLAMA2_7B,
    ContextTiming,
    cache_kinds,
    cache_verdict,
    context_timing,
    last_step_work,
    measured_cache_bytes,
    weights_and_cache,
)
from lessons.induction import LETTERS, check_input_fits, ids_to_letters, letters_to_ids
from ui.charts import chart, show_snippet
from ui.classroom_open_question import answer_hidden, hidden_answer_card
from ui.declared.generation import MAX_PROMPT_CHARS, REPEATS, STATE, model, report
from ui.number_box import number_box
from ui.page_state import stop
from ui.safe_text import escape_markdown
from ui.snippets import generation_snippet

TIMING_LENGTHS = (16, 64, 128, 256, 512)
TIMING_CONFIG = DecoderConfig(26, 4, 8, 8, 128, 512)  # a larger random model, to time longer contexts
LONG_CONTEXT = 32768  # the context of the 7B-class example
REAL_D_HEAD, REAL_TOKENS = 8, 64  # the small real caches that check the formula


@st.cache_data(max_entries=1, show_spinner="Timing one decoding step at longer contexts (once per server)…")
def timing() -> ContextTiming:
    return context_timing(TIMING_CONFIG, TIMING_LENGTHS, repeats=REPEATS)


@st.cache_data(max_entries=64, show_spinner=False)
def real_cache(n_heads: int, n_kv: int, d_head: int) -> tuple[int, int]:
    return measured_cache_bytes(n_heads, n_kv, d_head, REAL_TOKENS)


STATE.load()
params = model()
config = params.config
letters = list(LETTERS[: config.vocab_size])

st.title("Generation and the KV cache")
st.markdown(
    "A decoder writes one token at a time: it predicts the next token, appends it, and runs again. Run naively, "
    "each step recomputes every token so far, the prompt's and the ones generated. But a token's key and value "
    "depend only on itself and the tokens before it (the causal mask guarantees it), so they never change: keep "
    "them in a **KV cache**, and each new token only computes its own query, key and value and reads the cached "
    "ones. The model here is the one from *Watch an induction head form*: it has learned to continue repeats, so "
    "you can check its output by eye."
)
st.latex(CAUSAL_CACHE_LATEX)
STATE.show_warnings()

st.header("1 · Generate, one token at a time")
prompt_col, new_col = st.columns([3, 1])
prompt_text = prompt_col.text_input(
    "Prompt (letters a to z)",
    **STATE.widget("prompt"),
    max_chars=MAX_PROMPT_CHARS,
    help="Spaces are ignored. Repeat something (a b c d a b) and the model continues the pattern.",
)
n_new = number_box(new_col, "New tokens", **STATE.widget("n_new"), help="How many tokens to generate.")
temp_col, k_col, seed_col = st.columns([3, 2, 1])
temperature = temp_col.select_slider(
    "Temperature T",
    **STATE.widget("temperature"),
    format_func=lambda t: "0 (greedy)" if t == 0 else f"{t:g}",
    help="0 = greedy: always the most likely token. Above 0: draw from softmax(logits / T); small T sharpens "
    "the distribution, large T flattens it.",
)
top_k = number_box(
    k_col,
    "top-k (0 = all)",
    **STATE.widget("top_k"),
    help="When sampling, keep only the k most likely tokens (their probabilities renormalised); 0 keeps all "
    f"{config.vocab_size}.",
)
seed = number_box(seed_col, "Seed", **STATE.widget("seed"), help="Seeds the sampling (not used when greedy).")
st.latex(SAMPLING_LATEX)
st.caption("z: the model's logits, one score per letter before the softmax; T: the temperature.")
if temperature == 0:
    st.caption("Greedy: top-k and the seed change nothing (the most likely token is always in the top k).")

try:
    prompt = letters_to_ids(prompt_text)
    check_input_fits(prompt.size, int(n_new), config)
except ValueError as err:
    st.error(escape_markdown(f"Cannot generate: {err}."))
    stop()
result = report(tuple(int(t) for t in prompt), int(n_new), float(temperature), int(top_k) or None, int(seed))
tokens = ids_to_letters(result.ids)
st.markdown(f"#### {' '.join(tokens[: prompt.size])} → **{' '.join(tokens[prompt.size :])}**")

fed = tokens[:-1]  # the last new token is never fed back in
n_heads_total = config.n_layers * config.n_heads
rows = np.full((n_heads_total, n_new, len(fed)), np.nan)
for s, step in enumerate(result.steps):
    row = step.attentions.reshape(n_heads_total, -1)  # (layers x heads, prompt + s)
    rows[:, s, : row.shape[1]] = row
STATE.fit("step")  # also while its slider is hidden: the link then holds a step that was generated
if n_new > 1:
    step_no = st.slider(
        "Inspect step",
        **STATE.widget("step"),
        help="Which generation step the outlined row, the probabilities and the cache below refer to.",
    )
else:
    step_no = 1
STATE.notes(names=("step",))
chosen = result.steps[step_no - 1]
# the cache question asks how many bytes the cache holds after a step: its rows (each step's row as long as the
# tokens cached), the cache's table and sizes, and the last step's count of tokens stay hidden while it is open
hide_cache = answer_hidden("generation", "cache")
if hide_cache:
    hidden_answer_card(st, "Each step's attention row (as long as the tokens the cache holds then)")
else:
    chart(
        st,
        step_rows_figure(
            rows, [f"{t}{i}" for i, t in enumerate(fed)], prompt.size, head_names(2, config.n_heads), chosen=step_no - 1
        ),
        key="gen_rows",
    )
    st.caption(
        "Each row is one step's **attention row**: the weights of the newest token's query over every token so far "
        "(the dotted line ends the prompt). Step 1 is the prompt's last token; each later row is one position "
        "longer, because the token chosen at the step before has joined the sequence."
    )
prob_col, cache_col = st.columns([3, 2], gap="large")
with prob_col:
    chosen_letter = letters[chosen.token]
    st.markdown(
        f"**Step {step_no}: what the model predicts, and what the token was drawn from** (chosen: **{chosen_letter}**)"
    )
    model_probs = next_token_probabilities(chosen.logits, 1.0)
    chart(st, probabilities_figure(model_probs, chosen.probabilities, letters, chosen.token), key="gen_probs")
with cache_col:
    st.markdown(f"**The cache after step {step_no}**")
    if hide_cache:
        hidden_answer_card(st, "The cache's shape and size after each step (its table, its bytes, its growth)")
    else:
        st.dataframe(
            pd.DataFrame(
                {
                    "layer": [f"layer {i + 1}" for i in range(config.n_layers)],
                    "keys": [str(chosen.cache_shape)] * config.n_layers,
                    "values": [str(chosen.cache_shape)] * config.n_layers,
                }
            ).set_index("layer"),
            key="gen_cache_table",
        )
        st.caption(
            f"Per layer: (n_kv_heads, tokens, d_head), the key/value heads (section 5), the tokens so far and the "
            f"width of one head. {chosen.cache_shape[1]} tokens × {config.n_layers} layers × K and "
            f"V, {np.dtype(params.dtype).name}: "
            f"**{format_bytes(chosen.cache_nbytes)}** ({chosen.cache_nbytes:,} bytes)."
        )

st.header("2 · The cache grows by one row per layer per token")
st.latex(CACHE_BYTES_LATEX)
growth_col, note_col = st.columns([3, 2], gap="large")
if hide_cache:
    hidden_answer_card(growth_col, "The cache's size after every step (its plot and the bytes per token)")
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
        st.markdown(
            f"Step 1 runs the whole prompt of {prompt.size} tokens and fills the cache: {first.cache_shape} per "
            f"layer, {format_bytes(first.cache_nbytes)}. Each later step appends one row to every layer's K and V: "
            f"2 × {config.n_layers} layers × {config.n_kv_heads} heads × d_head {config.d_head} × {itemsize} bytes "
            f"= **{per_token} bytes per token**. "
            + (
                f"After the last step: {last.cache_shape}, {format_bytes(last.cache_nbytes)}."
                if len(result.steps) > 1
                else "With one new token there is no later step: the cache stays as step 1 left it."
            )
        )

st.header("3 · The work per new token, with and without the cache")
count_col, time_col = st.columns(2, gap="large")
with count_col:
    t_axis = np.unique(np.geomspace(1, 4096, 40).astype(int))
    big = replace(config, max_positions=4096)  # this model's shape, with room for long contexts
    chart(
        st,
        work_figure(
            t_axis,
            [decode_step_madds(big, int(t), use_cache=True).total for t in t_axis],
            [decode_step_madds(big, int(t), use_cache=False).total for t in t_axis],
        ),
        key="gen_work",
        share=0.5,
    )
    st.caption(
        "Counted multiply-adds for this model's shape. With the cache a new token costs the same projections "
        "every time plus one row of scores and its weighted sum of the values, growing linearly with the context; "
        "without it, everything is redone for all t tokens so far."
        + ("" if hide_cache else " " + last_step_work(result))  # it counts the last step's tokens: the cache's
    )
with time_col:
    chart(st, timing_figure(result.ms_cached, result.ms_uncached), key="gen_timing", share=0.5)
    steps_said = f"for all {n_new} steps" if n_new > 1 else "for its one step"
    st.caption(
        f"Measured on this server, best of {REPEATS}: {result.ms_cached.sum():.2f} ms with the cache, "
        f"{result.ms_uncached.sum():.2f} ms without, {steps_said} (step 1 runs the whole prompt either "
        "way). At a few dozen tokens of a tiny model both are mostly Python's own overhead; the gap opens with the "
        "context, as below."
    )
timed = timing()
st.dataframe(
    pd.DataFrame(
        {
            "context (tokens)": timed.n_total,
            "ms with the cache": timed.ms_cached,
            "ms without": timed.ms_uncached,
            "times faster": timed.ms_uncached / timed.ms_cached,
            "multiply-adds with": timed.madds_cached,
            "multiply-adds without": timed.madds_uncached,
        }
    ).set_index("context (tokens)"),
    key="gen_context_timing",
    column_config={
        "ms with the cache": st.column_config.NumberColumn(format="%.3f"),
        "multiply-adds with": st.column_config.NumberColumn(format="localized"),
        "multiply-adds without": st.column_config.NumberColumn(format="localized"),
        "ms without": st.column_config.NumberColumn(format="%.3f"),
        "times faster": st.column_config.NumberColumn(format="%.1f"),
    },
)
st.caption(
    f"One decoding step of a larger random model ({TIMING_CONFIG.n_layers} layers, {TIMING_CONFIG.n_heads} heads, "
    f"d_model {TIMING_CONFIG.d_model}), timed once per server. With "
    "the cache the step is one token against the cached keys; without, the whole context runs again."
)

st.header("4 · The check that makes the cache trustworthy")
ok = result.max_diff_float64 < 1e-12
st.markdown(
    "The logits of cached, one-token-at-a-time decoding (the prompt at once, then each new token alone, as "
    "above) against the logits of running the whole sequence in one go, for every position:"
)
check_cols = st.columns(3)
check_cols[0].metric("largest difference, float64", f"{result.max_diff_float64:.1e}", help="Must be below 1e-12.")
check_cols[1].metric("largest difference, float32", f"{result.max_diff_float32:.1e}")
check_cols[2].metric("same tokens without the cache", "yes" if result.same_tokens else "NO")
if ok and result.same_tokens:
    st.success(cache_verdict(result))
else:
    st.error("The cached logits differ from the recomputed ones: the cache is wrong.")

st.header("5 · MHA, GQA and MQA: the same model, three caches")
big_weights, big_cache = weights_and_cache(LLAMA2_7B, LONG_CONTEXT)
_, own_cache = weights_and_cache(LLAMA2_7B, LLAMA2_7B.n_context)
st.markdown(
    f"At long contexts the cache can outgrow the weights: {LLAMA2_7B.name} (Touvron et al. 2023; "
    f"{LLAMA2_7B.n_layers} layers of {LLAMA2_7B.n_heads} heads of d_head {LLAMA2_7B.d_head}) holds "
    f"{format_bytes(big_weights)} of float16 weights; its multi-head cache is {format_bytes(own_cache)} per "
    f"sequence at the {LLAMA2_7B.n_context:,} tokens it was trained for, and would be {format_bytes(big_cache)} "
    f"at {LONG_CONTEXT:,}, more than the weights; every new token must read all of it. "
    "In multi-head attention (MHA) every query head has its own key/value head. Grouped-query attention (GQA, "
    "Ainslie et al. 2023) lets each group of g query heads share one key/value head: as many query heads as before, "
    "a cache g times smaller. Multi-query attention (MQA, Shazeer 2019) is the extreme, one key/value head for all."
)
st.latex(GQA_LATEX)
st.caption("Heads numbered from 0: query heads 0 to g − 1 share key/value head 0, the next g share head 1, and so on.")
c1, c2, c3 = st.columns(3)
layers = number_box(
    c1,
    "layers",
    **STATE.widget("layers"),
    help=f"n_layers of the model: at most {MAX_LAYERS}, the most this app's decoder takes.",
)
heads = c2.selectbox(
    "query heads",
    **STATE.widget("heads"),
    help="n_heads: query heads per layer.",
)
kv = c3.selectbox(
    "GQA kv heads",
    **STATE.widget("kv"),
    help="n_kv_heads of the grouped-query model: each one is shared by a group of query heads, so it divides them.",
)
STATE.notes(c3, names=("kv",))
c4, c5, c6 = st.columns(3)
d_head = c4.selectbox("d_head", **STATE.widget("d_head"), help="The width of one head.")
context = c5.selectbox(
    "context (tokens)",
    **STATE.widget("context"),
    format_func=lambda n: f"{n:,}",
    help="How many tokens the cache holds.",
)
dtype = c6.selectbox(
    "number format",
    **STATE.widget("dtype"),
    help="How the cache stores each number: float16 (and bfloat16) take 2 bytes, float32 4, float64 8.",
)
kinds = cache_kinds(int(layers), int(heads), int(kv), int(d_head), int(context), DTYPE_BYTES[dtype])
bars_col, kinds_note = st.columns([3, 2], gap="large")
if answer_hidden("generation", "shared"):
    hidden_answer_card(bars_col, "The three caches' sizes (their bars, the sizes and the check on real caches)")
else:
    with bars_col:
        figure = cache_kinds_figure([k.name for k in kinds], [k.nbytes for k in kinds])
        chart(st, figure, key="gen_kinds", share=0.6)
    with kinds_note:
        mha, gqa, mqa = kinds
        st.markdown(
            f"{layers} layers × {heads} query heads × d_head {d_head} (d_model {heads * d_head}), {context:,} "
            f"tokens, {DTYPE_BYTES[dtype]} bytes per number:\n\n"
            f"- **MHA**: {format_bytes(mha.nbytes)}\n- **GQA**, groups of {heads // kv}: {format_bytes(gqa.nbytes)} "
            f"({heads // kv}× smaller)\n- **MQA**: {format_bytes(mqa.nbytes)} ({heads}× smaller)"
        )
        real = {kind.n_kv_heads: real_cache(int(heads), kind.n_kv_heads, REAL_D_HEAD) for kind in kinds}
        st.caption(
            f"The formula, checked on caches that exist: a 2-layer float32 model with these head counts and d_head "
            f"{REAL_D_HEAD}, run on {REAL_TOKENS} tokens, holds "
            + ", ".join(f"{m:,} bytes (formula {f:,})" for m, f in real.values())
            + " for MHA, GQA and MQA."
        )

show_snippet(
    generation_snippet(
        prompt=prompt_text, n_new=int(n_new), temperature=float(temperature), top_k=int(top_k) or None, seed=int(seed)
    )
)
