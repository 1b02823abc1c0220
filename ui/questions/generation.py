"""The generation page's questions: how many bytes the induction model's KV cache holds after a step of the
generation the page runs (sections 1 and 2: its declared `prompt`, `n_new`, `temperature`, `top_k`, `seed`); and
how big a grouped-query or multi-query cache is for the shape of section 5 (`layers`, `heads`, `kv`, `d_head`,
`context`, `dtype`)."""

from __future__ import annotations

import numpy as np

from classroom.questions import question_text
from lessons.generation import DTYPE_BYTES, GenerationReport, cache_kinds
from lessons.induction import ids_to_letters
from locales import marked, tr
from ui.page_questions import Pick, Question

KINDS = ("GQA", "MQA")  # the caches the teacher can ask about (MHA's size at the default shape is in the page's text)
UNITS = ("KiB", "MiB", "GiB", "TiB")  # format_bytes' units above bytes (never translated)

# An option that is a size: bytes below a KiB, else the bytes and their size in KiB, MiB...
SIZE_BYTES = marked("{size} bytes")
# Translators: a size in binary units: "8.5 KiB" (the unit is never translated)
SIZE_UNIT = marked("{size} {unit}")
# Translators: a number of bytes and the same size in binary units: "8704 bytes (8.5 KiB)"
BYTES_AND_SIZE = marked("{bytes} bytes ({size} {unit})")
CACHE_PROMPT = marked(
    "The induction model ({layers} layers, {kv_heads} key/value heads of d_head {d_head}, {dtype}) continues "
    "“{prompt}” ({tokens} tokens; step 1 runs the whole prompt, each later step the token chosen before it). After "
    "step {step}, how many bytes do its cached keys and values hold?"
)
SHARED_PROMPTS = {
    "GQA": marked(
        "{layers} layers of {heads} query heads of d_head {d_head}, {context} tokens cached in {dtype} ({itemsize} "
        "bytes a number): with grouped-query attention with {kv} key/value heads, how big is the KV cache?"
    ),
    "MQA": marked(
        "{layers} layers of {heads} query heads of d_head {d_head}, {context} tokens cached in {dtype} ({itemsize} "
        "bytes a number): with multi-query attention, how big is the KV cache?"
    ),
}


def binary_size(n: int) -> tuple[float, str]:
    """n bytes (a KiB or more) in format_bytes' unit: (its size to one decimal, the unit)."""
    size = float(n)
    for unit in UNITS:
        size /= 1024
        if abs(size) < 1024 or unit == UNITS[-1]:
            break
    return round(size, 1), unit


def size_option(n: int) -> tuple[str, dict]:
    """format_bytes(n) as an option's message and values: '512 bytes', '256 MiB'."""
    if n < 1024:
        return SIZE_BYTES, {"size": int(n)}
    size, unit = binary_size(n)
    return SIZE_UNIT, {"size": size, "unit": unit}


def bytes_option(n: int) -> tuple[str, dict]:
    """n bytes as an option's message and values: '8704 bytes (8.5 KiB)'; below a KiB, the bytes alone."""
    if n < 1024:
        return SIZE_BYTES, {"size": int(n)}
    size, unit = binary_size(n)
    return BYTES_AND_SIZE, {"bytes": int(n), "size": size, "unit": unit}


def bytes_text(n: int) -> str:
    """`bytes_option(n)` as a student reads it (in the session's language): 8704 -> '8704 bytes (8.5 KiB)'."""
    return question_text({"values": bytes_option(n)[1]}, bytes_option(n)[0])


def size_text(n: int) -> str:
    """`size_option(n)` as a student reads it (in the session's language): '256 MiB'."""
    return question_text({"values": size_option(n)[1]}, size_option(n)[0])


def choices(options: list[tuple[str, dict]]) -> dict:
    """A language-free choice question's options, each its message and its own values."""
    return {"options": [message for message, _ in options], "option_values": [values for _, values in options]}


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
    body = {
        "kind": "choice",
        "prompt": CACHE_PROMPT,
        "values": {
            "layers": config.n_layers,
            "kv_heads": config.n_kv_heads,
            "d_head": config.d_head,
            "dtype": np.dtype(params.dtype).name,
            "prompt": " ".join(ids_to_letters(report.ids[:p])),
            "tokens": p,
            "step": step,
        },
        **choices([bytes_option(n) for n in options]),
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
    body = {
        "kind": "choice",
        "prompt": SHARED_PROMPTS[kind],
        "values": {
            "layers": layers,
            "heads": heads,
            "kv": kv,
            "d_head": d_head,
            "context": context,
            "dtype": values["dtype"],
            "itemsize": itemsize,
        },
        **choices([size_option(n) for n in options]),
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
        # Translators: the box where the teacher picks a step of the generation
        marked("Step"),
        lambda v: range(v["n_new"], 0, -1),  # the last first
        lambda v: [tr("after step {step}", step=s) for s in range(v["n_new"], 0, -1)],
    )
    sharing = Pick(
        "sharing",
        # Translators: the box where the teacher picks a kind of KV cache (GQA or MQA)
        marked("Cache"),
        lambda v: range(len(KINDS)),
        lambda v: [tr("GQA ({kv} kv heads)", kv=v["kv"]), tr("MQA (1 kv head)")],
    )
    return (
        Question("cache", marked("How many bytes does the KV cache hold after a step?"), cache, (step,)),
        Question("shared", marked("How big is a GQA or MQA cache?"), shared, (sharing,)),
    )
