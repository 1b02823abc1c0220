"""Section 5 of "Watch an induction head form" (pages/induction.py): your own sequence. The letters and the number
of new letters, the model's greedy continuation, and every head's weights and scores on your letters and what it
added (a card instead while the class answers where a head attends)."""

import streamlit as st

from attention.decoder import generate
from figures.induction import every_head_figure
from lessons.induction import InductionRun, check_input_fits, heads_on_continuation, ids_to_letters, letters_to_ids
from locales import sentence_space, tr
from ui.charts import chart
from ui.classroom_open_question import answer_hidden, hidden_answer_card
from ui.declared.induction import MAX_TEXT, STATE
from ui.number_box import number_box
from ui.safe_text import escape_markdown


def own_sequence_section(run: InductionRun) -> tuple[str, int]:
    """The section under its header, on the run shown; returns the letters typed and the number of new letters
    asked for (the page's code snippet repeats them)."""
    st.markdown(
        tr(
            "Type letters (spaces are ignored) that repeat something; the model continues greedily, one letter at a "
            "time. Its induction head should look, at each step, at the letter after the earlier copy."
        )
    )
    text_col, new_col = st.columns([4, 1])
    text = text_col.text_input(
        tr("Your letters"),
        **STATE.widget("text"),
        max_chars=MAX_TEXT,
        help=tr("Letters a to z. Repeat a stretch of them (e.g. 'q w e r t y q w') and see whether the model goes on."),
    )
    n_new = number_box(new_col, tr("New letters"), **STATE.widget("n_new"), help=tr("How many letters the model adds."))
    STATE.notes(names=("n_new",))
    try:
        prompt = letters_to_ids(text)
        check_input_fits(prompt.size, int(n_new), run.params.config)
    except ValueError as err:
        st.error(escape_markdown(tr("Cannot complete this: {error}.", error=err)))
    else:
        continuation(run, prompt, int(n_new))
    return text, int(n_new)


def continuation(run: InductionRun, prompt, n_new: int) -> None:
    """The model's continuation of `prompt` (letter ids, shape (n,)) by `n_new` letters, and every head on it."""
    completed = generate(run.params, prompt, n_new)
    letters = ids_to_letters(completed)
    shown = " ".join(letters[: prompt.size])  # letters a to z only: nothing to escape
    new = " ".join(f"**{x}**" for x in letters[prompt.size :])
    if answer_hidden("induction", "attend"):
        hidden_answer_card(st, tr("The model's continuation and its heads' weights on your letters"))
        return
    st.markdown(f"#### {shown} → {new}")
    inputs, attentions, previous, induction = heads_on_continuation(run.params, completed)
    chart(st, every_head_figure(attentions, inputs, previous, induction), key="induction_own_grid")
    st.caption(
        tr("Every head on your letters and the model's continuation (the last new letter is never fed back).")
        + sentence_space()
        + (
            tr("No letter repeats, so there is no induction to score, and nothing for the induction head to find.")
            if induction is None
            else tr("The induction score counts each repeated letter's weight on the letter after its earlier copy.")
        )
    )
