"""The Playground's questions: about the vectors, the mask and the scaling it shows (its declared values `seq`,
`causal`, `scale`)."""

from __future__ import annotations

import numpy as np

from attention import attention_steps
from locales import marked, num, tr, tr_n
from ui.classroom_questions import argmax_question, row_question, settings_text, weight_question, weights_thumbnail
from ui.page_questions import Question, key_pick, query_pick


def questions(seq_of=lambda v: v["seq"]) -> tuple[Question, ...]:
    """The Playground's questions, about the sequence `seq_of(values)`."""

    def source(values) -> dict:
        return {"tokens": list(seq_of(values).tokens)}

    def argmax(values, picks):
        seq = seq_of(values)
        return argmax_question(
            seq, picks["query"], causal=bool(values["causal"]), scale=bool(values["scale"]), source=source(values)
        )

    def weight(values, picks):
        seq = seq_of(values)
        causal, scale = bool(values["causal"]), bool(values["scale"])
        return weight_question(seq, picks["query"], picks["key"], causal=causal, scale=scale, source=source(values))

    def row(values, picks):
        seq = seq_of(values)
        causal, scale = bool(values["causal"]), bool(values["scale"])
        return row_question(seq, picks["query"], causal=causal, scale=scale, source=source(values))

    return (
        Question("argmax", marked("Which key will a query attend to most?"), argmax, (query_pick(seq_of),)),
        Question("row", marked("Predict a whole row of weights"), row, (query_pick(seq_of),)),
        Question(
            "weight", marked("What weight will a query give a key?"), weight, (query_pick(seq_of), key_pick(seq_of))
        ),
    )


# ---------------------------------------------------------------- build it: goals a student reaches by editing
AT_LEAST = 0.8  # "attend" goal: the weight to reach
TIE = 1e-3  # "tie" goal: two weights this close tie

# Each goal's prompt, one whole message for each setting of the switches the goal keeps, (causal, scale)
ATTEND_PROMPTS = {
    (True, True): marked(
        "Build it on the Playground (causal mask on, scaled by 1/√d_k): make query {query} give key {key} a weight "
        "of at least {at_least}. Edit the vectors; submit when the check says solved."
    ),
    (True, False): marked(
        "Build it on the Playground (causal mask on, not scaled): make query {query} give key {key} a weight of at "
        "least {at_least}. Edit the vectors; submit when the check says solved."
    ),
    (False, True): marked(
        "Build it on the Playground (no mask, scaled by 1/√d_k): make query {query} give key {key} a weight of at "
        "least {at_least}. Edit the vectors; submit when the check says solved."
    ),
    (False, False): marked(
        "Build it on the Playground (no mask, not scaled): make query {query} give key {key} a weight of at least "
        "{at_least}. Edit the vectors; submit when the check says solved."
    ),
}
PREVIOUS_PROMPTS = {  # the goal wants the mask on, whatever the teacher's page has
    (True, True): marked(
        "Build it on the Playground (causal mask on, scaled by 1/√d_k): make every query from 1 on attend most to "
        "the key just before it. Edit the vectors; submit when the check says solved."
    ),
    (True, False): marked(
        "Build it on the Playground (causal mask on, not scaled): make every query from 1 on attend most to the key "
        "just before it. Edit the vectors; submit when the check says solved."
    ),
}
TIE_PROMPTS = {
    (True, True): marked(
        "Build it on the Playground (causal mask on, scaled by 1/√d_k): make two keys tie (within {tie}) for the "
        "largest weight of query {query}. Edit the vectors; submit when the check says solved."
    ),
    (True, False): marked(
        "Build it on the Playground (causal mask on, not scaled): make two keys tie (within {tie}) for the largest "
        "weight of query {query}. Edit the vectors; submit when the check says solved."
    ),
    (False, True): marked(
        "Build it on the Playground (no mask, scaled by 1/√d_k): make two keys tie (within {tie}) for the largest "
        "weight of query {query}. Edit the vectors; submit when the check says solved."
    ),
    (False, False): marked(
        "Build it on the Playground (no mask, not scaled): make two keys tie (within {tie}) for the largest weight "
        "of query {query}. Edit the vectors; submit when the check says solved."
    ),
}
PROMPTS = {"attend": ATTEND_PROMPTS, "previous": PREVIOUS_PROMPTS, "tie": TIE_PROMPTS}


def build_questions(seq_of=lambda v: v["seq"]) -> tuple[Question, ...]:
    """The Playground's build challenges: a goal each student reaches on their own copy of the vectors, checked live
    on their screen and again by the server when they submit (check_goal, on the values of their own page)."""

    def attend(values, picks):
        query, key = picks["query"], picks["key"]
        goal = {"name": "attend", "query": query, "key": key, "at_least": AT_LEAST}
        return build_body(goal, values, {"query": query, "key": key, "at_least": AT_LEAST})

    def previous(values, picks):
        if seq_of(values).n < 2:
            raise ValueError(tr("a sequence of one token has no key before any query: lengthen it first"))
        goal = {"name": "previous", "causal": True}
        return build_body(goal, values, {})

    def tie(values, picks):
        query = picks["query"]
        goal = {"name": "tie", "query": query}
        return build_body(goal, values, {"tie": TIE, "query": query})

    picks, one = (query_pick(seq_of), key_pick(seq_of)), (query_pick(seq_of),)
    return (
        Question(
            "build_attend",
            marked("Build it: make a query attend to a key"),
            attend,
            picks,
            check_goal,
            solution_figure,
        ),
        Question(
            "build_previous",
            marked("Build it: every query attends to the key before it"),
            previous,
            (),
            check_goal,
            solution_figure,
        ),
        Question("build_tie", marked("Build it: make two keys tie for a query"), tie, one, check_goal, solution_figure),
    )


def build_body(goal: dict, values, task: dict) -> tuple[dict, None]:
    """A build question: the goal, with the switches the teacher's page has (the "previous" goal wants the mask on
    whatever the page has), and its prompt (PROMPTS, filled by `task`). Refused when the goal is out of reach (what
    the mask forbids) or already reached on the teacher's page: there would be nothing to build."""
    goal = {"causal": bool(values["causal"]), "scale": bool(values["scale"]), **goal}
    if goal["causal"] and goal["name"] == "attend" and goal["key"] > goal["query"]:
        raise ValueError(
            tr(
                "with the causal mask on, query {query} cannot read key {key}, a later one",
                query=goal["query"],
                key=goal["key"],
            )
        )
    if goal["causal"] and goal["name"] == "tie" and goal["query"] == 0:
        raise ValueError(tr("with the causal mask on, query 0 reads only itself: no two keys can tie"))
    if goal["name"] != "previous" or values["causal"]:  # with the mask off here, "previous" starts from another page
        solved, said = check_goal(goal, values)
        if solved:
            raise ValueError(tr("it is already true on this page ({said}): pick another query or key", said=said))
    prompt = PROMPTS[goal["name"]][goal["causal"], goal["scale"]]
    body = {"kind": "build", "prompt": prompt, "values": task, "goal": goal, "source": {"goal": goal["name"]}}
    return body, None


def check_goal(goal: dict, values) -> tuple[bool, str]:
    """Whether the Playground's `values` (a student's own) reach `goal`, and the verdict in a sentence."""
    if bool(values["causal"]) != goal["causal"] or bool(values["scale"]) != goal["scale"]:
        settings = settings_text(goal["causal"], goal["scale"])
        return False, tr("not yet: set the switches as the goal says ({settings})", settings=settings)
    seq = values["seq"]
    weights = attention_steps(seq.q, seq.k, seq.v, causal=goal["causal"], scale=goal["scale"]).weights  # (n, n)
    n = seq.n
    if goal["name"] == "attend":
        query, key = goal["query"], goal["key"]
        if not (query < n and key < n):
            return False, tr_n(
                "not yet: the sequence needs a query {query} and a key {key} (it has {n} tokens)",
                "not yet: the sequence needs a query {query} and a key {key} (it has {n} tokens)",
                n,
                query=query,
                key=key,
                n=n,
            )
        w = float(weights[query, key])
        if w >= goal["at_least"]:
            return True, tr("solved: {weight} ≥ {at_least}", weight=num(w, ".2f"), at_least=num(goal["at_least"], "g"))
        return False, tr(
            "not yet: query {query} gives key {key} a weight of {weight}, below {at_least}",
            query=query,
            key=key,
            weight=num(w, ".2f"),
            at_least=num(goal["at_least"], "g"),
        )
    if goal["name"] == "previous":
        for i in range(1, n):
            top = np.flatnonzero(weights[i] == weights[i].max())
            if len(top) > 1:
                return False, tr(
                    "not yet: query {query}'s largest weight is shared by keys {keys}; key {key} must have it alone",
                    query=i,
                    keys=", ".join(map(str, top)),
                    key=i - 1,
                )
            if top[0] != i - 1:
                return False, tr(
                    "not yet: query {query} attends most to key {top}, not to key {key}",
                    query=i,
                    top=int(top[0]),
                    key=i - 1,
                )
        if n < 2:
            return False, tr("not yet: a sequence of one token has no key before any query")
        return True, tr("solved: every query from 1 to {last} attends most to the key just before it", last=n - 1)
    if goal["name"] == "tie":
        query = goal["query"]
        if query >= n:
            return False, tr_n(
                "not yet: the sequence needs a query {query} (it has {n} tokens)",
                "not yet: the sequence needs a query {query} (it has {n} tokens)",
                n,
                query=query,
                n=n,
            )
        first, second = np.sort(weights[query])[::-1][:2]
        pair = {"query": query, "first": num(first, ".3f"), "second": num(second, ".3f")}
        if first - second <= TIE:
            return True, tr("solved: the two largest weights of query {query} are {first} and {second}", **pair)
        return False, tr("not yet: the two largest weights of query {query} are {first} and {second}", **pair)
    raise ValueError(f"no goal {goal['name']!r} on the Playground")


def solution_figure(goal: dict, values) -> dict:
    """A solution as the teacher's gallery shows it: its weights, with the goal's switches."""
    seq = values["seq"]
    return weights_thumbnail(attention_steps(seq.q, seq.k, seq.v, causal=goal["causal"], scale=goal["scale"]).weights)
