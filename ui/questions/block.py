"""The block page's questions: how long a position's vector is after a block, post-norm or pre-norm, against
√d_model (section 2: the size of the residual stream); and the shape of a tensor inside the block (section 1: the
shape at every arrow). Both from the stack the page runs for its declared values (`d_model`, `d_ff`, `n_heads`,
`activation`, `norm`, `causal`, `n_blocks`, `seed`) on the Playground's tokens."""

from __future__ import annotations

import math

from attention.block import NORMS
from figures.block import shape_text
from ui.page_questions import Pick, Question

BAND = 0.05  # within 5% of √d_model counts as "about √d_model"
NORM_NAMES = {"post": "Post-norm", "pre": "Pre-norm"}
# The tensors the shape question can ask about: (name in the block's trace, or "q_heads"; how the prompt says it;
# its axes, named as SHAPE_AXES names them).
TENSORS = (
    ("ffn_hidden", "the feed-forward hidden layer (after the activation)", ("n", "d_ff")),
    ("q_heads", "the queries q of all the heads, stacked", ("h", "n", "d_head")),
    ("attention", "the multi-head attention's output (after W_O)", ("n", "d_model")),
    ("ffn_out", "the feed-forward network's output", ("n", "d_model")),
)
# The shapes offered, each by its axes: several can have the same sizes (with n = h = d_head = 4, (h, n, d_head) and
# (h, n, n) are both (4, 4, 4)), so an option names its axes and its sizes, and each is one shape.
SHAPE_AXES = (
    ("n", "d_model"),
    ("n", "d_ff"),
    ("d_model", "d_ff"),
    ("n", "n"),
    ("h", "n", "d_head"),
    ("h", "n", "n"),
    ("n", "d_head"),
    ("h", "n", "d_model"),
)
PROMPT_CHARS = 300  # classroom/questions.py's limit


def length_options(d_model: int) -> list[str]:
    root = f"√d_model = {math.sqrt(d_model):.2f}"
    return [
        f"Shorter than {root} (below {1 - BAND:.0%} of it)",
        f"About {root} (within {BAND:.0%})",
        f"Longer than {root} (above {1 + BAND:.0%} of it)",
    ]


def settings(values, tokens) -> str:
    """The stack's settings and the tokens it reads, as a prompt names them (the tokens cut to fit)."""
    mask = "causal mask" if values["causal"] else "no mask"
    head = (
        f"d_model {values['d_model']}, d_ff {values['d_ff']}, {values['n_heads']} heads, {values['activation']}, "
        f"{mask}, seed {values['seed']}, on "
    )
    words = f"“{' '.join(tokens)}”"
    return head + (words if len(words) <= 60 else words[:58] + "…”")


def length_question(values, tokens, runs, norm: str, block: int) -> tuple[dict, list[int]]:
    """'After block b, how long is a position's vector on average, compared with √d_model?' in the `norm` stack,
    and its true option: the page's own measurement (StackRun.residual_norms) against √d_model, within BAND."""
    if not 1 <= block <= values["n_blocks"]:
        raise ValueError(f"block {block} is not in the stack of {values['n_blocks']}")
    lengths = runs[norm].residual_norms  # (N + 1,): the input, then after each block
    ratio = float(lengths[block]) / math.sqrt(values["d_model"])
    truth = 0 if ratio < 1 - BAND else 2 if ratio > 1 + BAND else 1
    prompt = (
        f"{NORM_NAMES[norm]} stack of {values['n_blocks']} random blocks ({settings(values, tokens)}): after block "
        f"{block}, how long is a position's vector on average? At the input it is {lengths[0]:.2f}."
    )
    body = {
        "kind": "choice",
        "prompt": prompt[:PROMPT_CHARS],
        "options": length_options(values["d_model"]),
        "source": {"tokens": list(tokens), "norm": norm, "block": block},
    }
    return body, [truth]


def axis_sizes(n: int, values) -> dict[str, int]:
    """The size of each axis SHAPE_AXES names, for n tokens and the page's values."""
    d = values["d_model"]
    return {"n": n, "d_model": d, "d_ff": values["d_ff"], "h": values["n_heads"], "d_head": d // values["n_heads"]}


def shape_label(axes: tuple[str, ...], sizes: dict[str, int]) -> str:
    """An option: the shape's axes, then its sizes, "(h, n, d_head) = (4, 4, 4)"."""
    return f"({', '.join(axes)}) = {shape_text([sizes[a] for a in axes])}"


def shape_question(values, tokens, runs, tensor: int) -> tuple[dict, list[int]]:
    """'What is the shape of this tensor inside block 1?' and its true option: the tensor's axes, each option naming
    its axes and sizes (SHAPE_AXES: one shape each, even where two have the same sizes), its sizes checked against
    the shape in the block's own trace."""
    name, said, axes = TENSORS[tensor]
    trace = runs[values["norm"]].traces[0]
    shape = tuple(trace.q_heads.shape if name == "q_heads" else trace[name].shape)
    sizes = axis_sizes(len(tokens), values)
    if shape != tuple(sizes[a] for a in axes):  # the trace is the truth: said loudly if its axes are not these
        raise ValueError(f"the block's {name} has shape {shape}, not ({', '.join(axes)})")
    prompt = (
        f"Block 1 ({values['norm']}-norm, {settings(values, tokens)}): what is the shape of {said}? Axes: n = "
        f"{sizes['n']} tokens, h = {sizes['h']} heads, d_head = d_model / h = {sizes['d_head']}."
    )
    body = {
        "kind": "choice",
        "prompt": prompt[:PROMPT_CHARS],
        "options": [shape_label(a, sizes) for a in SHAPE_AXES],
        "source": {"tokens": list(tokens), "tensor": name},
    }
    return body, [SHAPE_AXES.index(axes)]


def questions(runs_of) -> tuple[Question, ...]:
    """`runs_of(values)`: (the tokens, the page's runs {"post": StackRun, "pre": StackRun}) for the declared values;
    ValueError when the page shows none."""

    def length(values, picks):
        tokens, runs = runs_of(values)
        return length_question(values, tokens, runs, NORMS[picks["norm"]], picks["block"])

    def shape(values, picks):
        tokens, runs = runs_of(values)
        return shape_question(values, tokens, runs, picks["tensor"])

    def norm_options(values) -> list[int]:
        shown = NORMS.index(values["norm"])
        return [shown, 1 - shown]  # the norm the page's section 1 shows first

    norm = Pick("norm", "Norm", norm_options, lambda v: [NORM_NAMES[NORMS[i]] for i in norm_options(v)])
    block = Pick(
        "block",
        "Block",
        lambda v: range(v["n_blocks"], 0, -1),  # the last first: the stack's output
        lambda v: [f"after block {b}" for b in range(v["n_blocks"], 0, -1)],
    )
    tensor = Pick("tensor", "Tensor", lambda v: range(len(TENSORS)), lambda v: [said for _, said, _ in TENSORS])
    return (
        Question("length", "How long is a vector after a block, post- or pre-norm?", length, (norm, block)),
        Question("shape", "What is the shape of a tensor inside the block?", shape, (tensor,)),
    )
