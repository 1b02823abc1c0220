"""'Ask the class' on the Predict page and the Playground: the teacher picks a query (and a key), the
question is built from what the page shows now, and its true value is computed by the attention core.

What the page shows is read from its declared state (ui.page_state.declared: the page's PageState as it last ran,
by its parameters' names: the Playground's `seq`, `causal`, `scale`; the Predict page's `puzzle`, `seq`), never
from session keys by string; the question keeps that state as the view it was asked on, which the students'
pages are held to until the reveal (ui/classroom_session.hold_for_question).
"""

from __future__ import annotations

import streamlit as st

from attention.sequence import TokenSequence
from classroom import errors
from ui.classroom_questions import argmax_question, key_options, predict_question, weight_question
from ui.classroom_session import teacher_view
from ui.page_state import declared
from ui.safe_text import escape_markdown

ASKING_PAGES = {"predict": "predict", "": "pg"}  # url path -> the prefix of its declared state
KINDS = {"argmax": "Which key will a query attend to most?", "weight": "What weight will a query give a key?"}


def page_values(url_path: str) -> dict | None:
    """The declared values of the asking page `url_path` as it ran last in this session (None: not an asking page,
    or not run yet)."""
    prefix = ASKING_PAGES.get(url_path)
    page = declared(prefix) if prefix else None
    return page.values() if page is not None else None


def page_sequence(url_path: str) -> tuple[TokenSequence | None, str | None]:
    """The sequence the page shows now, and the Predict page's puzzle id (None on the Playground)."""
    values = page_values(url_path)
    if values is None:
        return None, None
    if url_path == "predict":
        puzzle = values["puzzle"]
        if puzzle == "own":
            return values["seq"], puzzle
        from lessons.puzzles import PUZZLES_BY_ID

        found = PUZZLES_BY_ID.get(puzzle)
        return (found.seq if found else None), puzzle
    return values["seq"], None


def build(url_path: str, kind: str, query: int, key: int) -> tuple[dict, object]:
    """The question and its true value, from the page's current state; ValueError naming a problem."""
    seq, puzzle = page_sequence(url_path)
    if not isinstance(seq, TokenSequence):
        raise ValueError("this page has no sequence to ask about yet")
    if url_path == "predict":
        return predict_question(puzzle, query, own=seq if puzzle == "own" else None)
    values = page_values(url_path)
    causal, scale = bool(values["causal"]), bool(values["scale"])
    source = {"page": "playground", "tokens": list(seq.tokens)}
    if kind == "weight":
        return weight_question(seq, query, key, causal=causal, scale=scale, source=source)
    return argmax_question(seq, query, causal=causal, scale=scale, source=source)


ASK_BOX = "class_ask_box"  # the popover's open state: the Ask button closes it (programmatic close needs its key)
ASK_ERROR = "_class_ask_error"  # why the last Ask was refused, shown once in the popover (which stays open)
CHOSEN = "_class_ask_chosen"  # the teacher's last choices {kind, query, key}: the box opens with them again


def ask_controls(url_path: str, code: str, teacher_key: str, store) -> None:
    """On an asking page: a popover to pose one question about what the page shows now (to `store`, a
    classroom.store.Store). Asking closes it, so the page and the answers arriving are in view again. Its
    controls are drawn only while it is open (opening it reruns the page): every element a page draws costs each
    of its runs, on the server and in the browser (docs/performance.md, "What the rest of the page costs a
    click"). Its choices are kept while it is closed, so it opens as it was left."""
    if url_path not in ASKING_PAGES:
        return
    seq, _ = page_sequence(url_path)
    if not isinstance(seq, TokenSequence):
        return
    n = len(seq.tokens)
    box = st.popover("Ask the class", icon=":material/quiz:", key=ASK_BOX, on_change="rerun")
    if not box.open:  # drawn only while open: each of the teacher's runs draws three or four elements fewer
        return
    chosen = st.session_state.setdefault(CHOSEN, {})
    with box:
        kinds = ["argmax"] if url_path == "predict" else list(KINDS)
        kind = chosen.get("kind") if chosen.get("kind") in kinds else kinds[0]
        kind = picked(
            st.radio(
                "Question",
                kinds,
                index=kinds.index(kind),
                format_func=KINDS.get,
                key="class_ask_kind",
                on_change=_keep,
                args=(url_path, n),
            ),
            kinds,
            [KINDS[k] for k in kinds],
            "question",
        )
        queries, keys = ask_labels(seq.tokens)
        for name, labels in (("query", queries), ("key", keys)) if kind == "weight" else (("query", queries),):
            st.selectbox(
                name.capitalize(),
                range(n),
                index=min(chosen.get(name, 0), n - 1),
                format_func=labels.__getitem__,
                key=f"class_ask_{name}_{n}",
                on_change=_keep,
                args=(url_path, n),
            )
        st.caption(
            "The answer is computed from the page as it is now. From Ask until you reveal it (or end the question), "
            "the page stays so on every screen and hides the asked row; before Ask, every screen shows it."
        )
        error = st.session_state.pop(ASK_ERROR, None)
        if error:
            st.error(escape_markdown(f"Could not ask: {error}"))
        st.button("Ask", key="class_ask", type="primary", on_click=_ask, args=(url_path, code, teacher_key, store, n))


def ask_labels(tokens) -> tuple[list[str], list[str]]:
    """The Query and Key boxes' labels, one per position ("q_2 'north'", "k_2 'north'"): distinct even for
    repeated words (each names its position)."""
    keys = [escape_markdown(label) for label in key_options(tokens)]
    return ["q" + label[1:] for label in keys], keys


def picked(value, options: list, labels: list[str], what: str):
    """The option a box holds: `value` itself, or, when a click overtook the run that draws the box (Streamlit then
    hands a callback the box's raw value from the browser, its label: "q_2 'north'", not 2), the option of that
    label. ValueError naming it if it is neither."""
    for option in options:
        if type(value) is type(option) and value == option:  # 2, not True or 2.0
            return option
    if isinstance(value, str) and value in labels:
        return options[labels.index(value)]
    raise ValueError(f"pick a {what} from the list (the box holds {str(value)[:40]!r})")


def _boxes(url_path: str, n: int) -> dict:
    """The Ask box's widgets: pick name -> (widget key, options, their labels)."""
    seq, _ = page_sequence(url_path)
    queries, keys = ask_labels(seq.tokens if isinstance(seq, TokenSequence) and len(seq.tokens) == n else [""] * n)
    return {
        "kind": ("class_ask_kind", list(KINDS), list(KINDS.values())),
        "query": (f"class_ask_query_{n}", list(range(n)), queries),
        "key": (f"class_ask_key_{n}", list(range(n)), keys),
    }


def _keep(url_path: str, n: int) -> None:
    """Keep the teacher's choices while the box is closed (its widgets are not drawn then, and Streamlit forgets
    the values of widgets it does not draw)."""
    chosen = st.session_state.setdefault(CHOSEN, {})
    for name, (widget, options, labels) in _boxes(url_path, n).items():
        if st.session_state.get(widget) is not None:
            try:
                chosen[name] = picked(st.session_state[widget], options, labels, name)
            except ValueError:
                pass  # _ask says so; the box opens with the last good choice


def _ask(url_path: str, code: str, teacher_key: str, store, n: int) -> None:
    """The Ask button (a callback, before the run: the teacher's bar drawn by this run shows the question)."""
    _keep(url_path, n)
    chosen = st.session_state[CHOSEN]
    try:
        picks = {}
        for name, (widget, options, labels) in _boxes(url_path, n).items():
            value = st.session_state.get(widget)
            if value is not None:
                picks[name] = picked(value, options, labels, name)
            else:  # a box not drawn yet (a click on Ask overtook the run that draws it): what it would have shown
                shown = chosen.get(name, options[0])
                picks[name] = shown if name == "kind" else min(shown, n - 1)
        kind = picks["kind"] if url_path != "predict" else "argmax"
        question, truth = build(url_path, kind, picks["query"], picks["key"] if kind == "weight" else 0)
        question["view"] = teacher_view(url_path)  # what the students' pages are held to until the reveal
        store.ask(code, teacher_key, question, truth=truth)
    except (errors.ClassroomError, PermissionError, ValueError) as err:
        st.session_state[ASK_ERROR] = str(err)
    else:
        st.session_state[ASK_BOX] = False
