"""A number box that reads what a student types by the Playground's rule, or refuses it and says why.

Streamlit's `st.number_input` parses typed text in the browser and sends only its own reading: in a box of
whole numbers `1e3` becomes 1, `2.5` becomes 2 and `1,5` becomes 15, without a word. This box is a text box
(`st.text_input`: Enter or leaving the box applies it) read on the server by `ui.sequence.number_text`, the
rule of the grid and the paste box, so a number is read the same wherever it is typed:

- accepted: `7`, `1e3` (1000), `1000.0` in a box of whole numbers (it is a whole number), `−3`, ` 5 `;
  the box then shows the number it holds, written plainly (1000).
- refused, with a message under the box's row naming the box, what was typed and the allowed range: not one number
  (`1,5`, `abc`, `0x10`), NaN and infinities, an empty box (unless the box is optional), a fraction in a
  box of whole numbers (`2.5`), a number outside the bounds. The box keeps what was typed, and the page
  keeps computing with the last accepted value; the message says which. A refused text is read again on each
  run by the box's bounds then: when a bound that depends on another box moves, the message names the new
  bounds, and a text that fits them now is taken, and the page says so (unless the same move brought back a value the
  bound had held down: that value returns, and the text is named as not taken).

The value lives under `key` in session state, as a widget's would (a page's declared state reads it there:
`STATE.widget(name)` gives the key, the bounds and the persistence); the text box has the key `box_key(key)`.
A value changed by anything else (a link, a button, a bound that moved and clamped it) is written into the
box on the next run; a refused text it replaces is named once in a note under the box.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import streamlit as st

from locales import tr
from ui.safe_text import escape_markdown
from ui.sequence import decimal_comma, format_number, number_text, quoted

Number = int | float


def box_key(key: str) -> str:
    """The key of the text box that holds the typed text of the number under `key`."""
    return f"{key}_box"


RECORDS = "_number_boxes"  # one session entry holds every box's record: Streamlit copies each entry twice a run


def _record(key: str) -> dict:
    """The record of the box of `key`: "shows", the number its text was last set to; "refused", whether the
    text it holds was refused."""
    return st.session_state.setdefault(RECORDS, {}).setdefault(key, {})


def whole_numbers(lo: Number, hi: Number) -> bool:
    """Whether a box with these bounds takes whole numbers only (both bounds are ints)."""
    return all(isinstance(b, int) and not isinstance(b, bool) for b in (lo, hi))


def written(x: Number | None) -> str:
    """A number as the box shows it: plainly (1000, 0.7; 0,7 where the session's language writes a decimal comma),
    in the form the box reads back as the same number."""
    if x is None:
        return ""
    return str(x) if isinstance(x, int) else format_number(x, comma=decimal_comma())


# The bounds in the messages below are written as the box reads them (`written`: 0.5 in English, 0,5 in Spanish).


def allowed(lo: Number, hi: Number, *, optional: bool = False) -> str:
    """What the box takes, in words: "a whole number from 0 to 9999"."""
    bounds = {"lo": written(lo), "hi": written(hi)}
    if whole_numbers(lo, hi):
        if optional:
            return tr("a whole number from {lo} to {hi}, or nothing", **bounds)
        return tr("a whole number from {lo} to {hi}", **bounds)
    if optional:
        return tr("a number from {lo} to {hi}, or nothing", **bounds)
    return tr("a number from {lo} to {hi}", **bounds)


def typing_rule(lo: Number, hi: Number, *, optional: bool = False) -> str:
    """The box's help: what to type, then Enter ("Type a whole number from 0 to 9999, then press Enter.")."""
    bounds = {"lo": written(lo), "hi": written(hi)}
    if whole_numbers(lo, hi):
        if optional:
            return tr("Type a whole number from {lo} to {hi}, or nothing, then press Enter.", **bounds)
        return tr("Type a whole number from {lo} to {hi}, then press Enter.", **bounds)
    if optional:
        return tr("Type a number from {lo} to {hi}, or nothing, then press Enter.", **bounds)
    return tr("Type a number from {lo} to {hi}, then press Enter.", **bounds)


def read_number(text: str, label: str, lo: Number, hi: Number, *, optional: bool = False) -> Number | None:
    """The number `text` says, exactly, if the box takes it; else ValueError naming `label` and the text.

    An int if the bounds are ints (`1e3` is 1000, `2.5` is refused), else a float; None for an empty
    optional box."""
    if not text.strip():
        if optional:
            return None
        raise ValueError(tr("{label}: the box is empty", label=label))
    shown = quoted(text)
    whole = whole_numbers(lo, hi)
    exact = Decimal(number_text(text, label, whole=whole))  # exact: 1.0000000000000001 is not a whole number
    if whole and exact != exact.to_integral_value():
        raise ValueError(tr("{label}: '{typed}' is not a whole number", label=label, typed=shown))
    if exact < lo:
        raise ValueError(tr("{label}: '{typed}' is less than {lo}", label=label, typed=shown, lo=written(lo)))
    if exact > hi:
        raise ValueError(tr("{label}: '{typed}' is more than {hi}", label=label, typed=shown, hi=written(hi)))
    return int(exact) if whole else float(exact)


def refusal(err: ValueError, lo: Number, hi: Number, kept: Number | None, *, optional: bool = False) -> str:
    """The message under a box that refused what was typed: why, what it takes, what the page still uses."""
    values = {"reason": err, "lo": written(lo), "hi": written(hi)}
    if whole_numbers(lo, hi):
        if optional:
            why = tr("{reason}. Allowed: a whole number from {lo} to {hi}, or nothing.", **values)
        else:
            why = tr("{reason}. Allowed: a whole number from {lo} to {hi}.", **values)
    elif optional:
        why = tr("{reason}. Allowed: a number from {lo} to {hi}, or nothing.", **values)
    else:
        why = tr("{reason}. Allowed: a number from {lo} to {hi}.", **values)
    if kept is None:
        still = tr("The page still has no value.")
    else:
        still = tr("The page still uses {value}.", value=written(kept))
    return f"{why} {still}"


def _commit(
    key: str, label: str, lo: Number, hi: Number, optional: bool, on_change: Callable | None, args: tuple
) -> None:
    """The box's callback (Enter, or leaving the box): take the number typed, or keep the old one and say why."""
    text = st.session_state[box_key(key)]
    before = st.session_state.get(key)
    try:
        value = read_number(text, label, lo, hi, optional=optional)
    except ValueError:
        _record(key)["refused"] = True  # the message is written when the box is drawn, by its bounds then
        return
    _take(key, value, before, on_change, args)


def _take(key: str, value: Number | None, before: Number | None, on_change: Callable | None, args: tuple) -> None:
    st.session_state[key] = value
    st.session_state[box_key(key)] = written(value)
    record = _record(key)
    record["shows"] = value
    record.pop("refused", None)
    if on_change is not None and value != before:
        on_change(*args)


def forget_number(key: str) -> None:
    """Remove a box's number and text from the session (a widget's state goes when it is not drawn; a number
    box's stays, as a page's declared state must): for a box that will never be drawn again."""
    for name in (key, box_key(key)):
        st.session_state.pop(name, None)
    st.session_state.get(RECORDS, {}).pop(key, None)


def number_box(
    where: Any,
    label: str,
    *,
    key: str,
    min_value: Number,
    max_value: Number,
    value: Number | None = None,
    optional: bool = False,
    help: str | None = None,
    on_change: Callable | None = None,
    args: tuple = (),
    placeholder: str | None = None,
    disabled: bool = False,
    persist_state: str | None = None,
) -> Number | None:
    """Draw the box in `where` (st or a column) and return the number the page computes with. A refusal is
    shown below, in the container the page is drawing in (after the row of columns `where` belongs to).

    `key`, `min_value`, `max_value`, `persist_state`: as `STATE.widget(name)` gives them. `value`: the
    starting value where nothing holds one yet (a box outside a page's declared state); `optional`: an
    empty box is a value too (None). `on_change(*args)` runs after a new number was taken.
    """
    if key not in st.session_state:
        st.session_state[key] = value if value is not None or optional else min_value
    current = st.session_state[key]
    text_key, record = box_key(key), _record(key)
    dropped = None
    comma = decimal_comma()
    if record.get("comma", False) != comma and not record.get("refused"):
        record.pop("shows", None)  # the language changed: the value held is written again as it writes numbers
    record["comma"] = comma
    if text_key not in st.session_state or record.get("shows", _MISSING) != current:
        if record.pop("refused", None) and text_key in st.session_state:
            # A refused text replaced by a value set elsewhere (a button pressed while the box still held it
            # refused in the same run, a link, a clamp): say so, or the text vanishes without a word.
            typed = quoted(st.session_state[text_key])
            dropped = tr(
                "{label}: '{typed}' was not taken; the page now uses {value}.",
                label=label,
                typed=typed,
                value=written(current),
            )
        st.session_state[text_key] = written(current)  # set elsewhere, or the box is new: show the value held
        record["shows"] = current
    refused, taken = _refused_now(key, label, min_value, max_value, optional, on_change, args)
    rule = typing_rule(min_value, max_value, optional=optional)
    where.text_input(
        label,
        key=text_key,
        help=f"{help} {rule}" if help else rule,
        on_change=_commit,
        args=(key, label, min_value, max_value, optional, on_change, tuple(args)),
        placeholder=placeholder,
        disabled=disabled,
        autocomplete="off",
        icon=":material/error:" if refused else None,  # the box that refused, marked in its row
        persist_state=persist_state,
    )
    if refused:
        # Below the row the box is in, at the width of what the page is drawing (a column is often too narrow
        # for a sentence): it names the box.
        st.error(escape_markdown(refused), icon=":material/block:")  # it quotes what was typed
    if taken or dropped:
        st.caption(escape_markdown(taken or dropped))  # it may quote what was typed
    return st.session_state[key]


def _refused_now(
    key: str, label: str, lo: Number, hi: Number, optional: bool, on_change: Callable | None, args: tuple
) -> tuple[str | None, str | None]:
    """(The refusal to show under the box, or None; what was taken, or None), read by today's bounds.

    A refused text is read again on every run: a bound that depends on another box may have moved since
    (d_ff 100 refused while d_model = 16 allows 64; then d_model = 32 allows 128). Still refused, the message
    names the bounds the box has now. Fitting now, it is taken as typed (Enter on an unchanged text sends
    nothing, so the student could not take it), the way a value a bound held back comes back when it fits,
    and the page says so."""
    if not _record(key).get("refused"):
        return None, None
    text, before = st.session_state[box_key(key)], st.session_state[key]
    try:
        value = read_number(text, label, lo, hi, optional=optional)
    except ValueError as err:
        return refusal(err, lo, hi, before, optional=optional), None
    _take(key, value, before, on_change, args)
    return None, _taken(label, value, lo, hi, optional)


def _taken(label: str, value: Number | None, lo: Number, hi: Number, optional: bool) -> str:
    """What the page says when a refused text fits the box's bounds now, and is taken."""
    values = {"label": label, "value": written(value), "lo": written(lo), "hi": written(hi)}
    if whole_numbers(lo, hi):
        if optional:
            return tr(
                "{label}: {value}, as typed, is taken: it fits now (a whole number from {lo} to {hi}, or nothing).",
                **values,
            )
        return tr("{label}: {value}, as typed, is taken: it fits now (a whole number from {lo} to {hi}).", **values)
    if optional:
        return tr(
            "{label}: {value}, as typed, is taken: it fits now (a number from {lo} to {hi}, or nothing).", **values
        )
    return tr("{label}: {value}, as typed, is taken: it fits now (a number from {lo} to {hi}).", **values)


_MISSING = object()
