"""Page state <-> URL query parameters. Pure functions: strings from strangers in, validated values out.

Every decoder returns the value *and* a list of warnings; a bad part falls back to its default and
says so, it never raises. Nothing here is ever evaluated or rendered as HTML.
"""
from __future__ import annotations

from collections.abc import Mapping

from attention.sequence import TokenSequence
from ui.sequence import MAX_D, MAX_N, MAX_PARAM_CHARS, default_sequence, format_matrix, parse_matrix, parse_tokens

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
    warnings.append(f"URL parameter '{name}' should be 0 or 1; using the default ({encode_flag(default)}).")
    return default


def decode_int(params: Mapping[str, str], name: str, default: int, lo: int, hi: int, warnings: list[str]) -> int:
    """Read a whole number in [lo, hi]; anything else warns and gives `default`."""
    raw = params.get(name)
    if raw is None:
        return default
    text = str(raw).strip()
    try:
        if len(text) > 12:  # refused whole, never cut: "5     junk" is not 5
            raise ValueError(text[:12])
        value = int(text)
    except ValueError:
        warnings.append(f"URL parameter '{name}' should be a whole number from {lo} to {hi}; using {default}.")
        return default
    if not lo <= value <= hi:
        warnings.append(f"URL parameter '{name}'={value} is outside {lo}..{hi}; using {default}.")
        return default
    return value


def decode_choice(params: Mapping[str, str], name: str, choices, default, warnings: list[str]):
    """Read one of `choices` (compared as strings); anything else warns and gives `default`."""
    raw = params.get(name)
    if raw is None:
        return default
    for c in choices:
        if str(raw) == str(c):
            return c
    shown = ", ".join(str(c) for c in choices)
    warnings.append(f"URL parameter '{name}' should be one of {shown}; using {default}.")
    return default


def encode_sequence(seq: TokenSequence) -> dict[str, str]:
    """tokens as space-separated labels; q, k, v as `a,b;c,d` (rows by ';', exact floats)."""
    out = {"tokens": " ".join(seq.tokens)}
    for m in "qkv":
        out[m] = format_matrix(seq.matrix(m), row_sep=";").replace(" ", ",")
    return out


def names_a_sequence(params: Mapping[str, str]) -> bool:
    """Whether the URL says anything about the sequence (its vectors, or only its labels)."""
    return any(name in params for name in ("q", "k", "v", "tokens"))


def decode_sequence(params: Mapping[str, str], warnings: list[str],
                    default: TokenSequence | None = None) -> TokenSequence:
    """The sequence in the URL, or `default` (the page's own example; the Playground's if not given), with a
    warning saying why, if any part is bad."""
    default = default_sequence() if default is None else default
    if not any(m in params for m in "qkv"):
        if params.get("tokens") is None:
            return default
        # labels only (someone trimmed the link, or wrote one by hand): the example's vectors, these labels
        tokens, notice = parse_tokens(str(params["tokens"])[:MAX_PARAM_CHARS], default.n)
        if notice:
            warnings.append(f"URL parameter 'tokens': {notice}")
        return TokenSequence(tokens, default.q, default.k, default.v)
    try:
        q, k, v = (_decode_matrix(params, m) for m in "qkv")
        _check_consistent(q, k, v)
    except ValueError as err:
        warnings.append(f"The vectors in the URL could not be used ({err}); showing the default example.")
        return default
    n = q.shape[0]
    raw_tokens = params.get("tokens")
    tokens, notice = parse_tokens(str(raw_tokens)[:MAX_PARAM_CHARS] if raw_tokens is not None else "", n)
    if raw_tokens is not None and notice:
        warnings.append(f"URL parameter 'tokens': {notice}")
    return TokenSequence(tokens, q, k, v)


def _decode_matrix(params: Mapping[str, str], name: str):
    raw = params.get(name)
    if raw is None:
        raise ValueError(f"'{name}' is missing")
    return parse_matrix(str(raw), name=name)


def _check_consistent(q, k, v) -> None:
    if q.shape != k.shape:
        raise ValueError(f"q is {q.shape[0]}×{q.shape[1]} but k is {k.shape[0]}×{k.shape[1]}")
    if v.shape[0] != q.shape[0]:
        raise ValueError(f"v has {v.shape[0]} rows but q has {q.shape[0]}")
    if q.shape[0] > MAX_N or max(q.shape[1], v.shape[1]) > MAX_D:
        raise ValueError(f"at most {MAX_N} positions and {MAX_D} dimensions")
