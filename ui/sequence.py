"""The text forms of the sequence the pages edit (attention.sequence.TokenSequence): matrices as text,
token labels, and the limits of what the editor accepts.

Pure Python and numpy (no streamlit), so every parsing and encoding rule is tested directly.
"""

from __future__ import annotations

import re
from decimal import Decimal

import numpy as np

from attention.sequence import TokenSequence, default_tokens
from lessons.examples import compass
from locales import DECIMAL_COMMA, language, marked, num, tr, tr_n

MAX_N = 16
MAX_D = 16
MAX_ABS_VALUE = 1000.0
MAX_TOKEN_CHARS = 24
MAX_PARAM_CHARS = 4000  # a URL parameter longer than this is refused before it is parsed


def default_sequence() -> TokenSequence:
    """The Playground's starting point: the hand-built compass example."""
    return compass().seq


# ---------------------------------------------------------------- text form of a matrix

_ROW_SPLIT = re.compile(r"[;\n]")
_VALUE_SPLIT = re.compile(r"[\s,]+")

# The one rule for a comma, in the grid and in the paste box alike: a comma is never a decimal point, and
# between two numbers it separates them only with a space after it ("3, 5"). So "3,5" is refused in both
# places, instead of being two numbers in one box and an error in the other.
COMMA_RULE = marked(
    "A decimal point is '.', never ','; in the paste box a comma between numbers needs a space after it."
)
# Where the session's language writes a decimal comma (locales.DECIMAL_COMMA: Spanish), "3,5" is three and a half
# in every editor (the grid, the paste box, the number boxes) and "3.5" too; a comma then never separates numbers:
# spaces do, and ";" or a new line separates rows. A link's numbers are always written one way ("1,0;0,1": bare
# commas between numbers, a decimal point), whatever the language.
DECIMAL_COMMA_RULE = marked("The decimal mark is ',' (or '.'): numbers are separated by spaces, never by commas.")


def decimal_comma() -> bool:
    """Whether the session's language writes a decimal comma, which its editors then read and write."""
    return language() in DECIMAL_COMMA


def parse_matrix(
    text: str, rows: int | None = None, cols: int | None = None, name: str = "matrix", *, bare_commas: bool = False
) -> np.ndarray:
    """Parse `1 0 0; 0 1 0` (or one row per line; `1, 0, 0` too) into a float array.

    Raises ValueError with a message a student can act on: which row, which value, what was expected.
    Values must be finite and at most MAX_ABS_VALUE in size; with `rows`/`cols`, the shape must match.
    A comma between digits (`3,5`) is refused as `parse_number` refuses it (COMMA_RULE), unless
    `bare_commas`: the share link's own machine-written form `1,0;0,1` separates values by bare commas, in every
    language. Where the language writes a decimal comma (`decimal_comma`), `3,5` is three and a half and only
    spaces separate the numbers of a row (DECIMAL_COMMA_RULE).
    """
    if not isinstance(text, str):
        raise ValueError(tr("{matrix}: expected text, got {kind}", matrix=name, kind=type(text).__name__))
    if len(text) > MAX_PARAM_CHARS:
        raise ValueError(
            tr(
                "{matrix}: the text is {length} characters long; at most {limit} are accepted",
                matrix=name,
                length=len(text),
                limit=MAX_PARAM_CHARS,
            )
        )
    lines = [line.strip() for line in _ROW_SPLIT.split(text)]
    lines = [line for line in lines if line]
    if not lines:
        raise ValueError(tr("{matrix}: no numbers found", matrix=name))
    comma = not bare_commas and decimal_comma()
    values = [
        [_parse_number(tok, i, j, name, comma) for j, tok in enumerate(_split_values(line, bare_commas, comma))]
        for i, line in enumerate(lines)
    ]
    widths = {len(r) for r in values}
    if rows is not None and len(values) != rows:
        raise ValueError(
            tr_n(
                "{matrix}: {given} row(s) given, expected {rows} (one per position)",
                "{matrix}: {given} row(s) given, expected {rows} (one per position)",
                len(values),
                matrix=name,
                given=len(values),
                rows=rows,
            )
        )
    expected = cols if cols is not None else len(values[0])
    for i, r in enumerate(values):
        if len(r) != expected:
            raise ValueError(
                tr_n(
                    "{matrix}: {row} has {given} value(s), expected {expected}",
                    "{matrix}: {row} has {given} value(s), expected {expected}",
                    len(r),
                    matrix=name,
                    row=_row(i),
                    given=len(r),
                    expected=expected,
                )
            )
    if len(widths) != 1:
        raise ValueError(tr("{matrix}: rows have different lengths", matrix=name))
    if len(values) > MAX_N or expected > MAX_D:
        raise ValueError(
            tr(
                "{matrix}: {rows}×{cols} is too large; at most {max_rows}×{max_cols}",
                matrix=name,
                rows=len(values),
                cols=expected,
                max_rows=MAX_N,
                max_cols=MAX_D,
            )
        )
    return np.array(values, dtype=float)


def _split_values(line: str, bare_commas: bool, comma: bool) -> list[str]:
    """The values of one row: split at spaces, a comma ending a value ("1, 0") is its separator (unless the comma
    is the decimal mark: then spaces alone separate values)."""
    if bare_commas:
        return [tok for tok in _VALUE_SPLIT.split(line) if tok]
    if comma:
        return line.split()
    return [tok.rstrip(",") for tok in line.split() if tok.rstrip(",")]


def _parse_number(tok: str, i: int, j: int, name: str, comma: bool) -> float:
    where = tr("{matrix}: {row}, value {index}", matrix=name, row=_row(i), index=j + 1)
    return parse_number(tok, where, in_row=True, comma=comma)


def _row(i: int) -> str:
    """Row i of a pasted matrix as an error names it: the line a student counts from 1, and the position the page's
    labels count from 0 (q_2 is line 3)."""
    return tr("line {line} (position {position})", line=i + 1, position=i)


# Minus signs a keyboard, a word processor or a web page may give instead of "-": −, ‒, –, ﹣, －.
_MINUS_SIGNS = str.maketrans(dict.fromkeys("\u2212\u2012\u2013\ufe63\uff0d", "-"))
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_NON_FINITE = {"inf", "+inf", "-inf", "infinity", "+infinity", "-infinity", "nan", "+nan", "-nan"}


QUOTED_CHARS = 20  # how much of a refused text a message quotes


def quoted(text: str) -> str:
    """What a message quotes of a typed text: all of it up to QUOTED_CHARS characters, else its start and '…'
    (a 5,000-digit number quoted as its first 20 digits would read as a different number)."""
    t = text.strip()
    return t if len(t) <= QUOTED_CHARS else t[:QUOTED_CHARS] + "…"


def parse_number(text: str, where: str, *, in_row: bool = False, comma: bool | None = None) -> float:
    """One number exactly as a student typed it, for the grid and the paste box alike.

    Accepted: `2`, `-0.5`, `.5`, `1e3`, `1E-3`, a Unicode minus (`−1`), spaces around it. Refused, with a
    `ValueError` starting with `where`: anything else (`3,5` by COMMA_RULE, `0.1+0.2`, `1_000`, `½`, digits of other
    scripts), NaN and infinities, and values beyond ±MAX_ABS_VALUE (refused, never clamped). `in_row`: the
    value is one of a row's (the paste box), where the message also says how to write several numbers. `comma`:
    whether a decimal comma is read (`3,5` is 3.5); by default where the session's language writes one.
    """
    shown = quoted(text)
    x = float(number_text(text, where, in_row=in_row, comma=comma))
    if not np.isfinite(x) or abs(x) > MAX_ABS_VALUE:
        raise ValueError(
            tr(
                "{where}: '{typed}' is too large; values must lie between -{limit} and {limit}",
                where=where,
                typed=shown,
                limit=num(MAX_ABS_VALUE, "g"),
            )
        )
    return x


_THOUSANDS = re.compile(r"[+-]?\d{1,3}(,\d{3})+")  # digits grouped by commas, as 10,000 or 1,234,567


def number_text(text: str, where: str, *, in_row: bool = False, whole: bool = False, comma: bool | None = None) -> str:
    """The written form of one number as `parse_number` accepts it (spaces stripped, any minus sign made "-"),
    with no limit on its size: the number boxes (ui/number_box.py) read it exactly and check their own bounds.
    Refused, with the same `ValueError` as `parse_number`'s: anything that is not one number, NaN, infinities.
    `whole`: for a box of whole numbers, whose refusal must not suggest a fraction (`1,5`: not "1.5").
    `comma`: whether one comma is read as the decimal mark (`3,5` is written 3.5); by default where the session's
    language writes a decimal comma (`decimal_comma`). A link's numbers are read with `comma=False`."""
    shown = quoted(text)
    t = text.strip().translate(_MINUS_SIGNS)
    if t.lower() in _NON_FINITE:
        raise ValueError(tr("{where}: '{typed}' is not a finite number", where=where, typed=shown))
    if decimal_comma() if comma is None else comma:
        return _decimal_comma_text(t, where, shown)
    if not _NUMBER.fullmatch(t):
        if "," not in t:
            raise ValueError(tr("{where}: '{typed}' is not a number", where=where, typed=shown))
        raise ValueError(
            tr(
                "{where}: '{typed}' is not a number ({hint})",
                where=where,
                typed=shown,
                hint=_comma_hint(t, in_row, whole),
            )
        )
    return t


def _decimal_comma_text(t: str, where: str, shown: str) -> str:
    """`number_text` where a comma is the decimal mark: one comma or one point, no thousands separators."""
    dotted = t.replace(",", ".", 1) if "." not in t else t
    if _NUMBER.fullmatch(dotted):
        return dotted
    if "," not in t:
        raise ValueError(tr("{where}: '{typed}' is not a number", where=where, typed=shown))
    if "." in t or t.count(",") > 1 and _THOUSANDS.fullmatch(t):
        hint = tr("one decimal mark, ',' or '.', and no thousands separators")
    else:
        hint = tr("the comma is the decimal mark: numbers are separated by spaces")
    raise ValueError(tr("{where}: '{typed}' is not a number ({hint})", where=where, typed=shown, hint=hint))


def _comma_hint(t: str, in_row: bool, whole: bool) -> str:
    """What a refusal of `t`, a text with a comma that is not a number, says about the comma (its parenthesis):
    each clause a whole message, the clauses separated by semicolons."""
    pieces = [p for p in t.split(",") if p]
    dotted = t.replace(",", ".")
    point = bool(_NUMBER.fullmatch(dotted))  # 3,5: meant as 3.5, perhaps
    if point and whole and Decimal(dotted) != Decimal(dotted).to_integral_value():
        point, hint = False, tr("a comma is not a digit, and {dotted} is not a whole number", dotted=dotted)
    elif point:
        hint = tr("a decimal point, not a comma: {dotted}", dotted=dotted)
    else:
        hint = tr("a comma is not a digit")
    if _THOUSANDS.fullmatch(t):  # 10,000: a thousands separator or a decimal comma, the text cannot say
        plain = t.replace(",", "")
        if point:
            hint = tr(
                "no thousands separators: {plain}; or a decimal point, not a comma: {dotted}",
                plain=plain,
                dotted=dotted,
            )
        else:
            hint = tr("no thousands separators: {plain}", plain=plain)
    if in_row and len(pieces) > 1:
        clause = tr(
            "{count} numbers take a space after each comma: {numbers}", count=len(pieces), numbers=", ".join(pieces)
        )
        # Translators: two notes about one refused number joined, e.g. "a comma is not a digit" and "2 numbers take a
        # space after each comma: 3, 5"
        hint = tr("{first}; {second}", first=hint, second=clause)
    return hint


def format_number(x: float, *, comma: bool = False) -> str:
    """Shortest text that reads back as exactly the same float (1.0 -> '1', 0.1 -> '0.1'; '0,1' with `comma`, as
    an editor writes it where the session's language writes a decimal comma)."""
    s = repr(float(x))
    s = s[:-2] if s.endswith(".0") else s
    return s.replace(".", ",") if comma else s


def format_matrix(a: np.ndarray, row_sep: str = "\n", *, comma: bool = False) -> str:
    """The text form `parse_matrix` reads back exactly: values separated by spaces, rows by `row_sep`; decimal
    commas with `comma` (an editor's text in a language that writes them, read back in that language)."""
    return row_sep.join(" ".join(format_number(x, comma=comma) for x in row) for row in np.asarray(a))


# ---------------------------------------------------------------- token labels


def parse_tokens(text: str, n: int) -> tuple[tuple[str, ...], str | None]:
    """Split space-separated labels; return (n labels, a notice or None).

    Missing labels are filled with t<i>; extra ones are ignored; overlong ones are cut to
    MAX_TOKEN_CHARS characters. Each of these is said in the notice.
    """
    words = text.split()
    notices = []
    long = [w for w in words[:n] if len(w) > MAX_TOKEN_CHARS]
    if long:
        notices.append(
            tr_n(
                "{count} label longer than {limit} characters was cut to {limit} (e.g. '{label}…').",
                "{count} labels longer than {limit} characters were cut to {limit} (e.g. '{label}…').",
                len(long),
                count=len(long),
                limit=MAX_TOKEN_CHARS,
                label=long[0][:MAX_TOKEN_CHARS],
            )
        )
    words = [w[:MAX_TOKEN_CHARS] for w in words]
    if len(words) < n:
        notices.append(
            tr_n(
                "{count} label for {n} positions: the rest are named t<i>.",
                "{count} labels for {n} positions: the rest are named t<i>.",
                len(words),
                count=len(words),
                n=n,
            )
        )
    elif len(words) > n:
        notices.append(tr("{count} labels for {n} positions: only the first {n} are used.", count=len(words), n=n))
    tokens = tuple(words[:n]) + default_tokens(n)[len(words[:n]) :]
    return tokens, " ".join(notices) or None


def display_labels(tokens) -> list[str]:
    """Labels made unique for display only (table headers must be unique): the, cat, the·2, the·3.

    The tokens themselves are never changed; a repeated word is normal text.
    """
    seen: dict[str, int] = {}
    out = []
    for token in map(str, tokens):
        seen[token] = seen.get(token, 0) + 1
        out.append(token if seen[token] == 1 else f"{token}·{seen[token]}")
    if len(set(out)) < len(out):  # a label like "the·2" typed by hand: number by position instead
        return [f"{i}·{t}" for i, t in enumerate(map(str, tokens))]
    return out
