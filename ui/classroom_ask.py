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
        kind = st.radio(
            "Question",
            kinds,
            index=kinds.index(kind),
            format_func=KINDS.get,
            key="class_ask_kind",
            on_change=_keep,
            args=(n,),
        )
        labels = [escape_markdown(label) for label in key_options(seq.tokens)]
        st.selectbox(
            "Query",
            range(n),
            index=min(chosen.get("query", 0), n - 1),
            format_func=lambda i: f"q_{i} {labels[i][4:]}",
            key=f"class_ask_query_{n}",
            on_change=_keep,
            args=(n,),
        )
        if kind == "weight":
            st.selectbox(
                "Key",
                range(n),
                index=min(chosen.get("key", 0), n - 1),
                format_func=lambda j: labels[j],
                key=f"class_ask_key_{n}",
                on_change=_keep,
                args=(n,),
            )
        st.caption(
            "The answer is computed from the page as it is now. From Ask until you reveal it (or end the question), "
            "the page stays so on every screen and hides the asked row; before Ask, every screen shows it."
        )
        error = st.session_state.pop(ASK_ERROR, None)
        if error:
            st.error(escape_markdown(f"Could not ask: {error}"))
        st.button("Ask", key="class_ask", type="primary", on_click=_ask, args=(url_path, code, teacher_key, store, n))


def _keep(n: int) -> None:
    """Keep the teacher's choices while the box is closed (its widgets are not drawn then, and Streamlit forgets
    the values of widgets it does not draw)."""
    chosen = st.session_state.setdefault(CHOSEN, {})
    for name, widget in (("kind", "class_ask_kind"), ("query", f"class_ask_query_{n}"), ("key", f"class_ask_key_{n}")):
        if st.session_state.get(widget) is not None:
            chosen[name] = st.session_state[widget]


def _ask(url_path: str, code: str, teacher_key: str, store, n: int) -> None:
    """The Ask button (a callback, before the run: the teacher's bar drawn by this run shows the question)."""
    _keep(n)
    kind = st.session_state.get("class_ask_kind", "argmax")
    query = st.session_state.get(f"class_ask_query_{n}", 0)
    key = st.session_state.get(f"class_ask_key_{n}", 0) if kind == "weight" else 0
    try:
        question, truth = build(url_path, kind, query, key)
        question["view"] = teacher_view(url_path)  # what the students' pages are held to until the reveal
        store.ask(code, teacher_key, question, truth=truth)
    except (errors.ClassroomError, PermissionError, ValueError) as err:
        st.session_state[ASK_ERROR] = str(err)
    else:
        st.session_state[ASK_BOX] = False
