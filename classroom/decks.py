"""A lesson deck: the steps of a lesson a teacher prepares once and runs in a room with Next, as a TOML file.

    title = "Attention in 20 minutes"
    level = "First contact"          # who it is for, in a few words
    minutes = 20
    language = "en"                  # the language its notes are written in

    [[step]]
    title = "Two aligned vectors"
    view = "/?causal=0&scale=1"      # a relative link of the app: a page and its declared state
    notes = "What to say, what to ask, the usual wrong answer (the teacher's only)."
    student_notes = "Optional: what a student working alone reads."
    question = { kind = "weight", query = 1, key = 2, seconds = 60 }   # optional: one of the page's questions

A deck is input from a stranger (a colleague's file, an upload): `parse_deck` reads it with the standard library's
tomllib, within a size and step limit, and checks every field the way the app will use it. Each step's view is
decoded by its page's declared state (ui/declared): a value the page refuses or brings inside a bound is a
problem naming the step and the parameter, not something the class would discover on the projector. A question
names one of its page's questions (its kind) and the picks that question takes (a query, a key...), each
checked against what the page offers for that view; its true value is computed when the teacher asks it, from
the page as the class sees it. Nothing in a deck is run, and the app shows its text as text, never as markup.

    python -m classroom.decks check lessons/decks/*.toml     # one line per problem; exit 1 if any
"""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

from classroom import errors
from classroom.questions import MAX_SECONDS, MIN_SECONDS, NotShownYet, check_question, check_view
from locales import num, tr, tr_n

MAX_BYTES = 64_000  # a deck file; the three shipped ones are under 12 kB
MAX_STEPS = 30
TITLE_CHARS = 80
LEVEL_CHARS = 60
NOTES_CHARS = 2000
MAX_MINUTES = 240
LANGUAGES = ("en", "es", "zh_Hans")  # the languages a deck's notes may be written in
NOT_IN_A_VIEW = ("present", "lang")  # presentation and language are each screen's own, never a step's
DECKS_DIR = Path(__file__).resolve().parents[1] / "lessons" / "decks"
Pages = Callable[[str], Any]  # a lesson page's name -> its declared state and questions (ui.page_questions)


class DeckError(errors.ClassroomError):
    """A deck that cannot be used: `problems` holds one sentence per problem found."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Step:
    title: str
    view: str  # "/page?query", as written in the file
    notes: str = ""
    student_notes: str = ""
    question: dict | None = None  # {"kind": ..., the picks..., optionally "seconds"}

    @property
    def page(self) -> str:
        """The name of the step's page ("playground" for the app's root)."""
        return page_of(self.view)


@dataclass(frozen=True)
class Deck:
    title: str
    level: str
    minutes: int
    steps: tuple[Step, ...]
    language: str = "en"

    def to_dict(self) -> dict:
        """The deck as plain data (what the class store keeps, as JSON): `deck_from_dict` reads it back."""
        return {
            "title": self.title,
            "level": self.level,
            "minutes": self.minutes,
            "language": self.language,
            "step": [
                {
                    "title": s.title,
                    "view": s.view,
                    **({"notes": s.notes} if s.notes else {}),
                    **({"student_notes": s.student_notes} if s.student_notes else {}),
                    **({"question": dict(s.question)} if s.question else {}),
                }
                for s in self.steps
            ],
        }


def stored_deck(data: dict) -> Deck:
    """The deck a room stores (`Deck.to_dict`, checked by `parse_deck` before the room started it), read back
    without checking its views again."""
    steps = tuple(
        Step(s["title"], s["view"], s.get("notes", ""), s.get("student_notes", ""), s.get("question"))
        for s in data["step"]
    )
    return Deck(data["title"], data["level"], data["minutes"], steps, data.get("language", "en"))


def page_of(view: str) -> str:
    """The page a relative link opens: "/causal?t=2" is "causal", "/" and "/?..." are "playground"."""
    path = view.partition("?")[0].strip("/")
    return path or "playground"


def read_deck(path: str | Path, pages: Pages) -> Deck:
    """The deck in the file at `path`, checked (DeckError naming every problem, OSError if it cannot be read)."""
    data = Path(path).read_bytes()
    return parse_deck(data, pages)


def parse_deck(data: bytes | str, pages: Pages) -> Deck:
    """The deck a file's bytes hold, checked: DeckError with one sentence per problem. `pages(name)` gives a lesson
    page's declared state and questions (ui.declared.declared_page: this layer cannot import it), ValueError for a
    name that is not a lesson page."""
    raw = data.encode() if isinstance(data, str) else bytes(data)
    if len(raw) > MAX_BYTES:
        raise DeckError(
            [
                tr(
                    "the file is {size} bytes; a lesson file is at most {most}",
                    size=num(len(raw), ","),
                    most=num(MAX_BYTES, ","),
                )
            ]
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DeckError([tr("the file is not UTF-8 text: a lesson file is a TOML text file")]) from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise DeckError([tr("the file is not valid TOML: {error}", error=err)]) from None
    return deck_from_dict(document, pages)


def deck_from_dict(document: dict, pages: Pages) -> Deck:
    """The deck that plain data (a TOML document, or `Deck.to_dict`) describes, checked as `parse_deck` checks it."""
    problems: list[str] = []
    unknown = sorted(set(document) - {"title", "level", "minutes", "language", "step"})
    if unknown:
        names = ", ".join(map(repr, unknown))
        problems.append(
            tr_n("unknown field {names} at the top", "unknown fields {names} at the top", len(unknown), names=names)
        )
    # Translators: {where} in the problems of a lesson file ("{where}'s title must be text of ..."): the lesson itself
    lesson = tr("the lesson")
    title = _text(document, "title", TITLE_CHARS, problems, lesson)
    level = _text(document, "level", LEVEL_CHARS, problems, lesson)
    minutes = document.get("minutes")
    if isinstance(minutes, bool) or not isinstance(minutes, int) or not 1 <= minutes <= MAX_MINUTES:
        problems.append(
            tr(
                "the lesson's minutes must be a whole number from 1 to {most}, not {value}",
                most=MAX_MINUTES,
                value=repr(minutes),
            )
        )
    language = document.get("language", "en")
    if language not in LANGUAGES:
        problems.append(
            tr(
                "the lesson's language must be one of {languages}, not {value}",
                languages=", ".join(LANGUAGES),
                value=repr(language),
            )
        )
    raw_steps = document.get("step")
    if not isinstance(raw_steps, list) or not raw_steps:
        problems.append(tr("a lesson has at least one [[step]]"))
        raw_steps = []
    elif len(raw_steps) > MAX_STEPS:
        problems.append(tr("the lesson has {count} steps; at most {most}", count=len(raw_steps), most=MAX_STEPS))
        raw_steps = []
    steps = [_step(n, raw, pages, problems) for n, raw in enumerate(raw_steps, 1)]
    if problems:
        raise DeckError(problems)
    return Deck(title, level, minutes, tuple(steps), language)


def _text(table: dict, name: str, limit: int, problems: list[str], where: str, required: bool = True) -> str:
    value = table.get(name, None if required else "")
    if not isinstance(value, str) or (required and not value.strip()) or len(value) > limit:
        if required:
            # Translators: {where} is "the lesson" or "step 3 (its title)"; {field} a field of the file (title, notes)
            problem = tr(
                "{where}'s {field} must be text of 1 to {limit} characters, not {value}",
                where=where,
                field=name,
                limit=limit,
                value=_short(value),
            )
        else:
            # Translators: {where} is "the lesson" or "step 3 (its title)"; {field} a field of the file (title, notes)
            problem = tr(
                "{where}'s {field} must be text of at most {limit} characters, not {value}",
                where=where,
                field=name,
                limit=limit,
                value=_short(value),
            )
        problems.append(problem)
        return ""
    if any(ord(c) < 32 and c not in "\n\t" for c in value):
        # Translators: {where} is "the lesson" or "step 3 (its title)"; {field} a field of the file (title, notes)
        problems.append(tr("{where}'s {field} holds a control character", where=where, field=name))
    return value


def _step(n: int, raw: Any, pages, problems: list[str]) -> Step | None:
    # Translators: {where} in the problems of a lesson file ("{where}'s view: ..."): a step, by its number
    where = tr("step {number}", number=n)
    if not isinstance(raw, dict):
        problems.append(tr("{where} is not a table of fields", where=where))
        return None
    title = _text(raw, "title", TITLE_CHARS, problems, where)
    if title:
        # Translators: {where} in the problems of a lesson file ("{where}'s view: ..."): a step, its number and title
        where = tr("step {number} ({title})", number=n, title=title)
    unknown = sorted(set(raw) - {"title", "view", "notes", "student_notes", "question"})
    if unknown:
        names = ", ".join(map(repr, unknown))
        problems.append(
            tr_n(
                "{where} has unknown field {names}",
                "{where} has unknown fields {names}",
                len(unknown),
                where=where,
                names=names,
            )
        )
    notes = _text(raw, "notes", NOTES_CHARS, problems, where, required=False)
    student_notes = _text(raw, "student_notes", NOTES_CHARS, problems, where, required=False)
    view = raw.get("view")
    values = _check_view(view, where, pages, problems)
    question = raw.get("question")
    if question is not None:
        question = _check_question(question, view, values, where, pages, problems)
    return Step(title, view if isinstance(view, str) else "", notes, student_notes, question)


def _check_view(view: Any, where: str, pages, problems: list[str]) -> dict | None:
    """The values the step's page shows for `view` (None: the view is refused, with its problems added)."""
    try:
        check_view(view)
    except errors.InvalidView as err:
        problems.append(tr("{where}'s view: {error}", where=where, error=err))
        return None
    path, _, query = view.partition("?")
    if "#" in view or "://" in view or path.count("/") > 1:
        problems.append(
            tr(
                "{where}'s view must be a page of the app and its parameters ('/causal?t=2'), not {view}",
                where=where,
                view=repr(view),
            )
        )
        return None
    try:
        declared = pages(page_of(view))
    except ValueError as err:
        problems.append(tr("{where}'s view: {error}", where=where, error=err))
        return None
    pairs = parse_qsl(query, keep_blank_values=True)
    names = [name for name, _ in pairs]
    found = len(problems)
    for name in sorted({name for name in names if names.count(name) > 1}):
        problems.append(tr("{where}'s view gives {name} more than once", where=where, name=repr(name)))
    known = {u for name, param in declared.state.params.items() for u in param.url_names(name)}
    for name in sorted(set(names) - known):
        if name in NOT_IN_A_VIEW:
            problems.append(
                tr(
                    "{where}'s view holds {name}: presentation and language are each screen's own",
                    where=where,
                    name=repr(name),
                )
            )
        else:
            problems.append(
                tr(
                    "{where}'s view: the page {page} has no parameter {name} (it has {known})",
                    where=where,
                    page=page_of(view),
                    name=repr(name),
                    known=", ".join(sorted(known)),
                )
            )
    if len(problems) > found:
        return None
    try:
        values, warnings = declared.state.decode(dict(pairs))
    except ValueError as err:  # a value a page's bound cannot be worked out for (an empty text for the model)
        problems.append(tr("{where}'s view: {error}", where=where, error=err))
        return None
    problems += [tr("{where}'s view: {error}", where=where, error=warning) for warning in warnings]
    return values if not warnings else None


def _check_question(question: Any, view: Any, values, where: str, pages, problems: list[str]) -> dict | None:
    if not isinstance(question, dict) or not isinstance(question.get("kind"), str):
        problems.append(
            tr('{where}\'s question must be a table with a kind, e.g. {{ kind = "weight", query = 1 }}', where=where)
        )
        return None
    if values is None:
        return None  # the view is refused: its problem is said already
    declared = pages(page_of(view))
    kind = question["kind"]
    try:
        asked = declared.by_kind(kind)
    except ValueError:
        kinds = ", ".join(q.kind for q in declared.questions)
        problems.append(
            tr(
                "{where}'s question: the page {page} has no question {kind} (it has {kinds})",
                where=where,
                page=page_of(view),
                kind=repr(kind),
                kinds=kinds,
            )
        )
        return None
    picks = {pick.name: pick for pick in asked.picks}
    found = len(problems)
    unknown = sorted(set(question) - {"kind", "seconds", *picks})
    if unknown:
        names = ", ".join(map(repr, unknown))
        if picks:
            problems.append(
                tr(
                    "{where}'s question {kind} takes {picks} (and seconds), not {names}",
                    where=where,
                    kind=repr(kind),
                    picks=", ".join(picks),
                    names=names,
                )
            )
        else:
            problems.append(
                tr(
                    "{where}'s question {kind} takes no picks (and seconds), not {names}",
                    where=where,
                    kind=repr(kind),
                    names=names,
                )
            )
    for name, pick in picks.items():
        options = list(pick.options(values))
        value = question.get(name, options[0] if options else None)
        if isinstance(value, bool) or value not in options:
            if len(options) <= 12:
                shown = ", ".join(map(str, sorted(options)))
            else:
                # Translators: the options of a pick, when there are many: "0 to 15"
                shown = tr("{first} to {last}", first=min(options), last=max(options))
            problems.append(
                tr(
                    "{where}'s question {kind}: {pick} must be one the view offers ({shown}), not {value}",
                    where=where,
                    kind=repr(kind),
                    pick=name,
                    shown=shown,
                    value=repr(value),
                )
            )
    if len(problems) == found:  # asked as the teacher's click will ask it: the page may refuse it for this view
        picked = {name: question[name] for name in picks if name in question}
        try:
            check_question(declared.ask(kind, values, picked)[0])
        except NotShownYet:
            pass  # read from what the page computes when the step opens (a model's reading, a measurement)
        except ValueError as err:  # the page's refusal, or the store's (InvalidQuestion is a ValueError)
            problems.append(
                tr(
                    "{where}'s question {kind} cannot be asked of this view: {error}",
                    where=where,
                    kind=repr(kind),
                    error=err,
                )
            )
    seconds = question.get("seconds")
    if seconds is not None and (
        isinstance(seconds, bool) or not isinstance(seconds, int) or not MIN_SECONDS <= seconds <= MAX_SECONDS
    ):
        problems.append(
            tr(
                "{where}'s question: seconds must be a whole number from {least} to {most}",
                where=where,
                least=MIN_SECONDS,
                most=MAX_SECONDS,
            )
        )
    return dict(question)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# ------------------------------------------------------------------ writing a deck back
def to_toml(deck: Deck) -> str:
    """The deck as a TOML file that `parse_deck` reads back as the same deck (the editor's download)."""
    lines = [
        f"title = {_toml_string(deck.title)}",
        f"level = {_toml_string(deck.level)}",
        f"minutes = {deck.minutes}",
        f"language = {_toml_string(deck.language)}",
    ]
    for step in deck.steps:
        lines += ["", "[[step]]", f"title = {_toml_string(step.title)}", f"view = {_toml_string(step.view)}"]
        if step.notes:
            lines.append(f"notes = {_toml_string(step.notes)}")
        if step.student_notes:
            lines.append(f"student_notes = {_toml_string(step.student_notes)}")
        if step.question:
            fields = ", ".join(f"{k} = {_toml_value(v)}" for k, v in step.question.items())
            lines.append(f"question = {{ {fields} }}")
    return "\n".join(lines) + "\n"


def _toml_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return _toml_string(str(value))


def view_link(page: str, query: dict[str, str]) -> str:
    """The relative link of `page` (a lesson page's name) with `query`, as a step's view holds it."""
    path = "/" if page == "playground" else f"/{page}"
    return path + ("?" + urlencode(query) if query else "")


def shipped(pages: Pages | None = None) -> dict[str, Deck]:
    """The lessons that ship with the app, by title, in the order their files sort: checked against `pages` (as
    `check` does), or with `pages=None` read as shipped, trusted, since tests/test_decks.py checks every one. The app
    reads them so: checking builds every question (truths, a model's tokenizer), a second or more per server process
    spent on a student's first visit to /class for what the tests already hold."""
    decks = {}
    for path in sorted(DECKS_DIR.glob("*.toml")):
        deck = read_deck(path, pages) if pages is not None else stored_deck(tomllib.loads(path.read_text("utf-8")))
        decks[deck.title] = deck
    return decks


# ------------------------------------------------------------------ the command line
def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] != "check":
        print("usage: python -m classroom.decks check FILE...", file=sys.stderr)
        return 2
    # The one import of this layer from the app's: a deck is checked against the pages' declarations, as the app
    # checks it when a teacher loads it (tests/test_imports.py names this exception). Outside a server Streamlit
    # warns at every session-state read ("missing ScriptRunContext"): only errors are worth a teacher's eye here.
    import logging

    from ui.declared import declared_page

    logging.disable(logging.WARNING)  # this command's own process only

    failed = 0
    for name in argv[1:]:
        try:
            deck = read_deck(name, declared_page)
        except OSError as err:
            print(f"{name}: cannot read it: {err.strerror or err}")
            failed += 1
        except DeckError as err:
            for problem in err.problems:
                print(f"{name}: {problem}")
            failed += 1
        else:
            asked = sum(step.question is not None for step in deck.steps)
            print(f"{name}: ok, {deck.title!r}, {len(deck.steps)} steps, {asked} questions, {deck.minutes} minutes")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
