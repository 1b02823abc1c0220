"""Page state <-> URL query parameters. Pure functions: strings from strangers in, validated values out.

Every decoder returns the value *and* a list of warnings; a bad part falls back to its default and
says so, it never raises. Nothing here is ever evaluated or rendered as HTML.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from attention.sequence import TokenSequence
from locales import num, tr
from ui.sequence import (
    MAX_D,
    MAX_N,
    MAX_PARAM_CHARS,
    default_sequence,
    format_matrix,
    number_text,
    parse_matrix,
    parse_tokens,
)

TRUE_WORDS = {"1", "true", "on", "yes"}
FALSE_WORDS = {"0", "false", "off", "no"}


def encode_flag(value: bool) -> str:
    return "1" if value else "0"


def decode_flag(params: Mapping[str, str], name: str, default: bool, warnings: list[str]) -> bool:
    """Read a 0/1 flag; anything else warns and gives `default`."""
    raw = params.get(name)
    if raw is None:
        return default
    word = str(raw).strip().lower()[:10]
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    warnings.append(
        tr(
            "URL parameter '{name}' should be 0 or 1; using the default ({default}).",
            name=name,
            default=encode_flag(default),
        )
    )
    return default


def decode_int(params: Mapping[str, str], name: str, default: int, lo: int, hi: int, warnings: list[str]) -> int:
    """Read a whole number in [lo, hi] by the number boxes' rule (`number_text`: `1e3` is 1000; `1_000`, `2.5`
    and digits of other scripts are not whole numbers), so a link takes what the page's box takes; anything
    else warns and gives `default`."""
    raw = params.get(name)
    if raw is None:
        return default
    text = str(raw).strip()
    try:
        if len(text) > 12:  # refused whole, never cut: "5     junk" is not 5
            raise ValueError(text[:12])
        exact = Decimal(number_text(text, name, comma=False))  # exact: read before any int() of a huge 1e999999999
        if exact != exact.to_integral_value():
            raise ValueError(text)
    except ValueError:
        warnings.append(
            tr(
                "URL parameter '{name}' should be a whole number from {lo} to {hi}; using {default}.",
                name=name,
                lo=lo,
                hi=hi,
                default=default,
            )
        )
        return default
    if not lo <= exact <= hi:
        warnings.append(
            tr(
                "URL parameter '{name}'={text} is outside {lo}..{hi}; using {default}.",
                name=name,
                text=text,
                lo=lo,
                hi=hi,
                default=default,
            )
        )
        return default
    return int(exact)


def listed(names: list[str]) -> str:
    """`names` for a note, comma-separated, the middle left out past eight."""
    return ", ".join(names) if len(names) <= 8 else f"{names[0]}, {names[1]}, … {names[-1]}"


def decode_choice(params: Mapping[str, str], name: str, choices, default, warnings: list[str], offered=None):
    """Read one of `choices` (compared as strings); anything else warns and gives `default`. The warning lists
    `offered` (the choices the page offers here; all of `choices` if None), its middle left out past eight."""
    raw = params.get(name)
    if raw is None:
        return default
    for c in choices:
        if str(raw) == str(c):
            return c
    names = [str(c) for c in (choices if offered is None else offered)]
    shown = listed(names)
    warnings.append(
        tr(
            "URL parameter '{name}' should be one of {choices}; using {default}.",
            name=name,
            choices=shown,
            default=default,
        )
    )
    return default


def encode_sequence(seq: TokenSequence) -> dict[str, str]:
    """tokens as space-separated labels; q, k, v as `a,b;c,d` (rows by ';', exact floats)."""
    out = {"tokens": " ".join(seq.tokens)}
    for m in "qkv":
        out[m] = format_matrix(seq.matrix(m), row_sep=";").replace(" ", ",")
    return out


def decode_sequence(
    params: Mapping[str, str], warnings: list[str], default: TokenSequence | None = None
) -> TokenSequence:
    """The sequence in the URL, or `default` (the page's own example; the Playground's if not given), with a
    warning saying why, if any part is bad."""
    default = default_sequence() if default is None else default
    if not any(m in params for m in "qkv"):
        if params.get("tokens") is None:
            return default
        # labels only (someone trimmed the link, or wrote one by hand): the example's vectors, these labels
        tokens, notice = parse_tokens(str(params["tokens"])[:MAX_PARAM_CHARS], default.n)
        if notice:
            warnings.append(tr("URL parameter 'tokens': {notice}", notice=notice))
        return TokenSequence(tokens, default.q, default.k, default.v)
    try:
        q, k, v = (_decode_matrix(params, m) for m in "qkv")
        _check_consistent(q, k, v)
    except ValueError as err:
        warnings.append(
            tr("The vectors in the URL could not be used ({error}); showing the default example.", error=err)
        )
        return default
    n = q.shape[0]
    raw_tokens = params.get("tokens")
    tokens, notice = parse_tokens(str(raw_tokens)[:MAX_PARAM_CHARS] if raw_tokens is not None else "", n)
    if raw_tokens is not None and notice:
        warnings.append(tr("URL parameter 'tokens': {notice}", notice=notice))
    return TokenSequence(tokens, q, k, v)


def _decode_matrix(params: Mapping[str, str], name: str):
    raw = params.get(name)
    if raw is None:
        # Translators: the reason in "The vectors in the URL could not be used (...)": a matrix q, k or v is absent
        raise ValueError(tr("'{name}' is missing", name=name))
    return parse_matrix(str(raw), name=name, bare_commas=True)  # the link's own form: 1,0;0,1


def _check_consistent(q, k, v) -> None:
    if q.shape != k.shape:
        raise ValueError(
            tr(
                "q is {q_rows}×{q_columns} but k is {k_rows}×{k_columns}",
                q_rows=q.shape[0],
                q_columns=q.shape[1],
                k_rows=k.shape[0],
                k_columns=k.shape[1],
            )
        )
    if v.shape[0] != q.shape[0]:
        raise ValueError(tr("v has {v_rows} rows but q has {q_rows}", v_rows=v.shape[0], q_rows=q.shape[0]))
    if q.shape[0] > MAX_N or max(q.shape[1], v.shape[1]) > MAX_D:
        raise ValueError(
            tr("at most {positions} positions and {dimensions} dimensions", positions=MAX_N, dimensions=MAX_D)
        )


# ---------------------------------------------------------------- declared parameters
# A page declares each piece of its state once, as one of these; ui/page_state.py derives the session key,
# the widget's key, bounds and persistence, the URL read on the page's first run and the URL written after
# every run. Bounds, defaults and conditions may be functions of the values declared before them (`values`);
# `fit` keeps a value inside such bounds.

Values = Mapping[str, Any]


def _resolve(x, values: Values):
    return x(values) if callable(x) else x


def value_text(x) -> str:
    """A value as a note shows it: whole numbers with thousands separators (5,000), floats short (0.3), as the
    session's language writes numbers (5.000 and 0,3 in Spanish)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    return num(x, ",") if isinstance(x, int) else num(x, "g")


@dataclass(frozen=True)
class Param:
    """One piece of a page's state. `url`: its name in the link (the declared name if None); `key`: its
    session key without the page prefix (the declared name if None); `when`: it is written into the
    link only while when(values) holds (a link that names it is always read).

    Where the bounds depend on earlier values, `fit` brings a value inside them; the page then shows a
    note naming the parameter by `label` (its declared name if None) and giving the reason: `why(values,
    asked)` if given, else the bound itself. `shown(value)` is how the note writes a value whose number
    means something else (-1: every token); the note then says "changed", not "lowered" or "raised"."""

    default: Any
    url: str | None = None
    key: str | None = None
    when: Callable[[Values], bool] | None = None
    label: str | None = None
    why: Callable[[Values, Any], str] | None = None
    shown: Callable[[Any], str] | None = None

    def url_names(self, name: str) -> tuple[str, ...]:
        return (self.url or name,)

    def decode(self, params: Mapping[str, str], name: str, values: Values, warnings: list[str]):
        """The value in `params`, the default if absent; a bad value warns (naming the parameter) and
        gives the default."""
        raise NotImplementedError

    def encode(self, value, name: str) -> dict[str, str]:
        return {self.url or name: str(value)}

    def default_value(self, values: Values):
        return _resolve(self.default, values)

    def widget_args(self, values: Values) -> dict:
        """Extra keyword arguments for the widget that holds this value (its bounds or options)."""
        return {}

    def fit(self, value, values: Values):
        """`value` brought inside the bounds that `values` give (unchanged where it already fits)."""
        return value

    def bound_text(self, asked, values: Values) -> str:
        """Why `asked` does not fit: the bound it crosses, or the declared `why`."""
        # Translators: the reason at the end of a note such as "t lowered from 4 to 2: <reason>."
        return self.why(values, asked) if self.why is not None else tr("it does not fit here")


@dataclass(frozen=True)
class Flag(Param):
    """An on/off switch, `1`/`0` in the link."""

    def decode(self, params, name, values, warnings):
        return decode_flag(params, self.url or name, self.default_value(values), warnings)

    def encode(self, value, name):
        return {self.url or name: encode_flag(value)}


@dataclass(frozen=True)
class Int(Param):
    """A whole number from lo to hi (each may depend on earlier values). `listed`: its widget is a selectbox
    of lo..hi (a layer of the model), not a number box or a slider."""

    lo: Any = 0
    hi: Any = 0
    listed: bool = False

    def decode(self, params, name, values, warnings):
        lo, hi = _resolve(self.lo, values), _resolve(self.hi, values)
        return decode_int(params, self.url or name, self.default_value(values), lo, hi, warnings)

    def widget_args(self, values):
        lo, hi = _resolve(self.lo, values), _resolve(self.hi, values)
        return {"options": range(lo, hi + 1)} if self.listed else {"min_value": lo, "max_value": hi}

    def fit(self, value, values):
        lo, hi = _resolve(self.lo, values), _resolve(self.hi, values)
        return max(lo, min(value, hi))

    def bound_text(self, asked, values):
        if self.why is not None:
            return self.why(values, asked)
        lo, hi = _resolve(self.lo, values), _resolve(self.hi, values)
        if asked > hi:
            # Translators: the reason at the end of a note such as "t lowered from 4 to 2: at most 2 here."
            return tr("at most {value} here", value=value_text(hi))
        # Translators: the reason at the end of a note such as "t raised from 0 to 1: at least 1 here."
        return tr("at least {value} here", value=value_text(lo))


@dataclass(frozen=True)
class Choice(Param):
    """One of `choices`, compared as text in the link (`lr=0.3` reads back as the float 0.3).

    `allowed(values)`: the choices the widget offers given earlier values (all of them if None). The link
    may name any of `choices`; a value that is not allowed is brought to the largest allowed number not
    above it (the smallest allowed one if there is none), or for words to the default or the first allowed."""

    choices: tuple = ()
    allowed: Callable[[Values], tuple] | None = None

    def options(self, values: Values) -> tuple:
        return self.choices if self.allowed is None else tuple(self.allowed(values))

    def decode(self, params, name, values, warnings):
        url, default = self.url or name, self.default_value(values)
        raw = params.get(url)
        if raw is not None and all(isinstance(c, float) for c in self.choices):  # `lr=3` is the choice 3.0
            try:
                number = float(str(raw)) if len(str(raw)) <= 12 else None  # refused whole, never cut
            except ValueError:
                number = None
            if number in self.choices:
                return number
            raw = "\x00"  # not one of them: warn below
        offered = self.options(values)
        return decode_choice({url: raw} if raw is not None else {}, url, self.choices, default, warnings, offered)

    def encode(self, value, name):
        return {self.url or name: f"{value:g}" if isinstance(value, float) else str(value)}

    def widget_args(self, values):
        return {"options": self.options(values)}

    def fit(self, value, values):
        options = self.options(values)
        if value in options or not options:
            return value
        if all(isinstance(o, (int, float)) for o in (value, *options)):
            below = [o for o in options if o <= value]
            return max(below) if below else min(options)
        default = self.default_value(values)
        return default if default in options else options[0]

    def bound_text(self, asked, values):
        if self.why is not None:
            return self.why(values, asked)
        # Translators: the reason at the end of a note such as "samples lowered from 5,000 to 200: <reason>."
        return tr("the choices here are {choices}", choices=", ".join(value_text(o) for o in self.options(values)))


@dataclass(frozen=True)
class Text(Param):
    """Free text up to `max_chars` characters; a longer one in the link is refused whole."""

    max_chars: int = 2000

    def decode(self, params, name, values, warnings):
        raw = params.get(self.url or name)
        if raw is None:
            return self.default_value(values)
        if len(str(raw)) > self.max_chars:
            warnings.append(
                tr(
                    "URL parameter '{name}' is longer than {max_chars} characters; using the default text.",
                    name=self.url or name,
                    max_chars=self.max_chars,
                )
            )
            return self.default_value(values)
        return str(raw)

    def encode(self, value, name):
        return {self.url or name: str(value)}


@dataclass(frozen=True)
class ChoiceList(Param):
    """Up to `max_items` of `choices` separated by commas (`dk=4,64,1024`). `sort_unique`: read as a
    sorted set (a multiselect); else one item per slot, the rest of the slots taken from the default."""

    choices: tuple = ()
    max_items: int = 8
    sort_unique: bool = False

    def decode(self, params, name, values, warnings):
        url, default = self.url or name, list(self.default_value(values))
        raw = params.get(url)
        if raw is None:
            return default
        text = str(raw) if len(str(raw)) <= 20 * self.max_items else "\x00"  # refused whole, never cut
        parts = [p.strip() for p in text.split(",") if p.strip()]
        names = [str(c) for c in self.choices]
        if len(parts) <= self.max_items and all(p in names for p in parts):
            items = [self.choices[names.index(p)] for p in parts]
            return sorted(set(items)) if self.sort_unique else items + default[len(items) :]
        shown = listed(names)
        warnings.append(
            tr(
                "URL parameter '{name}' should be up to {max_items} of {choices}, separated by commas; "
                "using {default}.",
                name=url,
                max_items=self.max_items,
                choices=shown,
                default=",".join(map(str, default)),
            )
        )
        return default

    def encode(self, value, name):
        return {self.url or name: ",".join(str(v) for v in value)}

    def widget_args(self, values):
        return {"options": self.choices, "max_selections": self.max_items} if self.sort_unique else {}


@dataclass(frozen=True)
class SequenceParam(Param):
    """A token sequence with its q, k, v: four parameters in the link (tokens, q, k, v); its value
    lives under `key` (the editor's key, e.g. the Playground's shared "seq")."""

    def url_names(self, name):
        return ("tokens", "q", "k", "v")

    def decode(self, params, name, values, warnings):
        return decode_sequence(params, warnings, self.default_value(values))

    def encode(self, value, name):
        return encode_sequence(value)


@dataclass(frozen=True)
class Slots(Param):
    """One of `choices` per slot, in `slots` slots (e.g. a preset per head), each held by its own widget;
    the link carries the first `count(values)` of them, comma-separated. `default`: one per slot."""

    choices: tuple = ()
    slots: int = 8
    count: Callable[[Values], int] | None = None

    def decode(self, params, name, values, warnings):
        url, default = self.url or name, tuple(self.default_value(values))
        items = str(params.get(url, ""))[:200].split(",")
        if len(items) <= self.slots and all(item in self.choices for item in items):
            return tuple(items) + default[len(items) :]
        warnings.append(
            tr(
                "URL parameter '{name}' should be up to {slots} of {choices}, separated by commas; "
                "using the default presets.",
                name=url,
                slots=self.slots,
                choices=", ".join(self.choices),
            )
        )
        return default

    def encode(self, value, name):
        return {self.url or name: ",".join(value)}
