"""The block page's questions: how long a position's vector is after a block, post-norm or pre-norm, against
√d_model (section 2: the size of the residual stream); and the shape of a tensor inside the block (section 1: the
shape at every arrow). Both from the stack the page runs for its declared values (`d_model`, `d_ff`, `n_heads`,
`activation`, `norm`, `causal`, `n_blocks`, `seed`) on the Playground's tokens."""

from __future__ import annotations

import math

from attention.block import NORMS
from classroom.questions import option_texts
from figures.block import shape_text
from locales import marked, tr
from ui.page_questions import Pick, Question, token_options

BAND = 0.05  # within 5% of √d_model counts as "about √d_model"
NORM_NAMES = {"post": marked("Post-norm"), "pre": marked("Pre-norm")}
# The tensors the shape question can ask about: (name in the block's trace, or "q_heads"; how the prompt says it;
# its axes, named as SHAPE_AXES names them).
TENSORS = (
    ("ffn_hidden", marked("the feed-forward hidden layer (after the activation)"), ("n", "d_ff")),
    ("q_heads", marked("the queries q of all the heads, stacked"), ("h", "n", "d_head")),
    ("attention", marked("the multi-head attention's output (after W_O)"), ("n", "d_model")),
    ("ffn_out", marked("the feed-forward network's output"), ("n", "d_model")),
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
TOKENS_CHARS = 58  # the prompt quotes the tokens up to this long (and the start of longer ones)

LENGTH_OPTIONS = [
    marked("Shorter than √d_model = {root} (below {below}% of it)"),
    marked("About √d_model = {root} (within {band}%)"),
    marked("Longer than √d_model = {root} (above {above}% of it)"),
]
# The prompts, each variant a whole message: the stack's settings (the mask on or not) and the tokens it reads, by
# (norm, causal) for the length question, by (norm, causal, tensor) for the shape question.
LENGTH_PROMPTS = {
    ("post", True): marked(
        "Post-norm stack of {n_blocks} random blocks (d_model {d_model}, d_ff {d_ff}, {n_heads} heads, "
        "{activation}, causal mask, seed {seed}, on “{tokens}”): after block {block}, how long is a position's "
        "vector on average? At the input it is {input_length}."
    ),
    ("post", False): marked(
        "Post-norm stack of {n_blocks} random blocks (d_model {d_model}, d_ff {d_ff}, {n_heads} heads, "
        "{activation}, no mask, seed {seed}, on “{tokens}”): after block {block}, how long is a position's vector"
        " on average? At the input it is {input_length}."
    ),
    ("pre", True): marked(
        "Pre-norm stack of {n_blocks} random blocks (d_model {d_model}, d_ff {d_ff}, {n_heads} heads, "
        "{activation}, causal mask, seed {seed}, on “{tokens}”): after block {block}, how long is a position's "
        "vector on average? At the input it is {input_length}."
    ),
    ("pre", False): marked(
        "Pre-norm stack of {n_blocks} random blocks (d_model {d_model}, d_ff {d_ff}, {n_heads} heads, "
        "{activation}, no mask, seed {seed}, on “{tokens}”): after block {block}, how long is a position's vector"
        " on average? At the input it is {input_length}."
    ),
}
SHAPE_PROMPTS = {
    ("post", True, "ffn_hidden"): marked(
        "Block 1 (post-norm, d_model {d_model}, d_ff {d_ff}, {n_heads} heads, {activation}, causal mask, seed "
        "{seed}, on “{tokens}”): what is the shape of the feed-forward hidden layer (after the activation)? Axes:"
        " n = {n} tokens, h = {n_heads} heads, d_head = d_model / h = {d_head}."
    ),
    ("post", True, "q_heads"): marked(
        "Block 1 (post-norm, d_model {d_model}, d_ff {d_ff}, {n_heads} heads, {activation}, causal mask, seed "
        "{seed}, on “{tokens}”): what is the shape of the queries q of all the heads, stacked? Axes: n = {n} "
        "tokens, h = {n_heads} heads, d_head = d_model / h = {d_head}."
    ),
    ("post", True, "attention"): marked(
        "Block 1 (post-norm, d_model {d_model}, d_ff {d_ff}, {n_heads} heads, {activation}, causal mask, seed "
        "{seed}, on “{tokens}”): what is the shape of the multi-head attention's output (after W_O)? Axes: n = "
        "{n} tokens, h = {n_heads} heads, d_head = d_model / h = {d_head}."
    ),
    ("post", True, "ffn_out"): marked(
        "Block 1 (post-norm, d_model {d_model}, d_ff {d_ff}, {n_heads} heads, {activation}, causal mask, seed "
        "{seed}, on “{tokens}”): what is the shape of the feed-forward network's output? Axes: n = {n} tokens, h "
        "= {n_heads} heads, d_head = d_model / h = {d_head}."
    ),
    ("post", False, "ffn_hidden"): marked(
        "Block 1 (post-norm, d_model {d_model}, d_ff {d_ff}, {n_heads} heads, {activation}, no mask, seed {seed},"
        " on “{tokens}”): what is the shape of the feed-forward hidden layer (after the activation)? Axes: n = "
        "{n} tokens, h = {n_heads} heads, d_head = d_model / h = {d_head}."
    ),
    ("post", False, "q_heads"): marked(
        "Block 1 (post-norm, d_model {d_model}, d_ff {d_ff}, {n_heads} heads, {activation}, no mask, seed {seed},"
        " on “{tokens}”): what is the shape of the queries q of all the heads, stacked? Axes: n = {n} tokens, h ="
        " {n_heads} heads, d_head = d_model / h = {d_head}."
    ),
    ("post", False, "attention"): marked(
        "Block 1 (post-norm, d_model {d_model}, d_ff {d_ff}, {n_heads} heads, {activation}, no mask, seed {seed},"
        " on “{tokens}”): what is the shape of the multi-head attention's output (after W_O)? Axes: n = {n} "
        "tokens, h = {n_heads} heads, d_head = d_model / h = {d_head}."
    ),
    ("post", False, "ffn_out"): marked(
        "Block 1 (post-norm, d_model {d_model}, d_ff {d_ff}, {n_heads} heads, {activation}, no mask, seed {seed},"
        " on “{tokens}”): what is the shape of the feed-forward network's output? Axes: n = {n} tokens, h = "
        "{n_heads} heads, d_head = d_model / h = {d_head}."
    ),
    ("pre", True, "ffn_hidden"): marked(
        "Block 1 (pre-norm, d_model {d_model}, d_ff {d_ff}, {n_heads} heads, {activation}, causal mask, seed "
        "{seed}, on “{tokens}”): what is the shape of the feed-forward hidden layer (after the activation)? Axes:"
        " n = {n} tokens, h = {n_heads} heads, d_head = d_model / h = {d_head}."
    ),
    ("pre", True, "q_heads"): marked(
        "Block 1 (pre-norm, d_model {d_model}, d_ff {d_ff}, {n_heads} heads, {activation}, causal mask, seed "
        "{seed}, on “{tokens}”): what is the shape of the queries q of all the heads, stacked? Axes: n = {n} "
        "tokens, h = {n_heads} heads, d_head = d_model / h = {d_head}."
    ),
    ("pre", True, "attention"): marked(
        "Block 1 (pre-norm, d_model {d_model}, d_ff {d_ff}, {n_heads} heads, {activation}, causal mask, seed "
        "{seed}, on “{tokens}”): what is the shape of the multi-head attention's output (after W_O)? Axes: n = "
        "{n} tokens, h = {n_heads} heads, d_head = d_model / h = {d_head}."
    ),
    ("pre", True, "ffn_out"): marked(
        "Block 1 (pre-norm, d_model {d_model}, d_ff {d_ff}, {n_heads} heads, {activation}, causal mask, seed "
        "{seed}, on “{tokens}”): what is the shape of the feed-forward network's output? Axes: n = {n} tokens, h "
        "= {n_heads} heads, d_head = d_model / h = {d_head}."
    ),
    ("pre", False, "ffn_hidden"): marked(
        "Block 1 (pre-norm, d_model {d_model}, d_ff {d_ff}, {n_heads} heads, {activation}, no mask, seed {seed}, "
        "on “{tokens}”): what is the shape of the feed-forward hidden layer (after the activation)? Axes: n = {n}"
        " tokens, h = {n_heads} heads, d_head = d_model / h = {d_head}."
    ),
    ("pre", False, "q_heads"): marked(
        "Block 1 (pre-norm, d_model {d_model}, d_ff {d_ff}, {n_heads} heads, {activation}, no mask, seed {seed}, "
        "on “{tokens}”): what is the shape of the queries q of all the heads, stacked? Axes: n = {n} tokens, h = "
        "{n_heads} heads, d_head = d_model / h = {d_head}."
    ),
    ("pre", False, "attention"): marked(
        "Block 1 (pre-norm, d_model {d_model}, d_ff {d_ff}, {n_heads} heads, {activation}, no mask, seed {seed}, "
        "on “{tokens}”): what is the shape of the multi-head attention's output (after W_O)? Axes: n = {n} "
        "tokens, h = {n_heads} heads, d_head = d_model / h = {d_head}."
    ),
    ("pre", False, "ffn_out"): marked(
        "Block 1 (pre-norm, d_model {d_model}, d_ff {d_ff}, {n_heads} heads, {activation}, no mask, seed {seed}, "
        "on “{tokens}”): what is the shape of the feed-forward network's output? Axes: n = {n} tokens, h = "
        "{n_heads} heads, d_head = d_model / h = {d_head}."
    ),
}


def length_values(d_model: int) -> dict:
    """The values of LENGTH_OPTIONS: √d_model to two decimals, and the band around it in percent."""
    return {
        "root": round(math.sqrt(d_model), 2),
        "below": round(100 * (1 - BAND)),
        "band": round(100 * BAND),
        "above": round(100 * (1 + BAND)),
    }


def length_options(d_model: int) -> list[str]:
    """The length question's options as a student reads them (in the session's language)."""
    return option_texts({"options": LENGTH_OPTIONS, "values": length_values(d_model)})


def settings(values, tokens) -> dict:
    """The stack's settings and the tokens it reads, as a prompt's values (the tokens cut to fit); the mask picks
    the prompt's message."""
    words = " ".join(tokens)
    return {
        "d_model": values["d_model"],
        "d_ff": values["d_ff"],
        "n_heads": values["n_heads"],
        "activation": values["activation"],
        "seed": values["seed"],
        "tokens": words if len(words) <= TOKENS_CHARS else words[: TOKENS_CHARS - 1] + "…",
    }


def length_question(values, tokens, runs, norm: str, block: int) -> tuple[dict, list[int]]:
    """'After block b, how long is a position's vector on average, compared with √d_model?' in the `norm` stack,
    and its true option: the page's own measurement (StackRun.residual_norms) against √d_model, within BAND."""
    if not 1 <= block <= values["n_blocks"]:
        raise ValueError(f"block {block} is not in the stack of {values['n_blocks']}")
    lengths = runs[norm].residual_norms  # (N + 1,): the input, then after each block
    ratio = float(lengths[block]) / math.sqrt(values["d_model"])
    truth = 0 if ratio < 1 - BAND else 2 if ratio > 1 + BAND else 1
    body = {
        "kind": "choice",
        "prompt": LENGTH_PROMPTS[norm, bool(values["causal"])],
        "values": {
            **settings(values, tokens),
            **length_values(values["d_model"]),
            "n_blocks": values["n_blocks"],
            "block": block,
            "input_length": round(float(lengths[0]), 2),
        },
        "options": list(LENGTH_OPTIONS),
        "source": {"tokens": list(tokens), "norm": norm, "block": block},
    }
    return body, [truth]


def axis_sizes(n: int, values) -> dict[str, int]:
    """The size of each axis SHAPE_AXES names, for n tokens and the page's values."""
    d = values["d_model"]
    return {"n": n, "d_model": d, "d_ff": values["d_ff"], "h": values["n_heads"], "d_head": d // values["n_heads"]}


def shape_label(axes: tuple[str, ...], sizes: dict[str, int]) -> str:
    """An option: the shape's axes, then its sizes, "(h, n, d_head) = (4, 4, 4)" (never translated)."""
    return f"({', '.join(axes)}) = {shape_text([sizes[a] for a in axes])}"


def shape_question(values, tokens, runs, tensor: int) -> tuple[dict, list[int]]:
    """'What is the shape of this tensor inside block 1?' and its true option: the tensor's axes, each option naming
    its axes and sizes (SHAPE_AXES: one shape each, even where two have the same sizes), its sizes checked against
    the shape in the block's own trace."""
    name, _, axes = TENSORS[tensor]
    trace = runs[values["norm"]].traces[0]
    shape = tuple(trace.q_heads.shape if name == "q_heads" else trace[name].shape)
    sizes = axis_sizes(len(tokens), values)
    if shape != tuple(sizes[a] for a in axes):  # the trace is the truth: said loudly if its axes are not these
        raise ValueError(f"the block's {name} has shape {shape}, not ({', '.join(axes)})")
    body = {
        "kind": "choice",
        "prompt": SHAPE_PROMPTS[values["norm"], bool(values["causal"]), name],
        "values": {**settings(values, tokens), "n": sizes["n"], "d_head": sizes["d_head"]},
        **token_options(shape_label(a, sizes) for a in SHAPE_AXES),
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

    # Translators: the box where the teacher picks a layer normalisation (post-norm or pre-norm)
    norm = Pick("norm", marked("Norm"), norm_options, lambda v: [tr(NORM_NAMES[NORMS[i]]) for i in norm_options(v)])
    block = Pick(
        "block",
        # Translators: the box where the teacher picks a transformer block of the stack
        marked("Block"),
        lambda v: range(v["n_blocks"], 0, -1),  # the last first: the stack's output
        lambda v: [tr("after block {block}", block=b) for b in range(v["n_blocks"], 0, -1)],
    )
    tensor = Pick(
        "tensor", marked("Tensor"), lambda v: range(len(TENSORS)), lambda v: [tr(said) for _, said, _ in TENSORS]
    )
    return (
        Question("length", marked("How long is a vector after a block, post- or pre-norm?"), length, (norm, block)),
        Question("shape", marked("What is the shape of a tensor inside the block?"), shape, (tensor,)),
    )
