"""Predict, then check: guess which key each query attends to most, then reveal the weights and the score."""

import streamlit as st

from attention import attention_steps
from figures.geometry import arrows_figure
from figures.predict import guess_heatmap
from lessons.puzzles import PREDICT_LATEX, PUZZLES_BY_ID, Puzzle, custom_puzzle, score_guesses
from locales import tr, tr_n
from ui.charts import chart, show_snippet
from ui.checks import outcome_box
from ui.classroom_open_question import asked_here
from ui.declared.predict import CHOICES, OWN, STATE
from ui.number_box import forget_number, number_box
from ui.page_state import stop
from ui.safe_text import escape_markdown
from ui.sequence_editor import editor_box, reset_sequence, sequence_editor
from ui.shared_state import SEQUENCE_KEY, require_app_entry
from ui.snippets import attention_snippet
from ui.tables import show_vectors

require_app_entry()

EDIT_KEY = STATE.key("seq")


def title_of(choice: str) -> str:
    return tr("Make your own (from the Playground)") if choice == OWN else tr(PUZZLES_BY_ID[choice].title)


def hide_reveal() -> None:
    """Start a fresh round: new (empty) guess widgets, heatmap hidden."""
    old_round = f"predict_weight_{st.session_state.get('predict_round', 0)}_"
    for key in [k for k in map(str, st.session_state) if k.startswith(old_round) and not k.endswith("_box")]:
        forget_number(key)  # the old round's weight boxes are never drawn again
    st.session_state["predict_round"] = st.session_state.get("predict_round", 0) + 1
    st.session_state.pop("predict_revealed", None)


def on_puzzle_change() -> None:
    if STATE["puzzle"] == OWN:
        reset_sequence(EDIT_KEY, st.session_state[SEQUENCE_KEY])
    hide_reveal()


def copy_playground() -> None:
    reset_sequence(EDIT_KEY, st.session_state[SEQUENCE_KEY])
    hide_reveal()


def fingerprint(p: Puzzle) -> tuple:
    """What the reveal belongs to: another puzzle, or edited vectors, hide it again."""
    return p.id, p.seq.tokens, p.seq.q.tobytes(), p.seq.q.shape, p.seq.k.tobytes(), p.seq.k.shape


STATE.load()
st.session_state.setdefault("predict_round", 0)
st.title(tr("Predict, then check"))
st.markdown(
    tr(
        "Before you look at a heatmap, say what it will show. For every **query** below, pick the **key** you expect "
        "to get the largest weight (and, if you like, guess that weight). Only then press **Check my guesses**: the "
        "page draws the weights, scores your guesses and explains every miss with the actual dot products."
    )
)
st.info(
    tr(
        "**The rule of this lesson:** if you cannot predict the output, you are testing nothing. A test is a "
        "prediction written down before the run."
    ),
    icon=":material/target:",
)
st.latex(PREDICT_LATEX)
st.caption(
    tr(
        "The softmax never changes the order within a row: the largest dot product always gets the largest "
        "weight. Scaling by 1/√d_k changes how large that weight is, not which key gets it."
    )
)
STATE.show_warnings()

choice = st.selectbox(
    tr("Puzzle"),
    CHOICES,
    format_func=title_of,
    key=STATE.key("puzzle"),
    on_change=on_puzzle_change,
    persist_state="session",
    disabled=STATE.held,
    help=tr(
        "Built-in puzzles get harder from 1 to 5. 'Make your own' copies the Playground's "
        "vectors, which you can then edit here."
    ),
)
if choice == OWN:
    if STATE.held:
        seq = st.session_state[EDIT_KEY]  # the class's question is about these: they cannot change until the reveal
    else:
        st.button(
            tr("Copy the Playground's vectors again"),
            key="predict_copy",
            on_click=copy_playground,
            help=tr("Replace the vectors below with the Playground's current ones (your guesses are cleared)."),
        )
        st.markdown(tr("**Your vectors** (the same editor as the Playground's: change them here, then predict again)"))
        with editor_box(tr("Edit the sequence: q, k, v and labels")):
            seq = sequence_editor(EDIT_KEY, presets=False)
    try:
        puzzle = custom_puzzle(seq)
    except ValueError as err:
        st.error(tr("These vectors cannot be used: {error}", error=err))
        stop()
else:
    puzzle = PUZZLES_BY_ID[choice]
with st.expander(tr("Hint")):
    st.markdown(tr(puzzle.hint))

n = len(puzzle.seq.tokens)
key_names = [f"k_{j} '{tok}'" for j, tok in enumerate(puzzle.seq.tokens)]
rnd = st.session_state["predict_round"]
guess_keys = [f"predict_guess_{rnd}_{n}_{i}" for i in range(n)]
weight_keys = [f"predict_weight_{rnd}_{n}_{i}" for i in range(n)]
# While the class answers a question about this puzzle, the page's own check waits for the teacher's reveal.
class_asks = (asked_here() or {}).get("page") == "predict"
revealed = (
    not class_asks
    and st.session_state.get("predict_revealed") == fingerprint(puzzle)
    and all(st.session_state.get(k) is not None for k in guess_keys)
)

left, right = st.columns([5, 4], gap="large")
with left:
    st.subheader(tr("The vectors"))
    st.markdown(
        tr(
            "Each position's **query** q_i (its components in columns q1, q2…) and **key** k_i (k1, k2…), one row "
            "per position i"
        ),
        help=tr("A query is what its position looks for; a key, what its position offers to be found by."),
    )
    show_vectors(st, puzzle.seq.tokens, numbered=True, q=puzzle.seq.q, k=puzzle.seq.k)
    if puzzle.seq.q.shape[1] == 2:
        with st.expander(tr("Draw them as arrows (d_k = 2)")):
            chart(
                st,
                arrows_figure(puzzle.seq.q, puzzle.seq.k, puzzle.seq.tokens, height=360),
                width="stretch",
                key="predict_arrows",
            )

    st.subheader(tr("Your prediction"))
    for i, tok in enumerate(puzzle.seq.tokens):
        guess_col, weight_col = st.columns([3, 2], vertical_alignment="bottom")
        guess_col.selectbox(
            tr("q_{position} '{token}' attends most to", position=i, token=escape_markdown(tok)),
            range(n),
            index=None,  # a label is markdown
            format_func=lambda j: key_names[j],
            key=guess_keys[i],
            placeholder=tr("pick a key"),
            disabled=revealed,
            help=tr("Which key gets the largest weight in row {row}? Compare q_{row} with every key.", row=i),
        )
        number_box(
            weight_col,
            tr("its weight (optional)"),
            key=weight_keys[i],
            min_value=0.0,
            max_value=1.0,
            optional=True,
            # Translators: an example of what to type in a number box, as the language writes numbers (0,7 in Spanish)
            placeholder=tr("e.g. 0.7"),
            disabled=revealed,
            help=tr("Optional: your guess of that largest weight."),
        )
    guesses = [st.session_state.get(k) for k in guess_keys]
    missing = sum(g is None for g in guesses)
    if revealed:
        st.button(
            tr("Try again"),
            key="predict_again",
            on_click=hide_reveal,
            icon=":material/replay:",
            help=tr("Clear your guesses and hide the weights again."),
        )
    else:
        st.button(
            tr("Check my guesses"),
            key="predict_reveal",
            type="primary",
            disabled=missing > 0 or class_asks,
            icon=":material/visibility:",
            on_click=lambda: st.session_state.update(predict_revealed=fingerprint(puzzle)),
            help=tr("Show the weights and score your guesses (unlocked once every query has a guess)."),
        )
        if class_asks:
            number = asked_here().get("number")
            st.caption(
                tr(
                    "Your own check waits for the class's: it opens once the teacher reveals the answer to question "
                    "{number}.",
                    number=number,
                )
                if number
                else tr(
                    "Your own check waits for the class's: it opens once the teacher reveals the answer (and the "
                    "class's connection is back)."
                )
            )
        elif missing:
            st.caption(
                tr_n(
                    "Pick a key for {n} more query to unlock the check.",
                    "Pick a key for {n} more queries to unlock the check.",
                    missing,
                    n=missing,
                )
            )

with right:
    st.subheader(tr("The check"))
    if not revealed:
        st.info(
            tr("The weights stay hidden until the teacher reveals the class's answer.")
            if class_asks
            else tr(
                "The weights stay hidden until you have made a guess for every query and pressed **Check my guesses**."
            ),
            icon=":material/visibility_off:",
        )
    else:
        try:
            steps = attention_steps(puzzle.seq.q, puzzle.seq.k, puzzle.seq.v)
            results = score_guesses(
                steps.weights,
                guesses,
                [st.session_state.get(k) for k in weight_keys],
                steps.scores,
                [escape_markdown(t) for t in puzzle.seq.tokens],
            )  # for st.error
        except ValueError as err:
            st.error(tr("Cannot score this puzzle: {error}", error=err))
            stop()
        right_count = sum(r.correct for r in results)
        st.metric(
            tr("Your score"),
            f"{right_count} / {n}",
            help=tr("A query counts as right if your key gets the largest weight (on a tie, any of the tied keys)."),
        )
        chart(
            st,
            guess_heatmap(
                steps.weights,
                puzzle.seq.tokens,
                guesses,
                [r.correct for r in results],
                scores=steps.scores,
                scale_factor=steps.scale_factor,
            ),
            width="stretch",
            key="predict_heatmap",
        )
        st.caption(tr("Rows are queries, columns keys; your guess is boxed. Hover a cell for q·k and the weight."))
        for r in results:
            label = escape_markdown(puzzle.seq.tokens[r.query])
            outcome_box(st, r.correct, f"**q_{r.query} '{label}'**: {r.explanation}")
        st.info(tr(puzzle.lesson), icon=":material/lightbulb:")
        show_snippet(
            attention_snippet(puzzle.seq.tokens, puzzle.seq.q, puzzle.seq.k, puzzle.seq.v, causal=False, scale=True)
        )
