"""Section 5 of "Generation and the KV cache" (pages/generation.py): MHA, GQA and MQA, the same model with three
caches. Why the cache matters at long contexts (a 7B-class model's cache against its weights), the rule of grouped
queries, the model's shape chosen with its own controls, the three caches' sizes, and the formula checked on caches
that exist. It reads nothing of the generation above it: only its own controls."""

import streamlit as st

from attention.decoder import GQA_LATEX, MAX_LAYERS
from figures.generation import bytes_text, cache_kinds_figure
from lessons.generation import DTYPE_BYTES, LLAMA2_7B, CacheKind, cache_kinds, measured_cache_bytes, weights_and_cache
from locales import num, tr
from ui.charts import chart
from ui.classroom_open_question import answer_hidden, hidden_answer_card
from ui.declared.generation import STATE
from ui.number_box import number_box

LONG_CONTEXT = 32768  # the context of the 7B-class example
REAL_D_HEAD, REAL_TOKENS = 8, 64  # the small real caches that check the formula


@st.cache_data(max_entries=64, show_spinner=False)
def real_cache(n_heads: int, n_kv: int, d_head: int) -> tuple[int, int]:
    """`measured_cache_bytes` of REAL_TOKENS tokens, once per server for each head shape."""
    return measured_cache_bytes(n_heads, n_kv, d_head, REAL_TOKENS)


def cache_kinds_section() -> None:
    """The section under its header: the case for sharing keys and values, the controls of the model's shape, the
    bars and sizes of its MHA, GQA and MQA caches (hidden while the class answers the question they answer) and
    the check of the formula on real caches."""
    big_weights, big_cache = weights_and_cache(LLAMA2_7B, LONG_CONTEXT)
    _, own_cache = weights_and_cache(LLAMA2_7B, LLAMA2_7B.n_context)
    outgrows = tr(
        "At long contexts the cache can outgrow the weights: {model} (Touvron et al. 2023; {layers} layers of "
        "{heads} heads of d_head {d_head}) holds {weights} of float16 weights; its multi-head cache is {own_cache} "
        "per sequence at the {context} tokens it was trained for, and would be {long_cache} at {long_context}, more "
        "than the weights; every new token must read all of it. In multi-head attention (MHA) every query head has "
        "its own key/value head. Grouped-query attention (GQA, Ainslie et al. 2023) lets each group of g query heads "
        "share one key/value head: as many query heads as before, a cache g times smaller. Multi-query attention "
        "(MQA, Shazeer 2019) is the extreme, one key/value head for all.",
        model=LLAMA2_7B.name,
        layers=LLAMA2_7B.n_layers,
        heads=LLAMA2_7B.n_heads,
        d_head=LLAMA2_7B.d_head,
        weights=bytes_text(big_weights),
        own_cache=bytes_text(own_cache),
        context=num(LLAMA2_7B.n_context, ","),
        long_cache=bytes_text(big_cache),
        long_context=num(LONG_CONTEXT, ","),
    )
    st.markdown(outgrows)
    st.latex(GQA_LATEX)
    st.caption(
        tr("Heads numbered from 0: query heads 0 to g − 1 share key/value head 0, the next g share head 1, and so on.")
    )
    c1, c2, c3 = st.columns(3)
    layers = number_box(
        c1,
        # Translators: the number of layers of the model (a short label)
        tr("layers"),
        **STATE.widget("layers"),
        help=tr("n_layers of the model: at most {limit}, the most this app's decoder takes.", limit=MAX_LAYERS),
    )
    heads = c2.selectbox(
        tr("query heads"),
        **STATE.widget("heads"),
        help=tr("n_heads: query heads per layer."),
    )
    kv = c3.selectbox(
        tr("GQA kv heads"),
        **STATE.widget("kv"),
        help=tr(
            "n_kv_heads of the grouped-query model: each one is shared by a group of query heads, so it divides them."
        ),
    )
    STATE.notes(c3, names=("kv",))
    c4, c5, c6 = st.columns(3)
    d_head = c4.selectbox("d_head", **STATE.widget("d_head"), help=tr("The width of one head."))
    context = c5.selectbox(
        tr("context (tokens)"),
        **STATE.widget("context"),
        format_func=lambda n: num(n, ","),
        help=tr("How many tokens the cache holds."),
    )
    dtype = c6.selectbox(
        tr("number format"),
        **STATE.widget("dtype"),
        help=tr("How the cache stores each number: float16 (and bfloat16) take 2 bytes, float32 4, float64 8."),
    )
    kinds = cache_kinds(int(layers), int(heads), int(kv), int(d_head), int(context), DTYPE_BYTES[dtype])
    bars_col, kinds_note = st.columns([3, 2], gap="large")
    if answer_hidden("generation", "shared"):
        hidden_answer_card(bars_col, tr("The three caches' sizes (their bars, the sizes and the check on real caches)"))
    else:
        with bars_col:
            figure = cache_kinds_figure([k.name for k in kinds], [k.nbytes for k in kinds])
            chart(st, figure, key="gen_kinds", share=0.6)
        with kinds_note:
            mha, gqa, mqa = kinds
            st.markdown(
                tr(
                    "{layers} layers × {heads} query heads × d_head {d_head} (d_model {d_model}), {context} tokens, "
                    "{itemsize} bytes per number:\n\n"
                    "- **MHA**: {mha}\n"
                    "- **GQA**, groups of {group}: {gqa} ({group}× smaller)\n"
                    "- **MQA**: {mqa} ({heads}× smaller)",
                    layers=layers,
                    heads=heads,
                    d_head=d_head,
                    d_model=heads * d_head,
                    context=num(context, ","),
                    itemsize=DTYPE_BYTES[dtype],
                    mha=bytes_text(mha.nbytes),
                    group=heads // kv,
                    gqa=bytes_text(gqa.nbytes),
                    mqa=bytes_text(mqa.nbytes),
                )
            )
            st.caption(formula_check(kinds, int(heads)))


def formula_check(kinds: list[CacheKind], n_heads: int) -> str:
    """What the formula gives against the bytes of real caches of each kind in `kinds` (of n_heads query heads),
    run on REAL_TOKENS tokens: one line for MHA, GQA and MQA, or for two caches when GQA's is MHA's."""
    real = {kind.n_kv_heads: real_cache(n_heads, kind.n_kv_heads, REAL_D_HEAD) for kind in kinds}
    held = [
        dict(size=num(measured_bytes, ","), formula=num(formula_bytes, ","))
        for measured_bytes, formula_bytes in real.values()
    ]
    if len(held) == 3:
        return tr(
            "The formula, checked on caches that exist: a 2-layer float32 model with these head counts and d_head "
            "{d_head}, run on {tokens} tokens, holds {mha} bytes (formula {mha_formula}), {gqa} bytes (formula "
            "{gqa_formula}), {mqa} bytes (formula {mqa_formula}) for MHA, GQA and MQA.",
            d_head=REAL_D_HEAD,
            tokens=REAL_TOKENS,
            mha=held[0]["size"],
            mha_formula=held[0]["formula"],
            gqa=held[1]["size"],
            gqa_formula=held[1]["formula"],
            mqa=held[2]["size"],
            mqa_formula=held[2]["formula"],
        )
    # GQA with as many kv heads as query heads is MHA: one cache for both
    return tr(
        "The formula, checked on caches that exist: a 2-layer float32 model with these head counts and d_head "
        "{d_head}, run on {tokens} tokens, holds {mha} bytes (formula {mha_formula}), {mqa} bytes (formula "
        "{mqa_formula}) for MHA, GQA and MQA.",
        d_head=REAL_D_HEAD,
        tokens=REAL_TOKENS,
        mha=held[0]["size"],
        mha_formula=held[0]["formula"],
        mqa=held[-1]["size"],
        mqa_formula=held[-1]["formula"],
    )
