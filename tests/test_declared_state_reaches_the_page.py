"""Every parameter a lesson page declares changes what the page draws: the page opened by a link with one parameter
changed (to another value it can take) draws other figures or other text than the same link without the change.

Two things rest on it. A value a student sets (a widget, a link, a lesson step's view) must reach the maths, not be
dropped on the way. And what the pages keep between runs and sessions (figures built once per inputs, shared by
every student following the same view: ui.charts.cached_figure) must be keyed by every parameter the view holds:
a cache keyed too narrowly would draw the same figure for both links. The language is part of that key too
(tests/test_chart_cache.py).

A parameter read only in some state of the page (a panel opened, a button pressed, another switch on) is listed
in CONDITIONAL with where it is read, and is changed with that state set when the link can set it.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from tests.apptest_helpers import every_text, open_page, plotly_figures
from ui.declared import PAGES, declared_page
from ui.url import ChoiceList, Flag, Int, Slots, Text, _resolve

# (page, parameter): (what else the link must set for the parameter to be read, or None when no link can: why)
CONDITIONAL = {
    ("causal", "seed"): (None, "the next seed of the 'new random vectors after t' button; read when it is pressed"),
    ("playground", "step"): (None, "the step-through panel's step; the panel is drawn only while it is open"),
    ("induction", "model"): (None, "'yours' is a model the student trains first; the shipped one is drawn until then"),
    ("induction", "seed"): (None, "the seed of the student's own training run"),
    ("induction", "steps"): (None, "the length of the student's own training run"),
    ("induction", "at"): (None, "the checkpoint of the student's own training run, moved to one it saved"),
    ("pretrained", "a"): (None, "a sentence of the similarity panel, drawn only while it is open"),
    ("pretrained", "b"): (None, "a sentence of the similarity panel, drawn only while it is open"),
    ("pretrained", "layer2"): ({"compare": True}, "head B, drawn beside head A when comparing"),
    ("pretrained", "head2"): ({"compare": True}, "head B, drawn beside head A when comparing"),
    ("pretrained_deeper", "last"): ({"rows": "last"}, "the number of rows shown with 'the last rows'"),
    ("pretrained_deeper", "word"): ({"rows": "word"}, "the word whose rows are shown with 'one word'"),
    ("predict", "seq"): ({"puzzle": "own"}, "the vectors of 'Make your own'; a built-in puzzle has its own"),
}
# Pages that take the Playground's sequence for its tokens only (their vectors come from d_model and the seed): a
# change of its labels must show there; of its vectors, only where the vectors are read.
TOKENS_ONLY = {"heads", "block"}


def other_value(param, value, values, tokens_only=False):
    """Another value `param` can take where the page's other parameters are `values`; None if it has none."""
    if isinstance(param, Flag):
        return not value
    if isinstance(param, Int):
        lo, hi = _resolve(param.lo, values), _resolve(param.hi, values)
        return next((v for v in (value + 1, value - 1) if lo <= v <= hi), None)
    if isinstance(param, Slots):
        first = next((c for c in param.choices if c != value[0]), None)
        return None if first is None else (first, *value[1:])
    if isinstance(param, ChoiceList):
        first = next((c for c in param.choices if c not in value), None)
        return None if first is None else [first, *value[1:]]
    if hasattr(param, "options"):  # a Choice
        return next((o for o in param.options(values) if o != value), None)
    if isinstance(param, Text):
        return f"{value} again"
    if hasattr(value, "q") and tokens_only:  # a SequenceParam: its first label changed
        return dataclasses.replace(value, tokens=("other", *value.tokens[1:]))
    if hasattr(value, "q"):  # a SequenceParam: its first query vector moved
        q = value.q.copy()
        q[0, 0] += 1.0
        return dataclasses.replace(value, q=q)
    raise AssertionError(f"no other value for {type(param).__name__}: add one here")


def link(state, values) -> dict[str, str]:
    """The page's whole view as a link's query, as a lesson step or the teacher's move holds it."""
    query = {}
    for name, param in state.params.items():
        query.update(param.encode(values[name], name))
    return query


def drawn(page: str, query: dict[str, str]) -> tuple[str, str]:
    at = open_page(f"pages/{page}.py", query)
    assert not at.exception, [e.message for e in at.exception]
    return json.dumps(plotly_figures(at), sort_keys=True, default=str), every_text(at)


@pytest.mark.parametrize("page", PAGES)
def test_every_declared_parameter_changes_what_the_page_draws(page):
    state = declared_page(page).state
    defaults, warnings = state.decode_link(f"/{page}")
    assert not warnings
    unread = []
    for name, param in state.params.items():
        needs, _why = CONDITIONAL.get((page, name), ({}, ""))
        if needs is None:
            continue  # no link can put the page in the state that reads it (see CONDITIONAL)
        values = {**defaults, **needs}
        changed = other_value(param, values[name], values, tokens_only=page in TOKENS_ONLY)
        assert changed is not None, f"{page}.{name}: no other value to try"
        before = drawn(page, link(state, values))
        after = drawn(page, link(state, {**values, name: changed}))
        if after == before:
            unread.append(f"{name} ({values[name]!r} -> {changed!r}){' with ' + str(needs) if needs else ''}")
    assert not unread, f"/{page}: changing these drew exactly the same page: {unread}"


def test_every_conditional_parameter_is_a_declared_one():
    for page, name in CONDITIONAL:
        assert page in PAGES and name in declared_page(page).state.params, (page, name)
