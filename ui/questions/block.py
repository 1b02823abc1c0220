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
# The tensors the shape question can ask about: (name in the block's trace, or "q_heads"; how the prompt says it).
TENSORS = (
    ("ffn_hidden", "the feed-forward hidden layer (after the activation)"),
    ("q_heads", "the queries q of all the heads, stacked"),
    ("attention", "the multi-head attention's output (after W_O)"),
    ("ffn_out", "the feed-forward network's output"),
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


def shape_options(n: int, values) -> list[tuple[int, ...]]:
    """Shapes a student might give a tensor of the block, made of its sizes (distinct, in a fixed order)."""
    d, d_ff, h = values["d_model"], values["d_ff"], values["n_heads"]
    candidates = [(n, d), (n, d_ff), (d, d_ff), (n, n), (h, n, d // h), (h, n, n), (n, d // h), (h, n, d)]
    return list(dict.fromkeys(candidates))


def shape_question(values, tokens, runs, tensor: int) -> tuple[dict, list[int]]:
    """'What is the shape of this tensor inside block 1?' and its true option: the shape in the block's own trace."""
    name, said = TENSORS[tensor]
    trace = runs[values["norm"]].traces[0]
    shape = tuple(trace.q_heads.shape if name == "q_heads" else trace[name].shape)
    options = shape_options(len(tokens), values)
    if shape not in options:  # every tensor asked about is one of the candidates; said loudly if one is not
        raise ValueError(f"the block's {name} has shape {shape}, which no option names")
    prompt = (
        f"Block 1 ({values['norm']}-norm, {settings(values, tokens)}, {len(tokens)} tokens): what is the shape of "
        f"{said}?"
    )
    body = {
        "kind": "choice",
        "prompt": prompt[:PROMPT_CHARS],
        "options": [shape_text(s) for s in options],
        "source": {"tokens": list(tokens), "tensor": name},
    }
    return body, [options.index(shape)]


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
    tensor = Pick("tensor", "Tensor", lambda v: range(len(TENSORS)), lambda v: [said for _, said in TENSORS])
    return (
        Question("length", "How long is a vector after a block, post- or pre-norm?", length, (norm, block)),
        Question("shape", "What is the shape of a tensor inside the block?", shape, (tensor,)),
    )
