"""Watch an induction head form: a 2-layer attention-only decoder, trained by our own numpy code, learns to
continue repeated random tokens; its loss, its heads' patterns over training, their scores, and your sequence."""

from ui.shared_state import require_app_entry

require_app_entry()

import numpy as np
import pandas as pd
import streamlit as st

from attention.adam import ADAM_LATEX, BETA1, BETA2, largest_step
from attention.decoder import DECODER_LATEX
from attention.decoder_backward import CROSS_ENTROPY_LATEX
from figures.induction import (
    accuracy_by_position_figure,
    every_head_figure,
    filmstrip_figure,
    head_names,
    letter_labels,
    scores_figure,
)
from lessons.induction import (
    INDUCTION_LATEX,
    PREVIOUS_TOKEN_LATEX,
    ROLE_THRESHOLD,
    SCORE_SEQUENCES,
    InductionConfig,
    chance_loss,
    checkpoint_index,
    first_half_floor,
    first_half_verdict,
    formation_rise,
    head_role,
    ids_to_letters,
    nearest_checkpoint,
    strip_indices,
)
from locales import num, sentence_space, tr
from ui.charts import chart, show_snippet
from ui.classroom_open_question import answer_hidden, hidden_answer_card
from ui.declared.induction import STATE
from ui.induction_losses import losses_section
from ui.induction_own import own_sequence_section
from ui.induction_training import (
    keep_model_truthful,
    measured,
    request_training,
    shipped_run,
    stored_run,
    train_with_progress,
    training_requested,
)
from ui.number_box import number_box
from ui.snippets import induction_snippet


def show_scores(previous: np.ndarray, induction: np.ndarray, *, key: str) -> None:
    """The per-head score table. Shapes: previous, induction (layers, heads)."""
    # Translators: a column header: the name of an attention head (L1 H1...)
    head, previous_score, induction_score = tr("head"), tr("previous-token score"), tr("induction score")
    table = pd.DataFrame(
        {
            head: head_names(*previous.shape),
            previous_score: previous.reshape(-1),
            induction_score: induction.reshape(-1),
            tr("what it does"): [head_role(p, i) for p, i in zip(previous.reshape(-1), induction.reshape(-1))],
        }
    ).set_index(head)
    number = st.column_config.NumberColumn(format="%.3f")
    st.dataframe(
        table,
        key=key,
        column_config={previous_score: number, induction_score: number},
    )


def keep_step_on_a_checkpoint(run) -> str | None:
    """Put the shown step on one of this run's checkpoints (before its slider is drawn); say so if it moved."""
    before, nearest = STATE["at"], nearest_checkpoint(run.checkpoint_steps, STATE["at"])
    if nearest == before:
        return None
    STATE.set("at", nearest)
    return tr(
        "Step {step} is not one of this run's checkpoints (every {every} steps); showing step {nearest}.",
        step=before,
        every=run.config.checkpoint_every,
        nearest=nearest,
    )


STATE.load()

st.title(tr("Watch an induction head form"))
st.markdown(
    tr(
        "A language model predicts the next token from the ones before. Here is a task where that is only possible "
        "by **looking back**: sequences of random letters whose second half repeats the first "
        "(Olsson et al. 2022, *In-context learning and induction heads*). The first half cannot be predicted: every "
        "letter is fresh. The second half can, by one trick: at a letter's second occurrence, find its first "
        "occurrence and read **the letter after it**. A single attention layer cannot do that. Two can: a "
        "**previous-token head** in layer 1 writes *the letter before me* into each position, and an **induction "
        "head** in layer 2 looks for the position whose previous letter is the current one and copies what is "
        "there."
    )
)
STATE.show_warnings()
st.latex(DECODER_LATEX)
st.latex(CROSS_ENTROPY_LATEX)
shipped_config = shipped_run().config
st.caption(
    tr(
        "The model: {letters} letters, d_model = {d_model} (the number of entries in every token's vector), two "
        "layers of {heads} causal attention heads each, learned positions, no MLP (the feed-forward layer of a full "
        "block) and no layer norm (attention/decoder.py). E is the token embedding table (one row per letter), P the "
        "position table, W_U the unembedding that turns the last vector into one logit (a score before the softmax) "
        "per letter. Trained on every next-token prediction with Adam (the optimiser, at the foot of the page), "
        "gradients by the hand-written backward pass in attention/decoder_backward.py (checked against finite "
        "differences in the tests); w_i weighs each prediction in the loss, and here every w_i = 1.",
        letters=shipped_config.vocab_size,
        d_model=shipped_config.d_model,
        heads=shipped_config.n_heads,
    )
)

st.header(tr("1 · The model: shipped, or trained by you"))
model_note = keep_model_truthful(STATE)
model_col, seed_col, steps_col, button_col = st.columns([3, 2, 2, 2], vertical_alignment="bottom")
model_names = {"shipped": tr("the shipped model"), "yours": tr("the one you train")}
model_choice = model_col.radio(
    tr("Model shown below"),
    format_func=model_names.get,
    horizontal=True,
    **STATE.widget("model"),
    help=tr(
        "The shipped model was trained by scripts/train_induction.py (seed {seed}, {steps} steps) and opens "
        "instantly. 'The one you train' is trained live here, on this server, with the seed and steps beside.",
        seed=shipped_config.seed,
        steps=shipped_config.steps,
    ),
)
seed = number_box(
    seed_col,
    tr("Training seed"),
    **STATE.widget("seed"),
    help=tr("Seeds the starting weights and every training batch: same seed, same model."),
)
steps = steps_col.select_slider(
    # Translators: "Steps" is a noun: the number of training steps
    tr("Steps"),
    **STATE.widget("steps"),
    help=tr(
        "Adam steps of {batch} sequences each. The shipped model's {steps} took {seconds} s on one core; here a "
        "training runs in the background, at the lowest priority, so the class's clicks come first. Stay on this "
        "page until it is done: leaving it cancels the training.",
        batch=shipped_config.batch,
        steps=shipped_config.steps,
        seconds=num(shipped_run().seconds, ".0f"),
    ),
)
button_col.button(
    tr("Train it yourself"),
    key="induction_train",
    icon=":material/model_training:",
    on_click=request_training,
    args=(STATE,),
    help=tr("Train a fresh model with this seed for this many steps, live, with a progress bar."),
)
config = InductionConfig(seed=int(seed), steps=int(steps))
if training_requested():
    trained = train_with_progress(config)
    st.success(
        tr(
            "Trained {steps} steps (seed {seed}) in {seconds} s. Everything below now shows it.",
            steps=config.steps,
            seed=config.seed,
            seconds=num(trained.seconds, ".1f"),
        )
    )
run, run_key = shipped_run(), ("shipped",)
if model_note:
    st.info(model_note, icon=":material/model_training:")
if model_choice == "yours":
    run, run_key = stored_run(config), ("yours", config)
else:
    st.caption(
        tr(
            "The shipped model took {seconds} s to train on one core (scripts/train_induction.py).",
            seconds=num(run.seconds, ".1f"),
        )
    )
evaluation = measured(run_key, run)
vocab, probe_half = run.config.vocab_size, evaluation.half
chance = chance_loss(vocab)

checkpoint_note = keep_step_on_a_checkpoint(run)  # before the loss chart marks it and the slider shows it

st.header(tr("2 · The loss on each half"))
losses_section(run, chance, probe_half)  # chance and the floor, how fast it falls, the curves, the last losses

st.header(tr("3 · The heads' patterns during training"))
st.markdown(
    tr(
        "Every head's attention on the same sequence (its letters twice) at a few checkpoints around the moment "
        "the induction head forms. Rows are queries, columns keys. A **previous-token head** is a stripe just below "
        "the diagonal; an **induction head** is a stripe in the lower-left block, one step right of the diagonal "
        "there: from each letter's second occurrence onto the letter after its first. On this page the names rest "
        "on where a head **looks** alone: Olsson et al. (2022) also require an induction head to **copy**, to raise "
        "the logit of the letter it attends to, which this page does not measure (section 4's accuracy on the "
        "repeated half is what shows the copying of the model as a whole)."
    )
)
probe_labels = letter_labels(run.probe[:-1])
strip = strip_indices(run.induction)
chart(
    st,
    filmstrip_figure(run.attentions[strip], run.checkpoint_steps[strip], probe_labels),
    key="induction_filmstrip",
)
st.caption(
    tr(
        "The probe sequence is {letters} (a fresh one, never trained on). Columns: steps {steps}.",
        letters=" ".join(ids_to_letters(run.probe[:-1])),
        steps=", ".join(str(int(run.checkpoint_steps[i])) for i in strip),
    )
)
st.markdown(
    tr(
        "**Any checkpoint, larger.** Move through training and watch the stripes sharpen. Each head gets two "
        "scores, the mean weight it puts where each role would look:"
    )
)
st.latex(PREVIOUS_TOKEN_LATEX)
st.latex(INDUCTION_LATEX)
at = st.select_slider(
    tr("Training step"),
    options=[int(s) for s in run.checkpoint_steps],
    key=STATE.key("at"),
    persist_state="session",
    help=tr("One of the checkpoints kept every {every} steps while training.", every=run.config.checkpoint_every),
)
if checkpoint_note:
    st.caption(checkpoint_note)
k = checkpoint_index(run.checkpoint_steps, at)
chart(
    st,
    every_head_figure(run.attentions[k], run.probe[:-1], run.previous_token[k], run.induction[k]),
    key="induction_grid",
    share=0.5,
)
st.caption(
    tr(
        "Every head at step {step} on the probe sequence. The scores in the titles and the table are averaged over "
        "{sequences} fixed sequences of 2 × {half} letters; 1 is perfect.",
        step=at,
        sequences=SCORE_SEQUENCES,
        half=run.config.probe_half,
    )
)
show_scores(run.previous_token[k], run.induction[k], key="induction_checkpoint_scores")
chart(st, scores_figure(run.checkpoint_steps, run.previous_token, run.induction), key="induction_scores")
if (grew := formation_rise(run)) is not None:
    rise = tr(
        "Around the induction head's formation, from step {before} to step {after}, layer 1's best previous-token "
        "score goes from {previous_before} to {previous_after} and layer 2's best induction score from "
        "{induction_before} to {induction_after}. The two rise together because an induction head matches the "
        "current letter against what a previous-token head wrote into each position: it has nothing to find before "
        "that head forms.",
        before=grew.step_before,
        after=grew.step_after,
        previous_before=num(grew.previous_before, ".2f"),
        previous_after=num(grew.previous_after, ".2f"),
        induction_before=num(grew.induction_before, ".2f"),
        induction_after=num(grew.induction_after, ".2f"),
    )
else:
    rise = tr(
        "In this run no head's induction score passed {threshold}: try more steps.", threshold=num(ROLE_THRESHOLD, "g")
    )
st.caption(tr("Both scores of every head at every checkpoint.") + sentence_space() + rise)

st.header(tr("4 · The trained model, measured"))
st.markdown(
    tr(
        "On {sequences} fresh sequences of 2 × {half} letters (drawn from a seed no training batch used): the top-1 "
        "accuracy of each prediction (how often the letter given the highest probability is the right one), and "
        "the scores of every head.",
        sequences=evaluation.n_sequences,
        half=evaluation.half,
    )
)
if answer_hidden("induction", "accuracy"):
    hidden_answer_card(st, tr("The model's accuracy and loss on each half"))
else:
    cols = st.columns(4)
    cols[0].metric(
        tr("accuracy, first half"),
        num(evaluation.accuracy_first, ".1%"),
        help=tr("Chance is 1/{vocab} = {chance}.", vocab=vocab, chance=num(1 / vocab, ".1%")),
    )
    cols[1].metric(tr("accuracy, repeated half"), num(evaluation.accuracy_repeated, ".1%"))
    cols[2].metric(
        tr("loss, first half"),
        num(evaluation.loss_first, ".2f"),
        help=tr(
            "Chance: log {vocab} = {chance} nats; the floor for distinct letters: {floor}.",
            vocab=vocab,
            chance=num(chance, ".2f"),
            floor=num(first_half_floor(vocab, probe_half), ".2f"),
        ),
    )
    cols[3].metric(tr("loss, repeated half"), num(evaluation.loss_repeated, ".2f"))
    chart(
        st,
        accuracy_by_position_figure(evaluation.by_position, evaluation.half, 1 / run.config.vocab_size),
        key="induction_accuracy",
    )
    st.caption(
        first_half_verdict(evaluation, vocab, (run.config.half_min, run.config.half_max))
        + sentence_space()
        + tr("The grey bar is the prediction of where the repeat starts, counted in neither half.")
    )
show_scores(evaluation.previous_token, evaluation.induction, key="induction_final_scores")

st.header(tr("5 · Your own sequence"))
text, n_new = own_sequence_section(run)  # the letters, the model's continuation, its heads on them

show_snippet(induction_snippet(model=run_key[0], seed=int(seed), steps=int(steps), text=text, n_new=n_new))
with st.expander(tr("How it was trained: Adam")):
    st.latex(ADAM_LATEX)
    st.caption(
        tr(
            "attention/adam.py, after Kingma & Ba (2015), *Adam: a method for stochastic optimization*: each "
            "parameter's step is usually about lr at most, whatever the size of its gradient, and never more than "
            "lr·(1 − β₁)/√(1 − β₂) = {largest}·lr with this code's β₁ = {beta1}, β₂ = {beta2} (their section 2.1); "
            "smaller where the gradient is noisy, its sign changing from step to step.",
            largest=num(largest_step(), ".1f"),
            beta1=num(BETA1, "g"),
            beta2=num(BETA2, "g"),
        )
    )
