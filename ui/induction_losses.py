"""Section 2 of "Watch an induction head form" (pages/induction.py): the loss on each half. What chance and the
first half's floor are, how fast the repeated half's loss falls in this run, the two loss curves with the shown
checkpoint marked, the losses the run ends with and the step at which an induction head first appears. The curves
and the numbers give way to a card while the class answers how often the model's top guess is right."""

import streamlit as st

from figures.induction import loss_halves_figure
from lessons.induction import (
    END_STEPS,
    FALL_WINDOW,
    ROLE_THRESHOLD,
    InductionRun,
    final_losses,
    first_half_floor,
    formation_index,
    loss_fall,
)
from locales import num, tr
from ui.charts import chart
from ui.classroom_open_question import answer_hidden, hidden_answer_card
from ui.declared.induction import STATE


def losses_section(run: InductionRun, chance: float, probe_half: int) -> None:
    """The section under its header, for the run shown (`chance`: the loss of a uniform guess, log V; `probe_half`:
    the length of the half the page measures the model on). Reads the shown checkpoint, STATE["at"], which the
    page has already put on one of this run's checkpoints."""
    vocab = run.config.vocab_size
    losses_intro = tr(
        "Each training step's batch is scored on its two halves separately, in **nats** (the loss measured with the "
        "natural logarithm). A uniform guess over V = {vocab} letters costs log {vocab} = {chance} nats. The first "
        "half can do a little better, but not much: its letters are distinct, so a model that knew that would "
        "spread its guess over the letters not yet seen, and the best it can reach is the mean of log({vocab} − i) "
        "over the half's positions, {floor} nats for {half} letters, if it also knew where the half ends. This one "
        "cannot: it was trained on halves of {shortest} to {longest} letters, so the repeat may start at any step "
        "(section 4 shows what it makes of that).",
        vocab=vocab,
        chance=num(chance, ".2f"),
        floor=num(first_half_floor(vocab, probe_half), ".2f"),
        half=probe_half,
        shortest=run.config.half_min,
        longest=run.config.half_max,
    )
    # how far it falls says nearly how often the top guess is right: hidden while the class answers that
    if hide_losses := answer_hidden("induction", "accuracy"):
        losses_fall = tr("The repeated half sits near the first until the two heads click together, then falls.")
    elif (fall := loss_fall(run.loss_repeated, chance)) is not None:
        losses_fall = tr(
            "The repeated half sits near the first until the two heads click together, then falls: in this run from "
            "90% of chance to 10% of it in {fall_steps} steps (steps {fall_start} to {fall_end}, each a mean over "
            "{window} steps).",
            fall_steps=fall[1] - fall[0],
            fall_start=fall[0],
            fall_end=fall[1],
            window=FALL_WINDOW,
        )
    else:
        losses_fall = tr(
            "The repeated half sits near the first until the two heads click together, then falls: in this run it "
            "never reaches 10% of chance: try more steps."
        )
    st.markdown(f"{losses_intro} {losses_fall}")
    if hide_losses:
        hidden_answer_card(st, tr("The loss curves of the two halves, and the last losses"))
    else:
        chart(st, loss_halves_figure(run.loss_first, run.loss_repeated, chance, step=STATE["at"]), key="induction_loss")
    losses_now = "" if hide_losses else end_losses(run, chance)
    formed_said = formation_said(run)
    st.caption(f"{losses_now} {formed_said}" if losses_now else formed_said)


def end_losses(run: InductionRun, chance: float) -> str:
    """The losses of both halves over the run's last END_STEPS steps, the first half's said above or below chance."""
    end_first, end_repeated = final_losses(run)
    end_values = dict(
        steps=END_STEPS, first=num(end_first, ".2f"), chance=num(chance, ".2f"), repeated=num(end_repeated, ".2f")
    )
    if end_first > chance:
        return tr(
            "Over the last {steps} steps: first half {first} nats (above chance, {chance}; section 4 says why), "
            "repeated half {repeated}.",
            **end_values,
        )
    return tr(
        "Over the last {steps} steps: first half {first} nats (below chance, {chance}; section 4 says why), "
        "repeated half {repeated}.",
        **end_values,
    )


def formation_said(run: InductionRun) -> str:
    """The step of the first checkpoint at which a head's induction score passes ROLE_THRESHOLD, or that none did."""
    formed, threshold = formation_index(run.induction), num(ROLE_THRESHOLD, "g")
    if formed is None:
        return tr("No head reached an induction score of {threshold} in this run: try more steps.", threshold=threshold)
    return tr(
        "An induction score above {threshold} first appears at the checkpoint of step {step}.",
        threshold=threshold,
        step=int(run.checkpoint_steps[formed]),
    )
