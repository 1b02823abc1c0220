"""The questions a teacher asks from the Predict page and the Playground (the other pages' are in ui/questions/),
what the pages' questions share, and the charts of a class's answers.

Pure functions (no Streamlit): a question is the dict classroom.store.ask takes, its true value computed
by the project's own attention core from exactly the state the students see; its prompt names that state
(the puzzle, or the mask and the scaling), since the true value is fixed when it is asked. The chart is a
plotly figure dict.

A question is language-free (classroom/questions.py): its prompt is one of the messages below, marked for the
catalogue, one whole sentence for each setting of the switches (and each puzzle), filled by the question's values.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import plotly.graph_objects as go

from attention import attention_steps
from attention.sequence import TokenSequence
from classroom.questions import PROMPT_CHARS, option_texts, right_options, row_labels
from lessons.puzzles import PUZZLES_BY_ID, TIE_TOLERANCE, custom_puzzle
from locales import marked, num, sentence_space, tr, tr_n
from ui.page_questions import key_options, token_options

WEIGHT_TOLERANCE = 0.05  # a weight answer this close to the true weight counts as right (the reveal says so)
BAR_WIDTH = 0.05  # the width of a bar of a number question's histogram
TOKENS_CHARS = 80  # the longest a Playground prompt quotes its tokens

# The Playground's two switches in words, (causal, scale): each setting a whole message
SETTINGS = {
    (True, True): marked("causal mask on, scaled by 1/√d_k"),
    (True, False): marked("causal mask on, not scaled"),
    (False, True): marked("no mask, scaled by 1/√d_k"),
    (False, False): marked("no mask, not scaled"),
}
ARGMAX_PROMPTS = {
    (True, True): marked(
        "Playground, tokens '{tokens}' (causal mask on, scaled by 1/√d_k): which key will query {query} "
        "'{query_token}' attend to most?"
    ),
    (True, False): marked(
        "Playground, tokens '{tokens}' (causal mask on, not scaled): which key will query {query} '{query_token}' "
        "attend to most?"
    ),
    (False, True): marked(
        "Playground, tokens '{tokens}' (no mask, scaled by 1/√d_k): which key will query {query} '{query_token}' "
        "attend to most?"
    ),
    (False, False): marked(
        "Playground, tokens '{tokens}' (no mask, not scaled): which key will query {query} '{query_token}' attend "
        "to most?"
    ),
}
WEIGHT_PROMPTS = {
    (True, True): marked(
        "Playground, tokens '{tokens}' (causal mask on, scaled by 1/√d_k): what weight will query {query} "
        "'{query_token}' give key {key} '{key_token}'?"
    ),
    (True, False): marked(
        "Playground, tokens '{tokens}' (causal mask on, not scaled): what weight will query {query} "
        "'{query_token}' give key {key} '{key_token}'?"
    ),
    (False, True): marked(
        "Playground, tokens '{tokens}' (no mask, scaled by 1/√d_k): what weight will query {query} "
        "'{query_token}' give key {key} '{key_token}'?"
    ),
    (False, False): marked(
        "Playground, tokens '{tokens}' (no mask, not scaled): what weight will query {query} '{query_token}' give "
        "key {key} '{key_token}'?"
    ),
}
ROW_PROMPTS = {
    (True, True): marked(
        "Playground, tokens '{tokens}' (causal mask on, scaled by 1/√d_k): predict the whole row of query {query} "
        "'{query_token}', the weight it gives each key (they sum to 1; each weight within {tolerance} of the true "
        "one counts as right)"
    ),
    (True, False): marked(
        "Playground, tokens '{tokens}' (causal mask on, not scaled): predict the whole row of query {query} "
        "'{query_token}', the weight it gives each key (they sum to 1; each weight within {tolerance} of the true "
        "one counts as right)"
    ),
    (False, True): marked(
        "Playground, tokens '{tokens}' (no mask, scaled by 1/√d_k): predict the whole row of query {query} "
        "'{query_token}', the weight it gives each key (they sum to 1; each weight within {tolerance} of the true "
        "one counts as right)"
    ),
    (False, False): marked(
        "Playground, tokens '{tokens}' (no mask, not scaled): predict the whole row of query {query} "
        "'{query_token}', the weight it gives each key (they sum to 1; each weight within {tolerance} of the true "
        "one counts as right)"
    ),
}
# The Predict page's question, one message per puzzle (its title as lessons/puzzles.py writes it; the page scores
# with no mask and scaling on); a puzzle not listed here (a title changed) is named by its English title
PREDICT_PROMPTS = {
    "1 · Obvious alignment": marked(
        "Puzzle '1 · Obvious alignment' (no mask, scaled by 1/√d_k): which key will query {query} '{query_token}' "
        "attend to most?"
    ),
    "2 · Nothing points its way": marked(
        "Puzzle '2 · Nothing points its way' (no mask, scaled by 1/√d_k): which key will query {query} "
        "'{query_token}' attend to most?"
    ),
    "3 · Between two keys": marked(
        "Puzzle '3 · Between two keys' (no mask, scaled by 1/√d_k): which key will query {query} '{query_token}' "
        "attend to most?"
    ),
    "4 · Short and long keys": marked(
        "Puzzle '4 · Short and long keys' (no mask, scaled by 1/√d_k): which key will query {query} "
        "'{query_token}' attend to most?"
    ),
    "5 · Four dimensions": marked(
        "Puzzle '5 · Four dimensions' (no mask, scaled by 1/√d_k): which key will query {query} '{query_token}' "
        "attend to most?"
    ),
    "Make your own": marked(
        "Puzzle 'Make your own' (no mask, scaled by 1/√d_k): which key will query {query} '{query_token}' attend "
        "to most?"
    ),
}
PREDICT_PROMPT = marked(
    "Puzzle '{puzzle}' (no mask, scaled by 1/√d_k): which key will query {query} '{query_token}' attend to most?"
)


def settings_text(causal: bool, scale: bool) -> str:
    """The Playground's two switches in words, in the session's language."""
    return tr(SETTINGS[bool(causal), bool(scale)])


def cut(text: str, room: int) -> str:
    """`text`, cut to `room` characters with an ellipsis if it is longer."""
    return text if len(text) <= room else text[: max(room - 1, 0)] + "…"


def english(message: str, values: dict) -> str:
    """A language-free question's text as it reads in English (as classroom/questions.py checks its length)."""
    return message.format(**{k: v if isinstance(v, str) else format(v, "g") for k, v in values.items()})


def fitted(message: str, values: dict, long: str, room: int = PROMPT_CHARS) -> dict:
    """`values`, the text `long` cut so that the message reads in at most `room` characters in English."""
    over = len(english(message, values)) - room
    return values if over <= 0 else {**values, long: cut(values[long], len(values[long]) - over)}


def playground_values(seq: TokenSequence, query: int) -> dict:
    """What a Playground prompt names: the tokens (cut to TOKENS_CHARS characters) and the query."""
    return {"tokens": cut(" ".join(seq.tokens), TOKENS_CHARS), "query": query, "query_token": seq.tokens[query]}


def check_not_masked_away(query: int, key: int | None, causal: bool) -> None:
    """With the causal mask on, refuse what the mask alone answers: query 0's row (it can read only itself) and a
    key after the query (its weight is exactly 0)."""
    if causal and query == 0:
        raise ValueError(tr("with the causal mask on, query 0 reads only itself (weight 1): pick a later query"))
    if causal and key is not None and key > query:
        raise ValueError(
            tr(
                "with the causal mask on, query {query} gives every later key exactly 0: pick a key ≤ {query}",
                query=query,
            )
        )


def top_keys(row: np.ndarray) -> list[int]:
    """Every key whose weight is the row's largest, within the Predict page's tie tolerance (several on a tie)."""
    return [int(j) for j in np.flatnonzero(row >= row.max() - TIE_TOLERANCE)]


def argmax_question(
    seq: TokenSequence,
    query: int,
    *,
    causal: bool,
    scale: bool,
    source: dict,
    prompt: str | None = None,
    values: dict | None = None,
) -> tuple[dict, list[int]]:
    """'Which key will query i attend to most?' for `seq`, and its answer: every key with the largest weight (on a
    tie each is right). `prompt` (a marked message: the Playground's by default) names the state the answer depends
    on (a page and its settings), filled by `values` and the query's."""
    n = len(seq.tokens)
    if not 0 <= query < n:
        raise ValueError(tr("query {query} is outside 0..{last}", query=query, last=n - 1))
    if n < 2:
        raise ValueError(tr("a sequence of one token has only one key: nothing to ask"))
    check_not_masked_away(query, None, causal)
    weights = attention_steps(seq.q, seq.k, seq.v, causal=causal, scale=scale).weights  # (n, n)
    if prompt is None:
        prompt, filled = ARGMAX_PROMPTS[causal, scale], playground_values(seq, query)
    else:
        filled = {**(values or {}), "query": query, "query_token": seq.tokens[query]}
    question = {
        "kind": "choice",
        "prompt": prompt,
        "values": fitted(prompt, filled, "tokens" if "tokens" in filled else "query_token"),
        **token_options(key_options(seq.tokens)),
        "source": {**source, "kind": "argmax", "query": query, "causal": causal, "scale": scale},
    }
    return question, top_keys(weights[query])


def weight_question(
    seq: TokenSequence, query: int, key: int, *, causal: bool, scale: bool, source: dict
) -> tuple[dict, float]:
    """'What weight will query i give key j?' for `seq`, and its answer (a number in [0, 1]); an answer within
    WEIGHT_TOLERANCE of it counts as right."""
    n = len(seq.tokens)
    if not (0 <= query < n and 0 <= key < n):
        raise ValueError(tr("query {query} and key {key} must be in 0..{last}", query=query, key=key, last=n - 1))
    check_not_masked_away(query, key, causal)
    weights = attention_steps(seq.q, seq.k, seq.v, causal=causal, scale=scale).weights  # (n, n)
    prompt = WEIGHT_PROMPTS[causal, scale]
    question = {
        "kind": "number",
        "prompt": prompt,
        "values": fitted(prompt, {**playground_values(seq, query), "key": key, "key_token": seq.tokens[key]}, "tokens"),
        "lo": 0.0,
        "hi": 1.0,
        "tolerance": WEIGHT_TOLERANCE,
        "source": {**source, "kind": "weight", "query": query, "key": key, "causal": causal, "scale": scale},
    }
    return question, float(weights[query, key])


ROW_TOLERANCE = 0.1  # a predicted row counts as right when every weight is this close to the true one


def row_question(
    seq: TokenSequence, query: int, *, causal: bool, scale: bool, source: dict
) -> tuple[dict, list[float]]:
    """'Predict query i's whole row of weights' for `seq`, and its answer (the row, summing to 1). The body keeps
    the row's scores as the softmax sees them (None where the mask set −∞), for the reveal's words."""
    n = len(seq.tokens)
    if not 0 <= query < n:
        raise ValueError(tr("query {query} is outside 0..{last}", query=query, last=n - 1))
    if n < 2:
        raise ValueError(tr("a sequence of one token has a row of one weight, 1: nothing to predict"))
    check_not_masked_away(query, None, causal)
    steps = attention_steps(seq.q, seq.k, seq.v, causal=causal, scale=scale)
    scores = [round(float(x), 6) if np.isfinite(x) else None for x in steps.masked[query]]
    prompt = ROW_PROMPTS[causal, scale]
    question = {
        "kind": "row",
        "prompt": prompt,
        "values": fitted(prompt, {**playground_values(seq, query), "tolerance": ROW_TOLERANCE}, "tokens"),
        "n": n,
        "labels": key_options(seq.tokens),
        "tolerance": ROW_TOLERANCE,
        "source": {**source, "kind": "row", "query": query, "causal": causal, "scale": scale, "scores": scores},
    }
    return question, [float(w) for w in steps.weights[query]]


def predict_question(puzzle_id: str, query: int, own: TokenSequence | None = None) -> tuple[dict, list[int]]:
    """The Predict page's question for one query of a puzzle (`own`: the vectors of 'Make your own')."""
    if puzzle_id in PUZZLES_BY_ID:
        puzzle = PUZZLES_BY_ID[puzzle_id]
    elif own is not None:
        puzzle = custom_puzzle(own)
    else:
        raise ValueError(tr("no puzzle {puzzle}", puzzle=repr(puzzle_id)))
    # The Predict page scores with scaling on and no mask (pages/predict.py).
    prompt = PREDICT_PROMPTS.get(puzzle.title, PREDICT_PROMPT)
    return argmax_question(
        puzzle.seq,
        query,
        causal=False,
        scale=True,
        source={"page": "predict", "puzzle": puzzle.id},
        prompt=prompt,
        values={} if prompt != PREDICT_PROMPT else {"puzzle": puzzle.title},
    )


def _edges(question: dict) -> np.ndarray:
    """The edges of a number question's bars: BAR_WIDTH wide from lo to hi."""
    lo, hi = question["lo"], question["hi"]
    return np.linspace(lo, hi, max(1, int(round((hi - lo) / BAR_WIDTH))) + 1)


def bar_of(question: dict, value: float) -> int:
    """The bar a number falls in: [a, b) for each bar, the last one [a, hi]. One rule for the answers and the true
    value, so that an answer equal to the true value is counted in the bar drawn green."""
    edges = _edges(question)
    return min(max(int(np.searchsorted(edges, value, side="right")) - 1, 0), len(edges) - 2)


def counts(question: dict, values: list) -> tuple[list[str], list[int]]:
    """Bars of the distribution: one per option, or per BAR_WIDTH-wide bin of a number question."""
    if question["kind"] == "choice":
        found = Counter(int(v) for v in values)
        return option_texts(question), [found.get(i, 0) for i in range(len(question["options"]))]
    edges = _edges(question)
    found = Counter(bar_of(question, float(v)) for v in values)
    bars = [f"{num(a, '.2f')}–{num(b, '.2f')}" for a, b in zip(edges[:-1], edges[1:])]
    return bars, [found.get(i, 0) for i in range(len(edges) - 1)]


def truth_bars(question: dict, truth) -> list[int]:
    """The bars the true value falls in: every right option of a choice question, the bin of a number's."""
    if truth is None:
        return []
    if question["kind"] == "choice":
        return right_options(question, truth)
    return [bar_of(question, float(truth))]


def rows_figure(question: dict, values: list, truth=None) -> dict:
    """The class's predicted rows as a small heatmap, one per answer (anonymous: numbered in the order the students
    joined, not by seat), then the class's mean row and, after the reveal, the true row."""
    rows = [list(map(float, v)) for v in values]
    names = [tr("answer {number}", number=i + 1) for i in range(len(rows))]
    if rows:
        rows.append(list(np.mean(rows, axis=0)))
        names.append(tr("class mean"))
    if truth is not None:
        rows.append(list(map(float, truth)))
        names.append(tr("true row"))
    keys = row_labels(question)
    fig = go.Figure(
        go.Heatmap(
            z=rows or [[0.0] * len(keys)],
            x=keys,
            y=names or [tr("no answers yet")],
            zmin=0,
            zmax=1,
            colorscale="Blues",
            texttemplate="%{z:.2f}",
            hovertemplate="%{y}, %{x}: %{z:.2f}<extra></extra>",
            showscale=False,
        )
    )
    fig.update_layout(
        height=min(120 + 24 * max(len(rows), 1), 520),
        margin={"l": 90, "r": 10, "t": 10, "b": 40},
        yaxis={"autorange": "reversed", "type": "category"},
        xaxis={"type": "category", "side": "top"},
    )
    return fig.to_dict()


def common_miss(question: dict, values: list, truth) -> str | None:
    """The class's most common miss of a row, in words: the key and the direction (more or less weight than it
    gets) that the most students missed by more than the question's tolerance, and why, from the row's scores when
    the question kept them (None: no answers, or every answer within the tolerance everywhere)."""
    if not values or truth is None:
        return None
    rows, true = np.asarray(values, dtype=float), np.asarray(truth, dtype=float)  # (students, n), (n,)
    tolerance = question.get("tolerance", 0) + 1e-12
    over, under = rows > true + tolerance, rows < true - tolerance  # (students, n) each
    misses = [
        (
            int(missed[:, j].sum()),
            abs(float(rows[missed[:, j], j].mean() - true[j])) if missed[:, j].any() else 0.0,
            j,
            up,
        )
        for up, missed in ((True, over), (False, under))
        for j in range(len(true))
    ]
    count, _, j, up = max(misses)  # the most students; on a tie, the larger gap
    if count == 0:
        return None
    tol = question.get("tolerance", 0)
    values = {
        "count": count,
        "total": len(rows),
        "key": row_labels(question)[j],
        "tolerance": num(tol, "g"),
        "mean": num(rows[over[:, j] if up else under[:, j], j].mean(), ".2f"),
        "truth": num(true[j], ".2f"),
    }
    if up and tol:
        text = tr_n(
            "{count} of {total} gave {key} more weight than it gets by more than {tolerance}: {mean} on average, "
            "{truth} in truth.",
            "{count} of {total} gave {key} more weight than it gets by more than {tolerance}: {mean} on average, "
            "{truth} in truth.",
            count,
            **values,
        )
    elif up:
        text = tr_n(
            "{count} of {total} gave {key} more weight than it gets: {mean} on average, {truth} in truth.",
            "{count} of {total} gave {key} more weight than it gets: {mean} on average, {truth} in truth.",
            count,
            **values,
        )
    elif tol:
        text = tr_n(
            "{count} of {total} gave {key} less weight than it gets by more than {tolerance}: {mean} on average, "
            "{truth} in truth.",
            "{count} of {total} gave {key} less weight than it gets by more than {tolerance}: {mean} on average, "
            "{truth} in truth.",
            count,
            **values,
        )
    else:
        text = tr_n(
            "{count} of {total} gave {key} less weight than it gets: {mean} on average, {truth} in truth.",
            "{count} of {total} gave {key} less weight than it gets: {mean} on average, {truth} in truth.",
            count,
            **values,
        )
    why = score_why(question, j, up, len(true))
    return text + sentence_space() + why if why else text


def score_why(question: dict, j: int, up: bool, n: int) -> str | None:
    """Why key j's weight is missed (in the direction `up`), from the row's scores when the question kept them."""
    scores = (question.get("source") or {}).get("scores")  # the row's scores; None where the mask set -inf
    if not (isinstance(scores, list) and len(scores) == n):
        return None
    finite = sorted((x for x in scores if isinstance(x, (int, float))), reverse=True)
    score = scores[j]
    if score is None:
        return tr("It is masked: its score is −∞, so its weight is exactly 0.") if up else None
    if up and score < finite[0]:
        return tr(
            "Its score, {score}, is {gap} below the row's largest, {largest}.",
            score=num(score, ".2f"),
            gap=num(finite[0] - score, ".2f"),
            largest=num(finite[0], ".2f"),
        )
    if up and len(finite) > 1 and round(score - finite[1], 2) == 0:
        return tr(
            "Its score, {score}, ties for the row's largest: the tied keys share the weight.", score=num(score, ".2f")
        )
    if up and len(finite) > 1:
        return tr(
            "Its score, {score}, is the row's largest, but the next is only {gap} below it: the softmax leaves the "
            "others some weight.",
            score=num(score, ".2f"),
            gap=num(score - finite[1], ".2f"),
        )
    if not up and score == finite[0]:
        return tr("Its score, {score}, is the row's largest.", score=num(score, ".2f"))
    return None


def distribution_figure(question: dict, values: list, truth=None) -> dict:
    """The class's answers as bars; after the reveal the bars of the true value (every tied key) in green, named.
    A row question's: the class's rows (rows_figure)."""
    if question["kind"] == "row":
        return rows_figure(question, values, truth)
    labels, heights = counts(question, values)
    right = truth_bars(question, truth)
    fig = go.Figure(
        go.Bar(
            x=labels,
            y=heights,
            marker_color=["#2e7d32" if i in right else "#4c78a8" for i in range(len(labels))],
            # Translators: a bar's hover: an option (or a range of numbers) and how many answers chose it
            hovertemplate=tr("{option}: {count} answers", option="%{x}", count="%{y}") + "<extra></extra>",
        )
    )
    for i in right:
        shown = labels[i] if question["kind"] == "choice" else num(truth, ".3f")
        # Translators: the arrow at the bar of the true answer, after the reveal: "true: k_0 'north'"
        fig.add_annotation(
            x=labels[i], y=heights[i], text=tr("true: {answer}", answer=shown), showarrow=True, arrowhead=2
        )
    fig.update_layout(
        height=260,
        margin={"l": 40, "r": 10, "t": 30, "b": 40},
        # Translators: the axis of the number of answers
        yaxis={"title": tr("answers"), "rangemode": "tozero", "dtick": 1 if max(heights, default=0) < 10 else None},
        xaxis={"type": "category"},
        showlegend=False,
    )
    return fig.to_dict()


def weights_thumbnail(weights: np.ndarray) -> dict:
    """A build challenge's solution as the teacher's gallery shows it: `weights` (n, n) as a small heatmap, with no
    labels (the tokens a student typed stay off the projector) and no size (the gallery draws it in a square as wide
    as its column: ui.charts.square_chart)."""
    fig = go.Figure(
        go.Heatmap(
            z=weights, zmin=0, zmax=1, colorscale="Blues", showscale=False, hovertemplate="q%{y} k%{x}: %{z:.2f}"
        )
    )
    fig.update_layout(
        margin={"l": 4, "r": 4, "t": 4, "b": 4},
        xaxis={"visible": False},
        yaxis={"visible": False, "autorange": "reversed"},
    )
    return fig.to_dict()
