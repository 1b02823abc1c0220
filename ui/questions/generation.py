"""The generation page's questions: how many bytes the induction model's KV cache holds after a step of the
generation the page runs (sections 1 and 2: its declared `prompt`, `n_new`, `temperature`, `top_k`, `seed`); and
how big a grouped-query or multi-query cache is for the shape of section 5 (`layers`, `heads`, `kv`, `d_head`,
`context`, `dtype`)."""

from __future__ import annotations

import numpy as np

from figures.generation import format_bytes
from lessons.generation import DTYPE_BYTES, GenerationReport, cache_kinds
from lessons.induction import ids_to_letters
from ui.page_questions import Pick, Question

KINDS = ("GQA", "MQA")  # the caches the teacher can ask about (MHA's size at the default shape is in the page's text)


def bytes_text(n: int) -> str:
    """8704 -> '8,704 bytes (8.5 KiB)'; below a KiB, the bytes alone."""
    return f"{n:,} bytes" if n < 1024 else f"{n:,} bytes ({format_bytes(n)})"


def cache_question(report: GenerationReport, params, step: int) -> tuple[dict, list[int]]:
    """'After step s, how many bytes does the KV cache hold?' for the page's generation `report` of the model
    `params`, and its true option: the cache the page's run holds after that step (its arrays' bytes). The other
    options are the usual slips: one token too many, the prompt or the new tokens only, K or V only."""
    if not 1 <= step <= len(report.steps):
        raise ValueError(f"step {step} is not one of the {len(report.steps)} generated")
    config, p = params.config, report.prompt_length
    held = report.steps[step - 1]
    n_total, nbytes = held.cache_shape[1], held.cache_nbytes  # the tokens cached, and their keys' and values' bytes
    per_token = nbytes // n_total
    options = sorted({nbytes, per_token * (n_total + 1), per_token * p, per_token * step, nbytes // 2})
    prompt = (
        f"The induction model ({config.n_layers} layers, {config.n_kv_heads} key/value heads of d_head "
        f"{config.d_head}, {np.dtype(params.dtype).name}) continues “{' '.join(ids_to_letters(report.ids[:p]))}” "
        f"({p} tokens; step 1 runs the whole prompt, each later step the token chosen before it). After step "
        f"{step}, how many bytes do its cached keys and values hold?"
    )
    body = {
        "kind": "choice",
        "prompt": prompt,
        "options": [bytes_text(n) for n in options],
        "source": {"prompt_tokens": p, "step": step},
    }
    return body, [options.index(nbytes)]


def shared_question(values, kind: str) -> tuple[dict, list[int]]:
    """'How big is the GQA (or MQA) cache?' for section 5's shape, and its true option (lessons.generation's
    cache_kinds). The other options: the cache with as many kv heads as the group size, MHA's, and the rest."""
    layers, heads, kv, d_head, context = (values[k] for k in ("layers", "heads", "kv", "d_head", "context"))
    itemsize = DTYPE_BYTES[values["dtype"]]
    mha, gqa, mqa = cache_kinds(layers, heads, kv, d_head, context, itemsize)
    truth = gqa.nbytes if kind == "GQA" else mqa.nbytes
    options = sorted({mha.nbytes * n_kv // heads for n_kv in (heads, kv, heads // kv, 1)}, reverse=True)
    asked = f"grouped-query attention with {kv} key/value heads" if kind == "GQA" else "multi-query attention"
    prompt = (
        f"{layers} layers of {heads} query heads of d_head {d_head}, {context:,} tokens cached in {values['dtype']} "
        f"({itemsize} bytes a number): with {asked}, how big is the KV cache?"
    )
    body = {
        "kind": "choice",
        "prompt": prompt,
        "options": [format_bytes(n) for n in options],
        "source": {"shape": [layers, heads, kv, d_head, context], "dtype": values["dtype"]},
    }
    return body, [options.index(truth)]


def questions(report_of, model) -> tuple[Question, ...]:
    """`report_of(values)`: the generation the page shows for its declared values (ValueError when it shows
    none); `model()`: the induction model it runs."""

    def cache(values, picks):
        return cache_question(report_of(values), model(), picks["step"])

    def shared(values, picks):
        return shared_question(values, KINDS[picks["sharing"]])

    step = Pick(
        "step",
        "Step",
        lambda v: range(v["n_new"], 0, -1),  # the last first
        lambda v: [f"after step {s}" for s in range(v["n_new"], 0, -1)],
    )
    sharing = Pick(
        "sharing", "Cache", lambda v: range(len(KINDS)), lambda v: [f"GQA ({v['kv']} kv heads)", "MQA (1 kv head)"]
    )
    return (
        Question("cache", "How many bytes does the KV cache hold after a step?", cache, (step,)),
        Question("shared", "How big is a GQA or MQA cache?", shared, (sharing,)),
    )
