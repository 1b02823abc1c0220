"""Questions a teacher asks the class, and the answers they accept. Pure functions, no database.

A question is a dict the page builds, with a `kind`:
- "choice": `options`, the labels a student picks from (2 to 64); an answer is the index of one. Its true
  value is the list of every right option (several on a tie: each is right).
- "number": `lo` and `hi`; an answer is a number between them (a weight: 0 and 1). Its true value is a
  number; an answer within the question's `tolerance` of it (0 if not given) is right.
- "build": `goal`, what the student is to build on the page (a dict the page reads); an answer is the student's
  solution: its `view` (a relative link of the app, checked like any link), and the verdict the server worked out
  from it, `solved` (true or false) and `said` (its sentence). It has no true value.
- "row": `n` (2 to 64) and optional `labels` (one per key); an answer is a row of attention weights: n finite
  numbers in [0, 1] that sum to 1 (within ROW_SUM). Its true value is a row too; an answer whose every weight is
  within the question's `tolerance` of the true one is right.
All carry a `prompt` (plain text, shown as text). Anything else the page puts in (the puzzle, the
cell, the query, the view it was asked on) is kept as it is, for the page and the CSV export.

A question is language-free when it carries `values`: then its prompt and its options are messages of the
catalogue (marked in the page's code with `marked`) with `{named}` placeholders, and `values` fills them (texts
as they are, numbers written in the reader's style), so that each student reads it in their own language
(`prompt_text`, `option_texts`) while an answer stays an index or a number. A choice question may add
`option_values`, one dict per option, filling that option's own placeholders (an option that is a token as typed
is the message "{token}" with its own value: never translated). A question without `values` reads as written.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from classroom import errors
from classroom.errors import InvalidAnswer, InvalidQuestion
from classroom.schema import VIEW_CHARS
from locales import num, placeholders, tr

KINDS = ("choice", "number", "row", "build")
SAID_CHARS = 300  # a build verdict's sentence
ROW_SUM = 1e-6  # how far from 1 a row's weights may sum
MAX_OPTIONS = 64
OPTION_CHARS = 80
PROMPT_CHARS = 300
BODY_CHARS = 8000
MIN_SECONDS, MAX_SECONDS = 10, 3600  # a question's optional time for answers ("seconds")


class NotShownYet(ValueError):
    """A page's question reads what the page computes when it runs (a measurement, a model's reading), and the page
    has not shown it yet: once it has, the question can be asked. A lesson deck's check takes it as no problem."""


def check_question(question: Any) -> dict:
    """The question as stored, after checking it; InvalidQuestion naming what is wrong."""
    if not isinstance(question, dict):
        raise InvalidQuestion(
            tr("a question is a dict with a kind and a prompt, not {type}", type=type(question).__name__)
        )
    kind, prompt = question.get("kind"), question.get("prompt")
    if kind not in KINDS:
        raise InvalidQuestion(
            tr("a question's kind must be one of {kinds}, not {kind}", kinds=", ".join(KINDS), kind=repr(kind))
        )
    values = _check_values(question)
    if not isinstance(prompt, str) or not 0 < len(_english(prompt, values).strip()) <= PROMPT_CHARS:
        raise InvalidQuestion(tr("a question needs a prompt of 1 to {chars} characters", chars=PROMPT_CHARS))
    if kind == "choice":
        options = question.get("options")
        if not isinstance(options, list) or not 2 <= len(options) <= MAX_OPTIONS:
            raise InvalidQuestion(tr("a choice question needs a list of 2 to {most} options", most=MAX_OPTIONS))
        own = _option_values(question, values, len(options))
        if not all(isinstance(o, str) and 0 < len(_english(o, v)) <= OPTION_CHARS for o, v in zip(options, own)):
            raise InvalidQuestion(tr("every option must be text of 1 to {chars} characters", chars=OPTION_CHARS))
    elif kind == "build":
        if not isinstance(question.get("goal"), dict) or not question["goal"]:
            raise InvalidQuestion(tr("a build question needs its goal, a dict the page reads"))
    elif kind == "row":
        n, labels = question.get("n"), question.get("labels")
        if isinstance(n, bool) or not isinstance(n, int) or not 2 <= n <= MAX_OPTIONS:
            raise InvalidQuestion(
                tr("a row question needs n, its number of keys, from 2 to {most}, not {n}", most=MAX_OPTIONS, n=repr(n))
            )
        if labels is not None and not (
            isinstance(labels, list)
            and len(labels) == n
            and all(isinstance(o, str) and 0 < len(o) <= OPTION_CHARS for o in labels)
        ):
            raise InvalidQuestion(
                tr("a row question's labels are {n} texts of 1 to {chars} characters", n=n, chars=OPTION_CHARS)
            )
        tolerance = question.get("tolerance", 0)
        if not (_finite(tolerance) and 0 <= tolerance <= 1):
            raise InvalidQuestion(
                tr("a row question's tolerance must be from 0 to 1, not {tolerance}", tolerance=repr(tolerance))
            )
    else:
        lo, hi = question.get("lo"), question.get("hi")
        if not (_finite(lo) and _finite(hi) and lo < hi):
            raise InvalidQuestion(
                tr("a number question needs finite bounds lo < hi, got lo={lo}, hi={hi}", lo=repr(lo), hi=repr(hi))
            )
        tolerance = question.get("tolerance", 0)
        if not (_finite(tolerance) and 0 <= tolerance <= hi - lo):
            raise InvalidQuestion(
                tr(
                    "a number question's tolerance must be from 0 to {most}, not {tolerance}",
                    most=num(hi - lo, "g"),
                    tolerance=repr(tolerance),
                )
            )
    seconds = question.get("seconds")
    if seconds is not None and (
        isinstance(seconds, bool) or not isinstance(seconds, int) or not MIN_SECONDS <= seconds <= MAX_SECONDS
    ):
        raise InvalidQuestion(
            tr(
                "a question's time for answers is {least} to {most} s, not {seconds}",
                least=MIN_SECONDS,
                most=MAX_SECONDS,
                seconds=repr(seconds),
            )
        )
    try:
        encoded = json.dumps(question, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise InvalidQuestion(tr("a question must be plain JSON data: {error}", error=str(err))) from None
    if len(encoded) > BODY_CHARS:
        raise InvalidQuestion(
            tr("the question is {chars} characters as JSON; at most {most}", chars=len(encoded), most=BODY_CHARS)
        )
    return json.loads(encoded)


def _check_values(question: dict, key: str = "values") -> dict | None:
    """A language-free question's `values` (named texts and finite numbers), or None for a question written out."""
    values = question.get(key)
    if values is None:
        return None
    if not _named_values(values):
        raise InvalidQuestion(f"a question's {key} are named texts and finite numbers")
    return values


def _named_values(values: Any) -> bool:
    return isinstance(values, dict) and all(
        isinstance(k, str) and k.isidentifier() and (isinstance(v, str) or _finite(v)) for k, v in values.items()
    )


def _option_values(question: dict, values: dict | None, n: int) -> list[dict | None]:
    """Each option's values: the question's, and the option's own from `option_values` (a language-free question's)."""
    own = question.get("option_values")
    if own is None:
        return [values] * n
    if values is None or not isinstance(own, list) or len(own) != n or not all(_named_values(v) for v in own):
        raise InvalidQuestion(f"a language-free question's option_values are {n} dicts of named texts and numbers")
    return [{**values, **v} for v in own]


def _english(message: Any, values: dict | None) -> str:
    """A question's text as it reads in English (the message filled); InvalidQuestion if a placeholder has no value."""
    if not isinstance(message, str) or values is None:
        return message if isinstance(message, str) else ""
    missing = placeholders(message) - set(values)
    if missing:
        raise InvalidQuestion(f"the question's text {message[:40]!r} names {sorted(missing)} without a value")
    return message.format(**{k: v if isinstance(v, str) else format(v, "g") for k, v in values.items()})


def question_text(question: dict, message: str) -> str:
    """One of a question's texts (its prompt, an option) in the session's language: a language-free question's
    message translated and filled with its values (numbers in the language's style); any other as written."""
    values = question.get("values")
    if values is None:
        return message
    return tr(message, **{k: v if isinstance(v, str) else num(v) for k, v in values.items()})


def prompt_text(question: dict) -> str:
    """The question's prompt in the session's language."""
    return question_text(question, question["prompt"])


def option_texts(question: dict) -> list[str]:
    """A choice question's options in the session's language, in their order (an answer is an index)."""
    own = question.get("option_values") or [{}] * len(question["options"])
    return [
        question_text({**question, "values": {**question.get("values", {}), **v}}, o)
        for o, v in zip(question["options"], own, strict=True)
    ]


def check_answer(question: dict, value: Any) -> int | float | list[float]:
    """The answer as stored: an option's index, a number within the bounds, or a row of weights; InvalidAnswer
    naming the problem otherwise."""
    if question["kind"] == "row":
        return check_row(value, question["n"])
    if question["kind"] == "build":
        solution = check_solution(value)
        page = (question.get("source") or {}).get("page")
        path = solution["view"].partition("?")[0]
        if isinstance(page, str) and path != page_path(page):
            raise InvalidAnswer(
                tr("a solution is a view of the challenge's page ({page}), not of {path}", page=page, path=path)
            )
        return solution
    if question["kind"] == "choice":
        n = len(question["options"])
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < n:
            raise InvalidAnswer(
                tr("the answer must be the number of one of the {n} options (0 to {last})", n=n, last=n - 1)
            )
        return int(value)
    lo, hi = question["lo"], question["hi"]
    if isinstance(value, bool) or not _finite(value) or not lo <= value <= hi:
        raise InvalidAnswer(tr("the answer must be a number from {lo} to {hi}", lo=num(lo, ""), hi=num(hi, "")))
    return float(value)


def page_path(page: str) -> str:
    """The path of the page a question's source names ("playground" is the app's root, "/")."""
    return "/" if page == "playground" else f"/{page}"


def check_solution(value: Any) -> dict:
    """A build question's answer as stored: {"view", "solved", "said"}; InvalidAnswer naming the problem."""
    if not isinstance(value, dict) or set(value) != {"view", "solved", "said"}:
        raise InvalidAnswer(tr("a solution is its view, the verdict (solved) and its sentence (said), nothing else"))
    try:
        view = check_view(value["view"])
    except errors.InvalidView as err:
        # Translators: "a solution's" + why its view is refused ("a view is a link within the app...")
        raise InvalidAnswer(tr("a solution's {error}", error=str(err))) from None
    if not isinstance(value["solved"], bool):
        raise InvalidAnswer(tr("a solution's verdict is true or false, not {verdict}", verdict=repr(value["solved"])))
    said = value["said"]
    if not isinstance(said, str) or not 0 < len(said) <= SAID_CHARS or _CONTROL.search(said):
        raise InvalidAnswer(tr("a solution's sentence is 1 to {chars} characters of text", chars=SAID_CHARS))
    return {"view": view, "solved": value["solved"], "said": said}


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_view(view: Any) -> str:
    """A view of the app: a relative link within it ("/page?query"), never another site."""
    if not isinstance(view, str) or not view.startswith("/") or view.startswith("//"):
        raise errors.InvalidView(
            tr("a view is a link within the app starting with '/', not {view}", view=repr(str(view)[:40]))
        )
    if len(view) > VIEW_CHARS or _CONTROL.search(view) or "\\" in view:
        raise errors.InvalidView(
            tr("a view is at most {chars} characters of a link, without control characters", chars=VIEW_CHARS)
        )
    return view


def check_row(value: Any, n: int) -> list[float]:
    """A row of n attention weights as stored; InvalidAnswer naming the first problem."""
    if not isinstance(value, (list, tuple)):
        raise InvalidAnswer(tr("a row is a list of {n} weights, not {type}", n=n, type=type(value).__name__))
    if len(value) != n:
        raise InvalidAnswer(tr("a row has {n} weights, one per key; this one has {count}", n=n, count=len(value)))
    for j, w in enumerate(value):
        if not _finite(w):
            raise InvalidAnswer(
                tr("weight {index} of the row is {weight}, not a finite number", index=j, weight=repr(w))
            )
        if not 0 <= w <= 1:
            raise InvalidAnswer(
                tr("weight {index} of the row is {weight}: a weight is from 0 to 1", index=j, weight=num(w, "g"))
            )
    total = math.fsum(value)
    if abs(total - 1) > ROW_SUM:
        raise InvalidAnswer(
            tr("the row's weights sum to {total}: a row of attention weights sums to 1", total=num(total, ".6g"))
        )
    return [float(w) for w in value]


def row_labels(question: dict) -> list[str]:
    """A row question's key labels, as the page named them (tokens, never translated), or "key 0", "key 1"..."""
    return list(question.get("labels") or [tr("key {index}", index=j) for j in range(question["n"])])


def check_truth(question: dict, truth: Any) -> list[int] | float | list[float]:
    """The true value as stored: every right option's index (a list, sorted, no repeats; one index is a list of
    one), a number within the bounds, or a row; InvalidAnswer naming the problem otherwise (a build question has
    none)."""
    if question["kind"] == "build":
        raise InvalidAnswer(tr("a build question has no true value: each solution carries its verdict"))
    if question["kind"] == "choice":
        found = truth if isinstance(truth, (list, tuple)) else [truth]
        if not found:
            raise InvalidAnswer(tr("a choice question's true value names at least one option"))
        return sorted({check_answer(question, value) for value in found})
    return check_answer(question, truth)


def right_options(question: dict, truth: Any) -> list[int]:
    """The options a stored true value makes right (a choice question's; none for a number question)."""
    if truth is None or question["kind"] != "choice":
        return []
    return [int(t) for t in (truth if isinstance(truth, list) else [truth])]


def is_right(question: dict, truth: Any, value: Any) -> bool | None:
    """Whether answer `value` is right by the true value `truth`: one of the right options, or a number within the
    question's tolerance; None when there is nothing to judge (no true value, or no answer)."""
    if question["kind"] == "build":
        return None if value is None else bool(value["solved"])
    if truth is None or value is None:
        return None
    if question["kind"] == "choice":
        return int(value) in right_options(question, truth)
    if question["kind"] == "row":
        slack = question.get("tolerance", 0) + 1e-12
        return all(abs(float(a) - float(t)) <= slack for a, t in zip(value, truth, strict=True))
    return abs(float(value) - float(truth)) <= question.get("tolerance", 0) + 1e-12  # a tolerance's rounding


def answer_label(question: dict, value: Any) -> str:
    """An answer (or a true value) as a person reads it: the option's label, the labels of every right option
    joined by "or", or the number."""
    if value is None:
        return ""
    if question["kind"] == "choice":
        options = option_texts(question)
        if isinstance(value, list):
            # Translators: joins the labels of every right option: "north or east"
            return tr(" or ").join(options[int(v)] for v in value)
        return options[int(value)]
    if question["kind"] == "build":
        if value["solved"]:
            return tr("{view} (solved: {said})", view=value["view"], said=value["said"])
        return tr("{view} (not solved: {said})", view=value["view"], said=value["said"])
    if question["kind"] == "row":
        # Translators: between the weights of a row: "0.25, 0.75" (a Spanish row is written "0,25; 0,75")
        return tr(", ").join(num(float(w), ".2f") for w in value)
    return num(value, "g")


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
