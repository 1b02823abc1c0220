"""A lesson deck run in a room (classroom/decks.py, stored with the room by classroom.store.Store.start_lesson).

On /class, the teacher picks a shipped lesson or uploads a file and presses Start the lesson. Then the room's bar,
on every page, says "Step 3 of 9 · title" and has Previous step and Next step (Page Up and Page Down, the keys a
presentation clicker sends), and the step's question, ready to ask with one click. A step moves the class and this
screen together: the store makes the step's view the room's, and this screen opens it. The teacher's notes are in
the bar of every tab except one in presenter mode, which is the projected one; a second tab or window of the
teacher's, which does not lead, shows them without moving the class.

*Let the students go at their own pace* (on /class) asks every step's question at once, one open on each step
(classroom.store.Store.pace_lesson); each student then moves with their own Previous and Next
(ui/classroom_student_pace.py), the teacher's bar counts the students on each step and Bring everyone brings them
all to one step, where they follow the teacher again.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from classroom import errors
from classroom.decks import DeckError, Step, page_of, parse_deck, shipped, stored_deck, view_link
from locales import language, marked, tr
from ui.classroom_ask import page_questions, pose
from ui.classroom_push import caught_up
from ui.classroom_session import MESSAGE_KEY, SHOW_KEY, store, tab_id
from ui.declared import declared_page
from ui.safe_text import escape_markdown
from ui.shared_state import is_presenting

UPLOAD = marked("Upload a lesson file…")  # the Lesson box's last option (a value; shown as tr(UPLOAD))
PICK_KEY = "class_lesson_pick"
UPLOAD_KEY = "class_lesson_file"
BRING_KEY = "class_step_bring_to"
WRITTEN_IN = {  # a deck's language (its `language`): what its own text, titles and notes, is written in
    "en": marked("This lesson is written in English."),
    "es": marked("This lesson is written in Spanish."),
    "zh_Hans": marked("This lesson is written in Chinese."),
}


def step_heading(at: int, count: int, title: str) -> None:
    """A lesson bar's heading: "Step 2 of 10 · its title" (the teacher's bar, and a student's at their own pace)."""
    st.markdown(
        ":material/slideshow: "
        + tr("**Step {step} of {count}** · {title}", step=at + 1, count=count, title=escape_markdown(title))
    )


def language_note(where, deck_language: str) -> None:
    """A caption in `where` saying which language a lesson deck's own text (its titles and notes, shown as written)
    is in, when it is not the session's language."""
    if deck_language != language() and deck_language in WRITTEN_IN:
        where.caption(tr(WRITTEN_IN[deck_language]))


@st.cache_resource(show_spinner=False)
def shipped_lessons() -> dict[str, dict]:
    """The lessons that ship with the app, read once per server process: {title: the deck as data}."""
    return {title: deck.to_dict() for title, deck in shipped().items()}


@st.cache_data(max_entries=8, show_spinner=False)
def checked_upload(data: bytes, lang: str) -> tuple[dict | None, list[str]]:
    """An uploaded lesson file, checked as `python -m classroom.decks check` checks it: (the deck as data, no
    problems) or (None, one sentence per problem, in language `lang`: the session's, part of the cache's key)."""
    try:
        return parse_deck(data, declared_page).to_dict(), []
    except DeckError as err:
        return None, err.problems


# ------------------------------------------------------------------ on /class
def lesson_picker(code: str, key: str, paced: bool = False) -> bool:
    """The teacher's dashboard: the lesson the room runs (`paced`: the students go through it at their own pace),
    the switch to their own pace and End the lesson; or the Lesson picker and Start. Whether a lesson runs."""
    with st.container(border=True, key="class_lesson"):
        running = store().lesson(code, key)
        if running is not None:
            lesson, step = running
            if paced:
                st.markdown(
                    tr(
                        "**Lesson:** {title} · the students go through its {count} steps at their own pace, each "
                        "answering the question of the step they are on. *Answers*, below, shows how many are on each "
                        "step; the bar at the top of every page brings everyone to one step, where the class follows "
                        "you again.",
                        title=escape_markdown(lesson["title"]),
                        count=len(lesson["step"]),
                    )
                )
            else:
                st.markdown(
                    tr(
                        "**Lesson:** {title} · step {step} of {count}. The bar at the top of every page moves the "
                        "class through it (Page Down and Page Up do too).",
                        title=escape_markdown(lesson["title"]),
                        step=step + 1,
                        count=len(lesson["step"]),
                    )
                )
            language_note(st, lesson.get("language", "en"))
            with st.container(horizontal=True):
                if not paced:
                    st.button(
                        tr("Let the students go at their own pace"),
                        key="class_lesson_pace",
                        on_click=_pace,
                        args=(code, key, lesson),
                        help=tr(
                            "Each student moves through the steps with their own Previous and Next, from the step "
                            "the class is on, and answers each step's question when they reach it (without its time "
                            "limit). You see how many are on each step, reveal each step's answer when you choose, "
                            "and bring everyone to one step."
                        ),
                    )
                st.button(tr("End the lesson"), key="class_lesson_end", on_click=_end, args=(code, key))
            return True
        st.markdown(tr("**Run a prepared lesson**: the class follows it step by step; you press Next."))
        lessons = shipped_lessons()
        choice = st.selectbox(
            # Translators: the label of the box that picks a lesson
            tr("Lesson"),
            [*lessons, UPLOAD],
            key=PICK_KEY,
            format_func=lambda option: tr(UPLOAD) if option == UPLOAD else option,
        )
        if choice == UPLOAD:
            upload = st.file_uploader(
                tr("Lesson file (.toml)"),
                type=["toml"],
                key=UPLOAD_KEY,
                help=tr(
                    "A lesson deck: `lessons/decks/` holds the shipped ones, and docs/classroom.md says how to write "
                    "one. It is checked before the class sees any of it."
                ),
            )
            if upload is None:
                return False
            with st.spinner(tr("Checking the lesson file…")):
                lesson, problems = checked_upload(upload.getvalue(), language())
            for problem in problems:
                st.error(escape_markdown(problem), icon=":material/error:")
            if lesson is None:
                return False
        else:
            lesson = lessons[choice]
        questions = sum("question" in s for s in lesson["step"])
        st.caption(
            escape_markdown(
                tr(
                    "{level} · about {minutes} minutes · {count} steps, {questions} of them with a question.",
                    level=lesson["level"],
                    minutes=lesson["minutes"],
                    count=len(lesson["step"]),
                    questions=questions,
                )
            )
        )
        language_note(st, lesson.get("language", "en"))
        st.button(
            tr("Start the lesson"), key="class_lesson_start", type="primary", on_click=start, args=(code, key, lesson)
        )
    return False


def start(code: str, key: str, lesson: dict) -> None:
    """Run `lesson` (a checked deck as data) in the room, from its first step (with its question)."""
    _move_to(
        stored_deck(lesson).steps[0],
        marked("Could not start the lesson: {error}."),
        lambda body, truth: store().start_lesson(code, key, lesson, tab_id(), question=body, truth=truth),
    )


def _pace(code: str, key: str, lesson: dict) -> None:
    """The students go through `lesson` at their own pace, each step's question open on it (built from the step's
    view, as a step's move builds it)."""
    posed, waiting = [], []
    for n, step in enumerate(stored_deck(lesson).steps):
        body, truth, why_not = step_question(step)
        if body is not None:
            posed.append((n, body, truth))
        elif why_not:
            waiting.append(str(n + 1))
    try:
        moved = store().pace_lesson(code, key, posed)
    except (errors.ClassroomError, PermissionError) as err:
        st.session_state[MESSAGE_KEY] = tr("Could not let the students go at their own pace: {error}.", error=err)
        return
    if moved is None:
        st.session_state[MESSAGE_KEY] = tr("A question is open: reveal it or end it first, then let the students go.")
    elif waiting:
        st.session_state[MESSAGE_KEY] = tr(
            "The question of step {steps} needs its page to run first, so it is not open at the students' own pace: "
            "bring everyone to that step and ask it from the bar.",
            steps=", ".join(waiting),
        )


def _bring(code: str, key: str, lesson: dict) -> None:
    """Everyone comes to the step the teacher picked, and follows the teacher again."""
    at = st.session_state.get(BRING_KEY)
    steps = stored_deck(lesson).steps
    if isinstance(at, int) and 0 <= at < len(steps):
        _go(code, key, at, steps[at])


def _end(code: str, key: str) -> None:
    try:
        store().end_lesson(code, key)
    except (errors.ClassroomError, PermissionError) as err:
        st.session_state[MESSAGE_KEY] = tr("Could not end the lesson: {error}.", error=err)


# ------------------------------------------------------------------ in the room's bar
def lesson_controls(state, url_path: str, code: str, key: str) -> None:
    """In the teacher's bar while the room runs a lesson: where the class is in it, Previous and Next, the step's
    question and, except in presenter mode, the teacher's notes."""
    running = store().lesson(code, key)
    if running is None:
        return
    lesson, at = running
    deck = stored_deck(lesson)
    step = deck.steps[at]
    if state.paced:
        _paced_controls(deck, at, code, key, lesson)
        return
    step_heading(at, len(deck.steps), step.title)
    held = state.asking  # the bar says a question is open: no tooltip over the step's title on the projector
    with st.container(horizontal=True, vertical_alignment="center"):  # each button as wide as its label
        step_buttons(at, len(deck.steps), lambda n: _go(code, key, n, deck.steps[n]), "class_step", held=held)
        if step.question is not None and not state.asking:
            _step_question(step, at, url_path, code, key)
    if step.notes and not is_presenting():
        with st.expander(tr("Your notes for this step (hidden in presenter mode)")):
            language_note(st, deck.language)
            st.text(step.notes)  # the deck's text, as text


def _paced_controls(deck, at: int, code: str, key: str, lesson: dict) -> None:
    """In the teacher's bar while the students go at their own pace: how many are on each step, and Bring everyone."""
    counts = store().step_counts(code, key)
    # Translators: how many students are on a step: "step 2: 5"
    where = " · ".join(tr("step {step}: {count}", step=n + 1, count=count) for n, count in enumerate(counts) if count)
    if where:
        st.markdown(":material/directions_walk: " + tr("**At their own pace** · {where}", where=where))
    else:
        st.markdown(":material/directions_walk: " + tr("**At their own pace** · nobody here yet"))
    left, right = st.columns([3, 2], vertical_alignment="bottom")
    left.selectbox(
        tr("Bring everyone to"),
        range(len(deck.steps)),
        index=at,
        format_func=lambda n: tr("Step {step} · {title}", step=n + 1, title=deck.steps[n].title),
        key=BRING_KEY,
        help=tr(
            "Every student comes to that step and follows you again; the answers to its question stay, and it stays "
            "open until you reveal it."
        ),
    )
    right.button(
        tr("Bring everyone"), key="class_step_bring", type="primary", on_click=_bring, args=(code, key, lesson)
    )


def step_buttons(at: int, count: int, go, prefix: str, held: bool = False) -> None:
    """Previous step and Next step of a lesson of `count` steps, on step `at` (from 0), keyed `prefix`_back and
    `prefix`_next; Page Up and Page Down press them, as a presentation clicker sends. `go(step)` on a click."""
    st.button(
        tr("Previous step"),
        key=f"{prefix}_back",
        disabled=at == 0 or held,
        on_click=go,
        args=(max(at - 1, 0),),
        shortcut="PageUp",
    )
    st.button(
        tr("Next step"),
        key=f"{prefix}_next",
        type="primary",
        disabled=at >= count - 1 or held,
        on_click=go,
        args=(min(at + 1, count - 1),),
        shortcut="PageDown",
    )


def _step_question(step: Step, at: int, url_path: str, code: str, key: str) -> None:
    here = (url_path or "playground") == step.page
    kind = step.question["kind"]
    title = declared_page(step.page).by_kind(kind).title  # the page's declaration, whether or not it ran here
    st.button(
        tr("Ask: {question}", question=tr(title)),
        key="class_step_ask",
        icon=":material/quiz:",
        disabled=not here,
        on_click=_ask_step,
        args=(url_path, code, key, step, at),
        help=(
            tr("The step's question, about the page as it is now: its true value is computed when you ask.")
            if here
            else tr("The step's question is about /{page}: go back to the step first.", page=page_of(step.view))
        ),
    )


def _ask_step(url_path: str, code: str, key: str, step: Step, at: int) -> None:
    question = dict(step.question)
    kind, seconds = question.pop("kind"), question.pop("seconds", 0)
    try:
        found = page_questions()
        if found is None or (url_path or "playground") != step.page:
            raise ValueError(
                tr("the step's question is about /{page}: go back to the step first", page=page_of(step.view))
            )
        declared, values = found
        pose(url_path, code, key, store(), declared, values, kind, question, seconds, step=at)
    except (errors.ClassroomError, PermissionError, ValueError) as err:
        st.session_state[MESSAGE_KEY] = tr("Could not ask the step's question: {error}.", error=err)


def _go(code: str, key: str, at: int, step: Step) -> None:
    """Move the class to step `at`, with its question asked in the same move when the page can build it from the
    step's view alone (no screen then shows the step's answer before the question hides it); this screen opens
    the step too."""
    _move_to(
        step,
        marked("Could not move to that step: {error}."),
        lambda body, truth: store().go_to_step(code, key, at, tab_id(), question=body, truth=truth),
    )


def _move_to(step: Step, failed: str, write) -> None:
    """`write(question, truth)`: the store's move to `step`, with the step's question built here; `failed`, the
    message (marked) that says it failed, with its {error}."""
    body, truth, why_not = step_question(step)
    try:
        moved = write(body, truth)
    except (errors.ClassroomError, PermissionError) as err:
        st.session_state[MESSAGE_KEY] = tr(failed, error=err)
        return
    _moved(moved, step, why_not)


def _moved(version: int | None, step: Step, why_not: str | None) -> None:
    """After the store moved the class to `step` (the room's `version` then; None: it did not move)."""
    if version is None:
        st.session_state[MESSAGE_KEY] = _held_why()
        return
    # The teacher's own move: this screen draws it in full now, so its watcher must not also push a redraw of its
    # bar; one pushed while the full run draws a new page makes the browser clear that page as stale.
    caught_up(store(), version)
    st.session_state[SHOW_KEY] = step.view
    if why_not:
        st.session_state[MESSAGE_KEY] = tr(
            "The step's question did not open with it ({why}): ask it with the button in the bar once the page shows "
            "it.",
            why=why_not,
        )


def step_question(step: Step) -> tuple[dict | None, Any, str | None]:
    """The step's question as the class will be asked it, built from the step's view by the page's declaration:
    (its body, its true value, None); (None, None, None) for a step without one; (None, None, why) when the page
    cannot build it from the view alone (a model's reading it computes when it runs): the bar then asks it."""
    if step.question is None:
        return None, None, None
    declared = declared_page(step.page)
    values, _ = declared.state.decode_link(step.view)
    picks = dict(step.question)
    kind, seconds = picks.pop("kind"), picks.pop("seconds", 0)
    try:
        body, truth = declared.ask(kind, values, picks)
    except ValueError as err:
        return None, None, str(err)
    if seconds:
        body["seconds"] = seconds
    body["view"] = view_link(step.page, declared.state.encode(every=True, values=values))  # as teacher_view writes it
    return body, truth, None


def _held_why() -> str:
    return tr(
        "The class did not move: a question is open (reveal it or end it first), or another of your tabs leads the "
        "class (press 'Lead from this tab' here)."
    )
