"""'Ask the class': on a page that declares questions (ui/page_questions.py), a popover where the teacher picks one
(and its query, key, head...); the question is built from the page's declared values as it ran now, and its true
value computed by the attention core.

What the page shows is read from its declared state (the PageState of the page running now, by its parameters'
names), never from session keys by string; the question keeps that state as the view it was asked on, which the
students' pages are held to until the reveal (ui/classroom_open_question.hold_for_question).
"""

from __future__ import annotations

import streamlit as st

from classroom import errors
from classroom.questions import check_question, option_texts, prompt_text
from locales import tr
from ui.classroom_open_question import TIMES, time_text
from ui.classroom_session import teacher_view
from ui.page_questions import PageQuestions, questions_of
from ui.page_state import CURRENT_KEY, PageState
from ui.safe_text import escape_markdown


def page_questions() -> tuple[PageQuestions, dict] | None:
    """The questions of the page running now and its declared values (None: it asks none)."""
    page = st.session_state.get(CURRENT_KEY)
    declared = questions_of(page.prefix) if isinstance(page, PageState) else None
    if declared is None or not declared.questions:
        return None
    return declared, page.values()


ASK_BOX = "class_ask_box"  # the popover's open state: the Ask button closes it (programmatic close needs its key)
ASK_ROUND = "_class_ask_round"  # how many questions this session asked: each Ask gives the popover a new key
ASK_ERROR = "_class_ask_error"  # why the last Ask was refused, shown once in the popover (which stays open)
CHOSEN = "_class_ask_chosen"  # the teacher's last choices {kind, query, key}: the box opens with them again


def ask_controls(url_path: str, code: str, teacher_key: str, store) -> None:
    """On a page that declares questions: a popover to pose one about what the page shows now (to `store`, a
    classroom.store.Store). Asking closes it, so the page and the answers arriving are in view again. Its
    controls are drawn only while it is open (opening it reruns the page): every element a page draws costs each
    of its runs, on the server and in the browser (docs/performance.md, "What the rest of the page costs a
    click"). Its choices are kept while it is closed, so it opens as it was left."""
    found = page_questions()
    if found is None:
        return
    declared, values = found
    box = st.popover(tr("Ask the class"), icon=":material/quiz:", key=ask_box_key(st.session_state), on_change="rerun")
    if not box.open:  # drawn only while open: each of the teacher's runs draws three or four elements fewer
        return
    chosen = st.session_state.setdefault(CHOSEN, {})
    with box:
        kinds = [q.kind for q in declared.questions]
        titles = [tr(q.title) for q in declared.questions]
        kind = chosen.get("kind") if chosen.get("kind") in kinds else kinds[0]
        try:
            kind = picked(
                st.radio(
                    # Translators: the label of the radio that picks which question to ask
                    tr("Question"),
                    kinds,
                    index=kinds.index(kind),
                    format_func=dict(zip(kinds, titles)).get,
                    key="class_ask_kind",
                    on_change=_keep,
                ),
                kinds,
                titles,
                tr("question"),
            )
        except ValueError:
            pass  # the radio holds another page's question: this run draws this page's (its first)
        for widget, pick, options, labels in _boxes(declared.by_kind(kind), values):
            shown = chosen.get(pick.name)
            st.selectbox(
                tr(pick.label),
                options,
                index=options.index(shown) if shown in options else (0 if options else None),
                format_func=dict(zip(options, labels)).get,
                key=widget,
                on_change=_keep,
            )
        shown = chosen.get("seconds", 0)
        st.selectbox(
            tr("Time for answers"),
            TIMES,
            index=TIMES.index(shown) if shown in TIMES else 0,
            format_func=time_text,
            key="class_ask_seconds",
            on_change=_keep,
            help=tr(
                "The answers close by themselves after this time (the server refuses later ones); you reveal the "
                "answer when you choose."
            ),
        )
        if kind.startswith("build"):
            st.caption(
                tr(
                    "A challenge: each student edits their own copy of the page towards the goal; nothing is held or "
                    "hidden. You see who solved it, and can show a solution to the class."
                )
            )
        else:
            st.caption(
                tr(
                    "The answer is computed from the page as it is now. From Ask until you reveal it (or end the "
                    "question), the page stays so on every screen and hides the answer."
                )
            )
        error = st.session_state.pop(ASK_ERROR, None)
        if error:
            st.error(escape_markdown(tr("Could not ask: {error}", error=error)))
        try:  # what Ask would send now, checked as the store checks it; or why it cannot be asked (Ask then waits)
            body, why_not = (
                check_question(declared.ask(kind, values, _picks_now(declared.by_kind(kind), values, chosen))[0]),
                None,
            )
        except ValueError as err:  # the page's refusal, or the store's (errors.InvalidQuestion is one)
            body, why_not = None, str(err)
        if why_not:
            st.warning(escape_markdown(tr("Cannot ask this now: {why}.", why=why_not)), icon=":material/block:")
        elif body["kind"] == "choice":
            # Translators: between the numbered choices of a question: "(1) north; (2) east"
            options = tr("; ").join(f"({n}) {o}" for n, o in enumerate(option_texts(body), 1))
            read = tr("The class will read: {prompt} Choices: {options}.", prompt=prompt_text(body), options=options)
            st.caption(escape_markdown(read))
        else:
            st.caption(escape_markdown(tr("The class will read: {prompt}", prompt=prompt_text(body))))
        st.button(
            # Translators: a button: ask the class the question picked above
            tr("Ask"),
            key="class_ask",
            type="primary",
            disabled=why_not is not None,
            on_click=_ask,
            args=(url_path, code, teacher_key, store),
        )


def ask_box_key(state) -> str:
    """The key of the Ask popover now, in session state `state` (the first one's is ASK_BOX)."""
    asked = state[ASK_ROUND] if ASK_ROUND in state else 0
    return ASK_BOX if not asked else f"{ASK_BOX}_{asked}"


def picked(value, options: list, labels: list[str], what: str):
    """The option a box holds: `value` itself, or, when a click overtook the run that draws the box (Streamlit then
    hands a callback the box's raw value from the browser, its label: "q_2 'north'", not 2), the option of that
    label. ValueError naming it if it is neither."""
    for option in options:
        if type(value) is type(option) and value == option:  # 2, not True or 2.0
            return option
    if isinstance(value, str) and value in labels:
        return options[labels.index(value)]
    # Translators: {what} is what the box picks: "question", "time", or a pick's name ("query", "key", "head"...)
    raise ValueError(tr("pick a {what} from the list (the box holds {held})", what=what, held=repr(str(value)[:40])))


def _boxes(question, values) -> list:
    """The Ask box's widgets for `question`'s picks: (widget key, pick, options, their labels). The key names the
    number of options, so a box whose options changed (a longer sequence) is a new box."""
    boxes = []
    for pick in question.picks:
        options = list(pick.options(values))
        boxes.append((f"class_ask_{pick.name}_{len(options)}", pick, options, list(pick.labels(values))))
    return boxes


def _picks_now(question, values, chosen: dict) -> dict:
    """The picks `question` would be asked with now: its boxes' values, or, for a box not drawn yet (a click on Ask
    overtook the run that draws it), what it would show. ValueError naming a box that holds none of its options."""
    picks = {}
    for widget, pick, options, labels in _boxes(question, values):
        value = st.session_state.get(widget)
        if value is not None:
            picks[pick.name] = picked(value, options, labels, tr(pick.label).lower())
        else:
            shown = chosen.get(pick.name)
            picks[pick.name] = shown if shown in options else (options[0] if options else None)
    return picks


def _keep() -> None:
    """Keep the teacher's choices while the box is closed (its widgets are not drawn then, and Streamlit forgets
    the values of widgets it does not draw)."""
    found = page_questions()
    if found is None:
        return
    declared, values = found
    chosen = st.session_state.setdefault(CHOSEN, {})
    kinds, titles = [q.kind for q in declared.questions], [tr(q.title) for q in declared.questions]
    try:
        chosen["kind"] = picked(st.session_state.get("class_ask_kind"), kinds, titles, tr("question"))
    except ValueError:
        pass  # _ask says so; the box opens with the last good choice
    try:
        raw, times = st.session_state.get("class_ask_seconds"), list(TIMES)
        # Translators: the time for answers a question is open (what the box picks)
        chosen["seconds"] = picked(raw, times, list(map(time_text, times)), tr("time"))
    except ValueError:
        pass
    for question in declared.questions:
        for widget, pick, options, labels in _boxes(question, values):
            if st.session_state.get(widget) is not None:
                try:
                    chosen[pick.name] = picked(st.session_state[widget], options, labels, tr(pick.label).lower())
                except ValueError:
                    pass


def _ask(url_path: str, code: str, teacher_key: str, store) -> None:
    """The Ask button (a callback, before the run: the teacher's bar drawn by this run shows the question)."""
    _keep()
    chosen = st.session_state[CHOSEN]
    try:
        found = page_questions()
        if found is None:
            raise ValueError(tr("this page asks no questions"))
        declared, values = found
        kinds, titles = [q.kind for q in declared.questions], [tr(q.title) for q in declared.questions]
        raw = st.session_state.get("class_ask_kind")
        kind = picked(raw, kinds, titles, tr("question")) if raw is not None else chosen.get("kind", kinds[0])
        seconds = st.session_state.get("class_ask_seconds", chosen.get("seconds", 0))
        seconds = picked(seconds, list(TIMES), [time_text(t) for t in TIMES], tr("time")) if seconds else 0
        picks = _picks_now(declared.by_kind(kind), values, chosen)
        pose(url_path, code, teacher_key, store, declared, values, kind, picks, seconds)
    except (errors.ClassroomError, PermissionError, ValueError) as err:
        st.session_state[ASK_ERROR] = str(err)
    else:
        st.session_state[ask_box_key(st.session_state)] = False
        chosen["seconds"] = 0  # a time is chosen for one question: the next one (a challenge...) starts without
        st.session_state.pop("class_ask_seconds", None)
        # A new popover after each question: the browser may still hold the old one as open (its close was the
        # server's, not a click) and send that back with the teacher's next click, opening it on the projector.
        st.session_state[ASK_ROUND] = st.session_state.get(ASK_ROUND, 0) + 1


def pose(
    url_path: str, code: str, teacher_key: str, store, declared, values, kind: str, picks, seconds: int, step=None
) -> None:
    """Ask the class question `kind` of the page running now (`declared`, its `values`) with `picks`, open for
    `seconds` (0: until the reveal): built from the page as the class sees it, its true value computed by the core;
    `step`: the lesson step the class is on, whose question it is. ValueError (or the store's error) naming why it
    cannot be asked."""
    question, truth = declared.ask(kind, values, picks)
    if seconds:
        question["seconds"] = seconds
    question["view"] = teacher_view(url_path)  # what the students' pages are held to until the reveal
    store.ask(code, teacher_key, question, truth=truth, step=step)
