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
from locales import marked, tr
from ui.classroom_questions import top_keys
from ui.page_questions import QUERY, Pick, Question, ask_labels, key_options, token_options

SHAPE = InductionConfig().decoder  # every model the page shows has this shape (only the seed and steps vary)
ACCURACY_TOLERANCE = 0.05  # an answer this close to the measured share counts as right
HALVES = (marked("the first half (fresh letters)"), marked("the repeated half"))

# The prompts, each variant a whole message, by (the shipped model or one trained here, and for "attend" whether the
# query's letter was seen before, for "accuracy" whether the repeated half is asked).
ATTEND_PROMPTS = {
    (True, True): marked(
        "The shipped model (seed {seed}, {steps} steps) reads your letters '{letters}'. Head L{layer} H{head} "
        "(layer {layer}, head {head}): from query {query} '{letter}' (seen before at {earlier}), which position "
        "does it attend to most?"
    ),
    (True, False): marked(
        "The shipped model (seed {seed}, {steps} steps) reads your letters '{letters}'. Head L{layer} H{head} "
        "(layer {layer}, head {head}): from query {query} '{letter}' (not seen before), which position does it "
        "attend to most?"
    ),
    (False, True): marked(
        "The model trained here (seed {seed}, {steps} steps) reads your letters '{letters}'. Head L{layer} "
        "H{head} (layer {layer}, head {head}): from query {query} '{letter}' (seen before at {earlier}), which "
        "position does it attend to most?"
    ),
    (False, False): marked(
        "The model trained here (seed {seed}, {steps} steps) reads your letters '{letters}'. Head L{layer} "
        "H{head} (layer {layer}, head {head}): from query {query} '{letter}' (not seen before), which position "
        "does it attend to most?"
    ),
}
ACCURACY_PROMPTS = {
    (True, False): marked(
        "The shipped model (seed {seed}, {steps} steps) on {n_sequences} fresh sequences of {length} random "
        "distinct letters, then the same {length} again: on the first half (fresh letters), what share of its top "
        "guesses of the next letter are right, 0 to 1? (The first repeated letter's guess is in neither half; at "
        "random: 1/{vocab}.)"
    ),
    (True, True): marked(
        "The shipped model (seed {seed}, {steps} steps) on {n_sequences} fresh sequences of {length} random "
        "distinct letters, then the same {length} again: on the repeated half, what share of its top guesses of the"
        " next letter are right, 0 to 1? (The first repeated letter's guess is in neither half; at random: "
        "1/{vocab}.)"
    ),
    (False, False): marked(
        "The model trained here (seed {seed}, {steps} steps) on {n_sequences} fresh sequences of {length} random "
        "distinct letters, then the same {length} again: on the first half (fresh letters), what share of its top "
        "guesses of the next letter are right, 0 to 1? (The first repeated letter's guess is in neither half; at "
        "random: 1/{vocab}.)"
    ),
    (False, True): marked(
        "The model trained here (seed {seed}, {steps} steps) on {n_sequences} fresh sequences of {length} random "
        "distinct letters, then the same {length} again: on the repeated half, what share of its top guesses of the"
        " next letter are right, 0 to 1? (The first repeated letter's guess is in neither half; at random: "
        "1/{vocab}.)"
    ),
}


def model_values(run: InductionRun) -> dict:
    """The model the page shows, as a prompt's values (which model it is picks the prompt's message)."""
    return {"seed": run.config.seed, "steps": run.config.steps}


def head_options() -> list[int]:
    """Every head as layer × n_heads + head, the last layer first (where the induction head is)."""
    layers = range(SHAPE.n_layers - 1, -1, -1)
    return [layer * SHAPE.n_heads + head for layer in layers for head in range(SHAPE.n_heads)]


def head_label(head: int) -> str:
    layer, h = divmod(head, SHAPE.n_heads)
    return tr("L{layer} H{head} (layer {layer}, head {head})", layer=layer + 1, head=h + 1)


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
        raise ValueError(tr("one letter has only itself to look at: type at least two letters to ask this"))
    if not 1 <= query < n:
        raise ValueError(f"query {query} is outside 1..{n - 1}")
    layer, h = divmod(head, run.config.n_heads)
    if not 0 <= layer < run.params.config.n_layers:
        raise ValueError(f"head {head} is not one of the model's {run.params.config.n_layers * run.config.n_heads}")
    # causal: a query's weights depend on the letters up to it alone, so they are those of section 5's grid
    weights = decoder_forward(ids, run.params).attentions[layer, h, query, : query + 1]  # (query + 1,)
    letters = ids_to_letters(ids)
    earlier = [j for j in range(query) if ids[j] == ids[query]]
    body = {
        "kind": "choice",
        "prompt": ATTEND_PROMPTS[model == "shipped", bool(earlier)],
        "values": {
            **model_values(run),
            "letters": " ".join(letters),
            "layer": layer + 1,
            "head": h + 1,
            "query": query,
            "letter": letters[query],
            **({"earlier": earlier[-1]} if earlier else {}),
        },
        **token_options(key_options(letters[: query + 1])),
        "source": {"model": model, "seed": run.config.seed, "steps": run.config.steps, "text": " ".join(letters)},
    }
    return body, top_keys(np.asarray(weights, dtype=np.float64))


def accuracy(run: InductionRun, evaluation, model: str, repeated: bool) -> tuple[dict, float]:
    """'How often is the top guess right on this half?' for the model of `run` measured by `evaluation`
    (lessons.induction.Evaluation), and its true value: the share the page measured (0 to 1)."""
    vocab = run.config.vocab_size
    # the guess of where the repeat starts (the first repeated letter) is in neither half (lessons.induction's
    # half_weights): counted in the repeated half, it would pull its share down by about 1/half
    body = {
        "kind": "number",
        "prompt": ACCURACY_PROMPTS[model == "shipped", bool(repeated)],
        "values": {
            **model_values(run),
            "n_sequences": evaluation.n_sequences,
            "length": evaluation.half,
            "vocab": vocab,
        },
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

    head = Pick("head", marked("Head"), lambda v: head_options(), lambda v: [head_label(h) for h in head_options()])
    query = Pick("query", QUERY, queries, query_labels)
    # Translators: the box where the teacher picks a half of the sequences (the fresh letters or the repeated ones)
    half = Pick("half", marked("Half"), lambda v: [1, 0], lambda v: [tr(HALVES[1]), tr(HALVES[0])])
    return (
        Question("attend", marked("Where does a head look from one of your letters?"), build_attend, (head, query)),
        Question("accuracy", marked("How often is the model's top guess right on each half?"), build_accuracy, (half,)),
    )
