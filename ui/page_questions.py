"""The questions a page can ask the class, declared beside its state (ui/page_state.py: PageState):

    QUESTIONS = ask_from(STATE, "scaling", Question("largest", "How close to 1 is the largest weight?", largest))

Each question is built from the page's declared values (exactly the state the students see: the class's pages
are held to it while the question is open) and the teacher's picks (a query, a key, a head, a d_k), by a pure
function `build(values, picks) -> (body, truth)`: `body` is what classroom.store.ask takes (kind, prompt,
options or bounds) and `truth` its true value, computed by the project's own core. The prompt names everything
the truth depends on. The body's `source` says which page and question it is and with which picks, so that the
page can hide the answer while the question is open (`asked_here` in ui/classroom_open_question.py) and a prompt can be
written again later from its parameters.

Nothing here draws: the Ask box (ui/classroom_ask.py) reads a page's questions from the registry, by the prefix
of the page's declared state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from classroom.questions import NotShownYet  # noqa: F401 - the pages' questions raise it from here
from locales import marked, tr
from ui.safe_text import escape_markdown

Values = Mapping[str, Any]  # a page's declared values, by name


@dataclass(frozen=True)
class Pick:
    """One thing the teacher picks when asking: `options(values)` are the values it can take (ints), `labels(values)`
    how the box shows each (in the session's language). `label` is English, marked: shown as tr(label)."""

    name: str
    label: str
    options: Callable[[Values], Sequence[int]]
    labels: Callable[[Values], Sequence[str]]


@dataclass(frozen=True)
class Question:
    """One question of a page: `kind` names it within the page, `title` is what the teacher's menu says (English,
    marked: shown as tr(title))."""

    kind: str
    title: str
    build: Callable[[Values, Mapping[str, int]], tuple[dict, Any]]  # ValueError naming why it cannot be asked
    picks: tuple[Pick, ...] = field(default=())
    # a build question's: its goal and a student's page values -> (solved, the verdict in a sentence), and a small
    # picture of a solution (a plotly figure dict) for the teacher's gallery
    check: Callable[[dict, Values], tuple[bool, str]] | None = None
    preview: Callable[[dict, Values], dict] | None = None


@dataclass(frozen=True)
class PageQuestions:
    """A page's questions: `page` is the name the question's source carries (the page's url path, "playground"
    for the Playground at /)."""

    prefix: str
    page: str
    questions: tuple[Question, ...]
    state: Any = None  # the page's declared state (a PageState): decodes a view with no session (PageState.decode)

    def by_kind(self, kind: str) -> Question:
        for question in self.questions:
            if question.kind == kind:
                return question
        raise ValueError(f"this page has no question {kind!r}")

    def ask(self, kind: str, values: Values, picks: Mapping[str, int]) -> tuple[dict, Any]:
        """The question `kind` for `values` and `picks`, checked against the picks' options, and its true value."""
        question = self.by_kind(kind)
        chosen = {}
        for pick in question.picks:
            options = list(pick.options(values))
            value = picks.get(pick.name, options[0] if options else None)
            if value not in options:
                raise ValueError(
                    tr("{pick} {value} is not one this page offers now", pick=tr(pick.label).lower(), value=repr(value))
                )
            chosen[pick.name] = value
        body, truth = question.build(values, chosen)
        source = {"page": self.page, "question": kind, **chosen, **body.get("source", {})}
        return {**body, "source": source}, truth


def key_options(tokens) -> list[str]:
    return [f"k_{j} '{tok}'"[:80] for j, tok in enumerate(tokens)]


TOKEN_OPTION = marked("{token}")  # a choice option that is a token as typed, or a key's label: never translated


def token_options(labels) -> dict:
    """A language-free choice question's options that are tokens as typed (or labels made of them, `key_options`):
    each the message "{token}" with its own value, so that no student's language changes them."""
    labels = list(labels)
    return {"options": [TOKEN_OPTION] * len(labels), "option_values": [{"token": label} for label in labels]}


def ask_labels(tokens) -> tuple[list[str], list[str]]:
    """The Query and Key boxes' labels, one per position ("q_2 'north'", "k_2 'north'"): distinct even for
    repeated words (each names its position)."""
    keys = [escape_markdown(label) for label in key_options(tokens)]
    return ["q" + label[1:] for label in keys], keys


# Translators: the boxes where the teacher picks a query, a key (a position of the sequence)
QUERY, KEY = marked("Query"), marked("Key")


def query_pick(seq_of) -> Pick:
    """The teacher picks a query of the sequence `seq_of(values)` shows."""
    return Pick("query", QUERY, lambda v: range(len(seq_of(v).tokens)), lambda v: ask_labels(seq_of(v).tokens)[0])


def key_pick(seq_of) -> Pick:
    return Pick("key", KEY, lambda v: range(len(seq_of(v).tokens)), lambda v: ask_labels(seq_of(v).tokens)[1])


_DECLARED: dict[str, PageQuestions] = {}  # bounded: one entry per page that declares questions (its prefix)


def ask_from(state, page: str, *questions: Question) -> PageQuestions:
    """Declare the questions of the page whose declared state is `state` (a PageState); the Ask box finds them by
    its prefix."""
    kinds = [q.kind for q in questions]
    if len(set(kinds)) != len(kinds):
        raise ValueError(f"{page}: two questions share a kind: {kinds}")
    declared = PageQuestions(state.prefix, page, tuple(questions), state)
    _DECLARED[state.prefix] = declared
    return declared


def questions_named(page: str) -> PageQuestions | None:
    """The questions declared by the page whose name (its url path) is `page`."""
    return next((q for q in _DECLARED.values() if q.page == page), None)


def questions_of(prefix: str | None) -> PageQuestions | None:
    """The questions declared by the page of this prefix (None: it asks none, or has not been imported)."""
    return _DECLARED.get(prefix) if prefix is not None else None
