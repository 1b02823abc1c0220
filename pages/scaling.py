"""Why divide by √d_k: measure the saturation and the vanishing gradient, then watch an unscaled model train badly."""

from dataclasses import replace

import pandas as pd
import streamlit as st

from attention.gradients import ATTENTION_BACKWARD_LATEX, SOFTMAX_BACKWARD_LATEX
from figures.scaling import (
    grad_norm_figure,
    jacobian_figure,
    loss_curves_figure,
    max_weight_figure,
    variance_figure,
    weights_by_d_k_figure,
)
from lessons.scaling import (
    JACOBIAN_LATEX,
    MAX_DRAWS,
    SCALED_LATEX,
    VARIANCE_LATEX,
    ScalingStats,
    jacobian_caption,
    max_weight_caption,
    one_sample_text,
    variance_caption,
)
from lessons.training import (
    LOSS_LATEX,
    ScalingComparison,
    TrainingConfig,
    compare_scaling,
    grad_norm_caption,
    verdict,
)
from lessons.training import MAX_D_K as MAX_TRAIN_D_K
from locales import marked, num, tr
from ui.background import queue_message, run_niced
from ui.charts import chart, show_snippet
from ui.classroom_open_question import answer_hidden, hidden_answer_card
from ui.declared.scaling import (
    MAX_SHOWN,
    STATE,
    STEPS_STEP,
    NotTrainedYet,
    measured,
)
from ui.number_box import number_box
from ui.shared_state import require_app_entry
from ui.snippets import scaling_snippet

require_app_entry()


# steps x d_k above which a training leaves the server process (ui/background.py): 300 steps at d_k 256 take
# about half a second of CPU; 1000 steps at d_k 1024 take 6.5 s, which the class's clicks must not wait behind
IN_PROCESS_BUDGET = 300 * 256
TRAINING = TrainingConfig()  # the task's sizes (context, vocabulary, batch) the page does not let one change


@st.cache_data(max_entries=64, show_spinner=False)
def stored_comparison(config: TrainingConfig, _result: ScalingComparison | None = None) -> ScalingComparison:
    """The comparison for `config` from st.cache_data, or `_result` stored under `config` (a leading
    underscore keeps an argument out of the cache key). Training runs outside any cached function so
    it can drive a progress bar: a cached function must not call st.* itself."""
    if _result is None:
        raise NotTrainedYet
    return _result


def train_with_progress(config: TrainingConfig) -> ScalingComparison:
    """The cached comparison, or train both runs now with a progress bar and cache them."""
    try:
        return stored_comparison(config)
    except NotTrainedYet:
        pass
    bar = st.progress(0.0, text=tr("Training…"))

    def on_step(done: int, total: int) -> None:
        if done % 10 == 0 or done == total:  # a message every step would cost more than the step
            step = (done - 1) % config.steps + 1
            text = (
                tr("Training the scaled run: step {step} of {steps}", step=step, steps=config.steps)
                if done <= config.steps
                else tr("Training the unscaled run: step {step} of {steps}", step=step, steps=config.steps)
            )
            bar.progress(done / total, text=text)

    if config.steps * config.d_k > IN_PROCESS_BUDGET:  # seconds of CPU: in a child, at the lowest priority

        def on_queue(place: int, slots: int) -> None:
            bar.progress(0.0, text=queue_message(place, slots))

        result = run_niced(compare_scaling, config, on_step, on_queue)
    else:
        result = compare_scaling(config, on_step=on_step)
    bar.empty()
    return stored_comparison(config, _result=result)


def numbers_table(stats: ScalingStats) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "d_k": stats.d_k,
            "Var(q·k) measured": stats.variance,
            "predicted (d_k)": stats.predicted_variance,
            "max weight unscaled": stats.max_weight_unscaled,
            "max weight scaled": stats.max_weight_scaled,
            "entropy unscaled": stats.entropy_unscaled,
            "entropy scaled": stats.entropy_scaled,
            "‖J‖ median unscaled": stats.jacobian_median_unscaled,
            "‖J‖ median scaled": stats.jacobian_median_scaled,
            "‖J‖ mean unscaled": stats.jacobian_norm_unscaled,
            "‖J‖ mean scaled": stats.jacobian_norm_scaled,
        }
    ).set_index("d_k")


def show_measurements(stats: ScalingStats, shown: list[int]) -> None:
    rows = [stats.index(d) for d in shown]
    if stats.n_keys == 1:
        st.info(
            tr(
                "With one key, its weight is 1 whatever the score: there is nothing to saturate, and the "
                "softmax Jacobian is exactly 0 (drawn at the bottom of its log axis)."
            )
        )
    st.markdown(one_sample_text(stats, shown))
    chart(
        st,
        weights_by_d_k_figure(
            shown, stats.example_unscaled[rows], stats.example_scaled[rows], stats.example_scores[rows]
        ),
        width="stretch",
        key="scaling_weights",
    )
    left, right = st.columns(2, gap="large")
    with left:
        chart(
            st,
            max_weight_figure(stats.d_k, stats.max_weight_unscaled, stats.max_weight_scaled, stats.n_keys),
            width="stretch",
            key="scaling_max_weight",
        )
        st.caption(max_weight_caption(stats))
    with right:
        chart(st, variance_figure(stats.d_k, stats.variance), width="stretch", key="scaling_variance")
        st.caption(variance_caption(stats))
    chart_col, note_col = st.columns([3, 2], gap="large")
    with chart_col:
        chart(
            st,
            jacobian_figure(
                stats.d_k,
                stats.jacobian_median_unscaled,
                stats.jacobian_median_scaled,
                stats.jacobian_norm_unscaled,
                stats.jacobian_norm_scaled,
            ),
            width="stretch",
            key="scaling_jacobian",
        )
    with note_col:
        st.latex(JACOBIAN_LATEX)
        st.caption(jacobian_caption(stats))
    st.markdown(
        tr(
            "**All the numbers** (entropy in nats; uniform weights have log n = {entropy}, one-hot weights 0)",
            entropy=num(stats.max_entropy, ".2f"),
        )
    )
    table = numbers_table(stats)
    st.dataframe(
        table,
        width="stretch",
        height=300,
        column_config={
            column: st.column_config.NumberColumn(
                tr(short), format="%.2e" if column.startswith("‖J‖") else "%.4g", width=84, help=tr(column)
            )
            for column, short in NUMBER_HEADERS.items()
        },
        key="scaling_numbers",
    )


# The table's columns (the DataFrame's own names stay English: they are a download's), with short headers so that
# all of them fit (the full name on hover); both translated where shown.
NUMBER_HEADERS = {
    marked("Var(q·k) measured"): "Var(q·k)",
    marked("predicted (d_k)"): "= d_k?",
    # Translators: short column headers of a narrow table (keep them short): "raw" is unscaled, "÷√d_k" scaled,
    # "max w" the largest weight, "H" the entropy, "med" the median
    marked("max weight unscaled"): marked("max w, raw"),
    marked("max weight scaled"): marked("max w, ÷√d_k"),
    marked("entropy unscaled"): marked("H, raw"),
    marked("entropy scaled"): "H, ÷√d_k",
    marked("‖J‖ median unscaled"): marked("‖J‖ med, raw"),
    marked("‖J‖ median scaled"): marked("‖J‖ med, ÷√d_k"),
    marked("‖J‖ mean unscaled"): marked("‖J‖ mean, raw"),
    marked("‖J‖ mean scaled"): marked("‖J‖ mean, ÷√d_k"),
}


def show_training(c: ScalingComparison) -> None:
    st.info(verdict(c))
    if c.config.d_k > 1:
        st.caption(
            tr(
                "One pair of runs at one setting: other learning rates, step counts and seeds give other numbers, "
                "and at some settings the unscaled run ends with the lower loss."
            )
        )
    cols = st.columns(4)
    cols[0].metric(tr("loss, scaled"), num(c.scaled.final_loss, ".3g"))
    cols[1].metric(tr("loss, unscaled"), num(c.unscaled.final_loss, ".3g"))
    cols[2].metric(tr("accuracy, scaled"), num(c.scaled.final_accuracy, ".1%"))
    cols[3].metric(tr("accuracy, unscaled"), num(c.unscaled.final_accuracy, ".1%"))
    left, right = st.columns(2, gap="large")
    with left:
        chart(st, loss_curves_figure(c.scaled.loss, c.unscaled.loss), width="stretch", key="scaling_loss")
        st.caption(
            tr(
                "The loss on each step's batch: same start, same batches, same learning rate; at d_k = 1 the 1/√d_k "
                "is 1, so the two curves are one."
            )
            if c.config.d_k == 1
            else tr(
                "The loss on each step's batch: same start, same batches, same learning rate; only the 1/√d_k differs."
            )
        )
    with right:
        chart(st, grad_norm_figure(c.scaled.grad_norm, c.unscaled.grad_norm), width="stretch", key="scaling_grad_norm")
        st.caption(grad_norm_caption(c))


STATE.load()

st.title(tr("Why divide by √d_k"))
st.markdown(
    tr(
        "Attention compares a query with every key by a dot product. If the components of q and k are independent "
        "with **mean 0** and variance 1, each of the d_k products $q_i k_i$ has mean 0 and variance "
        "$\\mathbb{E}[q_i^2]\\,\\mathbb{E}[k_i^2] = 1$, so their sum has variance d_k: the "
        "scores spread out as d_k grows, the softmax turns almost one-hot, and almost no gradient gets back through "
        "it. Dividing by √d_k brings the variance back to 1 at every d_k. Below, the claim is measured on random "
        "vectors, then tried on a model that learns."
    )
)
st.latex(VARIANCE_LATEX)  # the whole width: half of it is too narrow for the derivation at 1400 px
st.latex(SCALED_LATEX)
STATE.show_warnings()

st.header(tr("1. The claim, measured"))
shown = st.multiselect(
    tr("d_k to compare"),
    **STATE.widget("d_ks"),
    help=tr(
        "The d_k values drawn side by side in the first plot (up to {max_shown}). The curves always sweep every "
        "power of 2 from 1 to 4096.",
        max_shown=MAX_SHOWN,
    ),
)
keys_col, samples_col, seed_col = st.columns([3, 3, 1])
n_keys = keys_col.slider(
    tr("keys per query"),
    **STATE.widget("keys"),
    help=tr("How many keys each random query is compared with (the length of a softmax row)."),
)
n_samples = samples_col.select_slider(
    tr("samples per d_k"),
    **STATE.widget("samples"),
    help=tr(
        "How many random (q, K) draws each average is taken over: keys × samples at most {max_draws}, so that "
        "one measurement stays a matter of seconds.",
        max_draws=num(MAX_DRAWS, ","),
    ),
)
STATE.notes(samples_col, ("samples",))
seed = number_box(
    seed_col,
    # Translators: the seed of a random number generator
    tr("seed"),
    **STATE.widget("seed"),
    help=tr("Seed of the random draws here and in the training below: same seed, same numbers."),
)
try:
    stats = measured(n_keys, n_samples, seed)
except ValueError as err:
    st.error(tr("Cannot measure: {error}", error=err))
else:
    if answer_hidden("scaling"):
        hidden_answer_card(st, tr("What the measurements show (the weights, the largest weight, the table)"))
    elif shown:
        show_measurements(stats, sorted(shown))
    else:
        st.warning(tr("Pick at least one d_k to compare."))

st.header(tr("2. One layer trained with and without 1/√d_k"))
st.markdown(
    tr(
        "A single attention layer learns to **retrieve**. Each example is a query token and a context of "
        "{n_context} distinct tokens (out of {vocab}), one of which is the query token; the answer is "
        "that token's value vector, so the layer must put its attention on that one position. It learns W_q and W_k "
        "(the embeddings and values stay fixed). Both runs start from the same weights, which give q and k components "
        "of expected variance 1, see the same batches and take plain gradient-descent steps with the same learning "
        "rate; the only difference is the 1/√d_k.",
        n_context=TRAINING.n_context,
        vocab=TRAINING.vocab,
    )
)
st.latex(LOSS_LATEX)
with st.expander(tr("The backward pass, written by hand")):
    st.markdown(
        tr(
            "The gradient of the loss reaches W_q and W_k only through the softmax, whose Jacobian "
            "diag(p) − p pᵀ is nearly 0 when p is nearly one-hot:"
        )
    )
    st.latex(SOFTMAX_BACKWARD_LATEX)
    st.latex(ATTENTION_BACKWARD_LATEX)
    st.caption(
        tr(
            "attention/gradients.py implements exactly these lines; the tests check them against centred "
            "finite differences in float64."
        )
    )
train_col, lr_col, steps_col = st.columns(3)
train_d_k = train_col.select_slider(
    tr("d_k for training"),
    **STATE.widget("train_d_k"),
    help=tr("The width of q and k in the layer being trained (up to {max_d_k}).", max_d_k=MAX_TRAIN_D_K),
)
lr = lr_col.select_slider(
    tr("learning rate"),
    **STATE.widget("lr"),
    help=tr("The step size of plain gradient descent, the same for both runs."),
)
steps = steps_col.slider(
    tr("steps"),
    step=STEPS_STEP,
    **STATE.widget("steps"),
    help=tr("Gradient-descent steps per run, each on a fresh batch of {batch} examples.", batch=TRAINING.batch),
)
try:
    comparison = train_with_progress(replace(TRAINING, d_k=train_d_k, steps=steps, lr=lr, seed=seed))
except ValueError as err:
    st.error(tr("Cannot train: {error}", error=err))
else:
    show_training(comparison)

show_snippet(scaling_snippet(n_keys=n_keys, n_samples=n_samples, seed=seed, train_d_k=train_d_k, lr=lr, steps=steps))
