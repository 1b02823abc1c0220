"""The position page's questions: does a shuffle of the words change the attention outputs (once it is undone),
with the way of adding position the teacher picks (section 1's check, on the toy head or on MiniLM's first layer);
and how far a stack of sliding-window layers carries information (section 3). Both from the page's declared values
(`text`, `d_model`, `seed`, `shuffle`, `heads`, `head`; `n`, `window`, `layers`)."""

from __future__ import annotations

from lessons.positions import masks, shuffle, toy
from locales import marked, tr
from ui.page_questions import QUERY, Pick, Question

SHUFFLE_OPTIONS = (
    marked("The same outputs (each word's output unchanged, within rounding)"),
    marked("Different outputs: the head saw where each word stands"),
)
# The rows of the page's check table the teacher can ask about: (on the real model, the way of adding position).
# Not the rows without position information: section 1's own text says what the shuffle does there (each word's
# output unchanged, only listed in a new order), so only the ways of adding position are worth asking about.
CHECK_ROWS = (
    (False, "sinusoidal"),
    (False, "rope"),
    (False, "alibi"),
    (True, "learned"),
)
MODEL = "MiniLM"
PROMPT_CHARS = 300  # classroom/questions.py's limit
# The shuffle question's prompt for each of CHECK_ROWS' ways of adding position (the toy head's, MiniLM's), with the
# words in both orders
SHUFFLE_PROMPTS = {
    "sinusoidal": marked(
        "The toy head (d_model {d_model}, seed {seed}) with sinusoidal (added to X) reads “{original}” in shuffle "
        "{shuffle}'s order, “{shuffled}” (no mask). Once the shuffle is undone, are its outputs the same as on the "
        "original order?"
    ),
    "rope": marked(
        "The toy head (d_model {d_model}, seed {seed}) with RoPE (rotates q and k) reads “{original}” in shuffle "
        "{shuffle}'s order, “{shuffled}” (no mask). Once the shuffle is undone, are its outputs the same as on the "
        "original order?"
    ),
    "alibi": marked(
        "The toy head (d_model {d_model}, seed {seed}, ALiBi head 1 of {heads}) with ALiBi (bias on the scores) reads "
        "“{original}” in shuffle {shuffle}'s order, “{shuffled}” (no mask). Once the shuffle is undone, are its "
        "outputs the same as on the original order?"
    ),
    "learned": marked(
        "MiniLM's layer 1 head {head} with learned absolute (MiniLM's table) reads “{original}” in shuffle "
        "{shuffle}'s order, “{shuffled}” (no mask). Once the shuffle is undone, are its outputs the same as on the "
        "original order?"
    ),
}
REACH_PROMPTS = {  # one layer, several
    False: marked(
        "A causal sliding window of w = {window} keys (the query itself included), {layers} layer stacked, n = {n} "
        "positions (numbered from 0): after the {layers} layer, from how many positions (itself included) has query "
        "{query} heard?"
    ),
    True: marked(
        "A causal sliding window of w = {window} keys (the query itself included), {layers} layers stacked, n = {n} "
        "positions (numbered from 0): after the {layers} layers, from how many positions (itself included) has "
        "query {query} heard?"
    ),
}
COUNT_OPTION = marked("{count}")  # an option that is a number of positions


def clipped(text: str, room: int) -> str:
    """`text`, cut to `room` characters with an ellipsis if it is longer."""
    return text if len(text) <= room else text[: max(0, room - 2)] + "…”"


def english(message: str, values: dict) -> str:
    """A language-free question's text as it reads in English (as classroom/questions.py checks its length)."""
    return message.format(**{k: v if isinstance(v, str) else format(v, "g") for k, v in values.items()})


def check_row_labels(values) -> list[str]:
    """The Ask box's label of each of CHECK_ROWS: the model and the way of adding position."""
    return [
        tr("{model} layer 1 head {head}, {method}", model=MODEL, head=values["head"], method=tr(toy.METHOD_LABELS[m]))
        if real
        else tr("Toy head, {method}", method=tr(toy.METHOD_LABELS[m]))
        for real, m in CHECK_ROWS
    ]


def the_words(values) -> tuple[str, ...]:
    words, problem = toy.parse_words(values["text"])
    if problem:
        raise ValueError(tr("the words cannot be used ({problem}): the page shows no check", problem=problem))
    return words


def shuffle_question(values, row: int, minilm_checks) -> tuple[dict, list[int]]:
    """'Once the shuffle is undone, are the outputs the same as on the original order?' for the check table's row
    `row` (CHECK_ROWS), and its true option: the page's own check. `minilm_checks(words, shuffle, head)`: the page's
    (without E_pos, with E_pos) checks on the real model (ValueError when it is not installed)."""
    words, number = the_words(values), values["shuffle"]
    if number == 0:
        raise ValueError(tr("the words are in their original order (shuffle 0): shuffle them before asking this"))
    real, method = CHECK_ROWS[row]
    perm = shuffle.permutation(len(words), number)
    if real:
        check = minilm_checks(words, number, values["head"])[1]  # (without E_pos, with E_pos): the learned one
        filled = {"head": values["head"]}
    else:
        example = toy.Toy.build(words, values["d_model"], values["seed"])
        check = shuffle.shuffle_check(example.x, example.head, perm, method, alibi_heads=values["heads"])
        filled = {"d_model": values["d_model"], "seed": values["seed"]}
        if method == "alibi":
            filled["heads"] = values["heads"]
    if check.outcome == "unchanged":
        raise ValueError(
            tr("shuffle {shuffle} only traded equal words: the input did not change. Shuffle again", shuffle=number)
        )
    # both orders: the original one, which the outputs are compared with, and the shuffled one the head reads, each
    # quoted (“…”) and cut to its share of the room the rest of the prompt leaves
    prompt = SHUFFLE_PROMPTS[method]
    filled["shuffle"] = number
    room = PROMPT_CHARS - len(english(prompt, {**filled, "original": "", "shuffled": ""})) + 4  # the quotes count
    original = clipped(f"“{' '.join(words)}”", room // 2)
    shuffled = clipped(f"“{' '.join(shuffle.apply_permutation(words, perm))}”", room - len(original))
    body = {
        "kind": "choice",
        "prompt": prompt,
        "values": {**filled, "original": original[1:-1], "shuffled": shuffled[1:-1]},
        "options": list(SHUFFLE_OPTIONS),
        "source": {"words": list(words), "shuffle": number, "method": method, "model": MODEL if real else "toy"},
    }
    return body, [0 if check.passed else 1]


def reach_question(n: int, window: int, layers: int, query: int) -> tuple[dict, list[int]]:
    """'After L sliding-window layers, from how many positions has query i heard?' and its true option: the count
    of keys whose information reaches query i within `layers` layers (masks.window_reach). Options 1..n."""
    if not 0 <= query < n:
        raise ValueError(tr("query {query} is outside 0..{last}", query=query, last=n - 1))
    first = masks.window_reach(n, window, layers)  # (n, n): the first layer by which key j reaches query i
    reached = int((first[query] > 0).sum())
    body = {
        "kind": "choice",
        "prompt": REACH_PROMPTS[layers > 1],
        "values": {"window": window, "layers": layers, "n": n, "query": query},
        "options": [COUNT_OPTION] * n,
        "option_values": [{"count": count} for count in range(1, n + 1)],
        "source": {"n": n, "window": window, "layers": layers},
    }
    return body, [reached - 1]


def questions(minilm_checks) -> tuple[Question, ...]:
    """`minilm_checks(words, shuffle, head)`: the page's shuffle checks on the real model, (without its position
    table, with it), raising ValueError when the model is not installed."""

    def shuffled(values, picks):
        return shuffle_question(values, picks["row"], minilm_checks)

    def reach(values, picks):
        return reach_question(values["n"], values["window"], values["layers"], picks["query"])

    # Translators: the box where the teacher picks a row of the page's check table (a head and a way of adding position)
    row = Pick("row", marked("Check"), lambda v: range(len(CHECK_ROWS)), check_row_labels)
    query = Pick(
        "query",
        QUERY,
        lambda v: range(v["n"] - 1, -1, -1),  # the last first: the one the page's sentence counts
        lambda v: [
            tr("query {index} (the last)", index=i) if i == v["n"] - 1 else tr("query {index}", index=i)
            for i in range(v["n"] - 1, -1, -1)
        ],
    )
    return (
        Question("shuffle", marked("Once a shuffle is undone, are the outputs the same?"), shuffled, (row,)),
        Question("reach", marked("How far does a sliding window reach through L layers?"), reach, (query,)),
    )
