"""The toy every section of the position page runs: the words, a vector per word (no position in it), one
attention head with seeded W_Q, W_K, W_V, and `attend`, which adds position by each method; section 2's four
ways side by side.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from attention.checks import check_positive_int
from attention.dot_product import AttentionSteps, attention_steps
from attention.positions import alibi_bias, rope, sinusoidal_encoding
from locales import marked, num, tr

METHODS = ("none", "learned", "sinusoidal", "rope", "alibi")
TOY_METHODS = ("none", "sinusoidal", "rope", "alibi")  # the ways the toy head runs: the learned table needs a model
METHOD_LABELS = {  # English, marked: shown as tr(METHOD_LABELS[m])
    "none": marked("no position information"),
    "learned": marked("learned absolute (MiniLM's table)"),
    "sinusoidal": marked("sinusoidal (added to X)"),
    "rope": marked("RoPE (rotates q and k)"),
    "alibi": marked("ALiBi (bias on the scores)"),
}
SHORT_NAMES = dict(  # English, marked: shown as tr(SHORT_NAMES[m]) (RoPE and ALiBi are names in every language)
    none=marked("No positions"),
    learned=marked("Learned absolute"),
    sinusoidal=marked("Sinusoidal"),
    rope="RoPE",
    alibi="ALiBi",
)
DEFAULT_TEXT = "the dog chased the cat up the tall tree"
MAX_WORDS = 16
MAX_WORD_CHARS = 24
HEAD_GAIN = 1.5  # W ~ N(0, gain² / d): scores with a spread of about gain², a pattern worth looking at


def method_label(method: str) -> str:
    """A way of adding position, as the page names it (METHOD_LABELS), in the session's language."""
    return tr(METHOD_LABELS[method])


# ---------------------------------------------------------------- the words, their vectors, one head


def parse_words(text: str) -> tuple[tuple[str, ...], str | None]:
    """The words of `text` (split at spaces), and what is wrong with them (None if nothing)."""
    words = tuple(str(text).split())
    if len(words) < 2:
        return words, tr("type at least 2 words (found {found})", found=len(words))
    if len(words) > MAX_WORDS:
        return words, tr("this page takes at most {most} words (found {found})", most=MAX_WORDS, found=len(words))
    long = next((w for w in words if len(w) > MAX_WORD_CHARS), None)
    if long is not None:
        return words, tr(
            "a word has {length} characters; at most {most} per word", length=len(long), most=MAX_WORD_CHARS
        )
    return words, None


def word_count(values) -> int:
    """How many words the page's text (`values["text"]`) has; the default text's count while it is unusable
    (the page stops then). A bound of the padding lengths."""
    words, problem = parse_words(values["text"])
    return len(words) if problem is None else len(parse_words(DEFAULT_TEXT)[0])


def half_the_words(values) -> int:
    """The second padded sequence's default length: about half the words, at least one."""
    return max(1, word_count(values) // 2)


def word_vectors(words, d_model: int, seed: int = 0) -> np.ndarray:
    """One vector per word, drawn from a generator keyed by (seed, the word's text): no position in it.

    Shapes: words n strings -> (n, d_model). A repeated word gets the same row every time.
    """
    d_model = check_positive_int(d_model, "d_model")
    rows = [np.random.default_rng([int(seed) & 0xFFFFFFFF, zlib.crc32(str(w).encode())]) for w in words]
    return np.stack([rng.standard_normal(d_model) for rng in rows])  # (n, d_model)


@dataclass(frozen=True)
class ToyHead:
    """One attention head's projections. Shapes: w_q, w_k, w_v (d_model, d_model)."""

    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray


def toy_head(d_model: int, seed: int = 0) -> ToyHead:
    """W_Q, W_K, W_V ~ N(0, HEAD_GAIN² / d_model), drawn from `seed` (the same for every sentence)."""
    d_model = check_positive_int(d_model, "d_model")
    rng = np.random.default_rng(seed)
    w_q, w_k, w_v = (HEAD_GAIN * rng.standard_normal((d_model, d_model)) / np.sqrt(d_model) for _ in range(3))
    return ToyHead(w_q, w_k, w_v)


@dataclass(frozen=True)
class Toy:
    """The page's example, which every section reads: the words, their vectors and the head that reads them.
    Shapes: words n strings; x (n, d_model); head's matrices (d_model, d_model)."""

    words: tuple[str, ...]
    d_model: int
    seed: int
    x: np.ndarray
    head: ToyHead

    @classmethod
    def build(cls, words, d_model: int, seed: int = 0) -> Toy:
        """The word vectors and the toy head for `words`, drawn from `seed`."""
        words = tuple(words)
        return cls(words, d_model, seed, word_vectors(words, d_model, seed), toy_head(d_model, seed))


# ---------------------------------------------------------------- position, added by each method


def attend(
    x, head: ToyHead, method: str = "none", *, table=None, alibi_heads: int = 8, alibi_head: int = 0, causal=False
) -> AttentionSteps:
    """The toy head on X, with position information added by `method` (one of METHODS).

    Shapes: x (n, d_model), table (>= n, d_model) for "learned" -> AttentionSteps with (n, n) weights.
    "alibi" uses the bias of head `alibi_head` (from 0) of `alibi_heads`, as `alibi_bias` gives it: without
    the causal mask only the past is penalised. (A penalty on |i - j| on both sides would not tell a
    sentence from its reverse: reversing keeps every distance.)
    """
    x = np.asarray(x, dtype=np.float64)
    n, d = x.shape
    if method == "learned":
        if table is None or len(table) < n:
            raise ValueError(f"'learned' needs a position table of at least {n} rows")
        x = x + np.asarray(table, dtype=np.float64)[:n, :d]  # (n, d): row p gets position p's vector
    elif method == "sinusoidal":
        x = x + sinusoidal_encoding(n, d)  # (n, d)
    elif method not in METHODS:
        raise ValueError(f"method={method!r}; expected one of {METHODS}")
    q, k, v = x @ head.w_q, x @ head.w_k, x @ head.w_v  # (n, d) each
    bias = None
    if method == "rope":
        q, k = rope(q), rope(k)  # (n, d): rotated by position, the values are not
    elif method == "alibi":
        bias = alibi_bias(n, alibi_heads)[alibi_head]  # (n, n): -m (i - j) below the diagonal, 0 above
    return attention_steps(q, k, v, causal=causal, bias=bias)


def toy_queries_keys(x, head: ToyHead) -> tuple[np.ndarray, np.ndarray]:
    """The toy head's queries and keys before any rotation. Shapes: x (n, d_model) -> q, k (n, d_model)."""
    x = np.asarray(x, dtype=np.float64)
    return x @ head.w_q, x @ head.w_k  # (n, d_model) each


# ---------------------------------------------------------------- 2 · four ways to add position, side by side


FOUR_WAYS_INTRO = marked(
    "The same toy head on the same words, without position and with the three methods that need no training "
    "(the fourth, a learned table, belongs to a trained model: below it, on the real one)."
)


def methods_weights(x, head: ToyHead, alibi_heads: int = 8) -> np.ndarray:
    """The toy head's weights with each of TOY_METHODS, without the causal mask (ALiBi: head 1 of `alibi_heads`).

    Shapes: x (n, d_model) -> (len(TOY_METHODS), n, n).
    """
    return np.stack([attend(x, head, m, alibi_heads=alibi_heads).weights for m in TOY_METHODS])


# ---------------------------------------------------------------- shared by the sentences of every section


def diff_text(d: float) -> str:
    """A difference as text that never rounds a non-zero to 0."""
    return "0" if d == 0.0 else num(d, ".2g")
