"""The induction page's questions, about the model it shows (the shipped one, or one trained here: its declared
`model`, `seed` and `steps`):

- "attend": on the letters typed in section 5 (its declared `text`), where one head looks from one of them: the
  induction head, from a letter's second occurrence, on the letter after its first;
- "accuracy": how often the model's top guess is right on each half of fresh repeated sequences (section 4's
  measurement): the first half cannot be predicted, the repeated half can.

The true values are the page's own: the weights of its model on those letters (what section 5's grid draws), and its
cached measurement."""

from __future__ import annotations

import numpy as np

from attention.decoder import decoder_forward
from lessons.induction import InductionConfig, InductionRun, check_input_fits, ids_to_letters, letters_to_ids
from ui.classroom_questions import top_keys
from ui.page_questions import Pick, Question, ask_labels, key_options

SHAPE = InductionConfig().decoder  # every model the page shows has this shape (only the seed and steps vary)
ACCURACY_TOLERANCE = 0.05  # an answer this close to the measured share counts as right
HALVES = ("the first half (fresh letters)", "the repeated half")


def model_name(model: str, run: InductionRun) -> str:
    """The model the page shows, as a prompt names it."""
    which = "The shipped model" if model == "shipped" else "The model trained here"
    return f"{which} (seed {run.config.seed}, {run.config.steps} steps)"


def head_options() -> list[int]:
    """Every head as layer × n_heads + head, the last layer first (where the induction head is)."""
    layers = range(SHAPE.n_layers - 1, -1, -1)
    return [layer * SHAPE.n_heads + head for layer in layers for head in range(SHAPE.n_heads)]


def head_label(head: int) -> str:
    layer, h = divmod(head, SHAPE.n_heads)
    return f"L{layer + 1} H{h + 1} (layer {layer + 1}, head {h + 1})"


def typed_letters(text: str) -> list[str]:
    """The letters of `text` as the model reads them; none if it cannot (the page says why, and so does Ask)."""
    try:
        return ids_to_letters(letters_to_ids(text))
    except ValueError:
        return []


def attend(run: InductionRun, model: str, text: str, n_new: int, head: int, query: int) -> tuple[dict, list[int]]:
    """'From query i of your letters, which position does head L.H attend to most?' for the model of `run` on the
    letters of `text` (with `n_new` letters to add, as the page completes them), and its answer: every key of the
    largest weight (several on a tie). ValueError where the page shows no weights, or the query has no choice."""
    ids = letters_to_ids(text)
    check_input_fits(ids.size, n_new, run.params.config)
    n = ids.size
    if n < 2:
        raise ValueError("one letter has only itself to look at: type at least two letters to ask this")
    if not 1 <= query < n:
        raise ValueError(f"query {query} is outside 1..{n - 1}")
    layer, h = divmod(head, run.config.n_heads)
    if not 0 <= layer < run.params.config.n_layers:
        raise ValueError(f"head {head} is not one of the model's {run.params.config.n_layers * run.config.n_heads}")
    # causal: a query's weights depend on the letters up to it alone, so they are those of section 5's grid
    weights = decoder_forward(ids, run.params).attentions[layer, h, query, : query + 1]  # (query + 1,)
    letters = ids_to_letters(ids)
    earlier = [j for j in range(query) if ids[j] == ids[query]]
    seen = f"seen before at {earlier[-1]}" if earlier else "not seen before"
    prompt = (
        f"{model_name(model, run)} reads your letters '{' '.join(letters)}'. Head L{layer + 1} H{h + 1} (layer "
        f"{layer + 1}, head {h + 1}): from query {query} '{letters[query]}' ({seen}), which position does it "
        "attend to most?"
    )
    body = {
        "kind": "choice",
        "prompt": prompt,
        "options": key_options(letters[: query + 1]),
        "source": {"model": model, "seed": run.config.seed, "steps": run.config.steps, "text": " ".join(letters)},
    }
    return body, top_keys(np.asarray(weights, dtype=np.float64))


def accuracy(run: InductionRun, evaluation, model: str, repeated: bool) -> tuple[dict, float]:
    """'How often is the top guess right on this half?' for the model of `run` measured by `evaluation`
    (lessons.induction.Evaluation), and its true value: the share the page measured (0 to 1)."""
    vocab = run.config.vocab_size
    # the guess of where the repeat starts (the first repeated letter) is in neither half (lessons.induction's
    # half_weights): counted in the repeated half, it would pull its share down by about 1/half
    prompt = (
        f"{model_name(model, run)} on {evaluation.n_sequences} fresh sequences of {evaluation.half} random distinct "
        f"letters, then the same {evaluation.half} again: on {HALVES[int(repeated)]}, what share of its top guesses "
        f"of the next letter are right, 0 to 1? (The first repeated letter's guess is in neither half; at random: "
        f"1/{vocab}.)"
    )
    body = {
        "kind": "number",
        "prompt": prompt,
        "lo": 0.0,
        "hi": 1.0,
        "tolerance": ACCURACY_TOLERANCE,
        "source": {"model": model, "seed": run.config.seed, "steps": run.config.steps},
    }
    return body, float(evaluation.accuracy_repeated if repeated else evaluation.accuracy_first)


def questions(run_of, evaluation_of) -> tuple[Question, ...]:
    """`run_of(values)`: the run the page shows for its declared values; `evaluation_of(values)`: its cached
    measurement (both raise ValueError when the page shows none)."""

    def build_attend(values, picks):
        run = run_of(values)
        return attend(run, values["model"], values["text"], int(values["n_new"]), picks["head"], picks["query"])

    def build_accuracy(values, picks):
        return accuracy(run_of(values), evaluation_of(values), values["model"], bool(picks["half"]))

    def queries(values) -> range:
        return range(1, max(len(typed_letters(values["text"])), 2))  # never empty: `attend` says what is wrong

    def query_labels(values) -> list[str]:
        labels = ask_labels(typed_letters(values["text"]))[0][1:]
        return labels or ["q_1"]

    head = Pick("head", "Head", lambda v: head_options(), lambda v: [head_label(h) for h in head_options()])
    query = Pick("query", "Query", queries, query_labels)
    half = Pick("half", "Half", lambda v: [1, 0], lambda v: [HALVES[1], HALVES[0]])
    return (
        Question("attend", "Where does a head look from one of your letters?", build_attend, (head, query)),
        Question("accuracy", "How often is the model's top guess right on each half?", build_accuracy, (half,)),
    )
