"""The multi-head page's questions, about the heads it shows (its declared values: the sequence `seq`, whose labels
the heads read, `d_model`, `n_heads`, `presets`, `seed`, `causal` and `scale`):

- "uniform": which head's weights are closest to uniform? Each head's rows compared by their entropy as a share of
  its maximum (summarise_head, the number the page's summary table prints), averaged over the rows. A head set to
  the uniform preset is left out: its label says it.
- "argmax": in head h, which key will query i attend to most? The class predicts it from the head's preset.

`shown(values)` is the page's own computation for its declared values (ShownHeads): the questions read their truth
from it, so they ask about exactly the heads the page draws.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from lessons.head_library import PRESET_LABELS, HeadSummary
from ui.classroom_questions import top_keys
from ui.page_questions import Pick, Question, key_options, query_pick

SENTENCE_CHARS = 60  # the longest the prompt quotes the sequence's labels
ENTROPY_TIE = 1e-9  # heads whose shares of the maximum entropy are this close are tied: each is right


@dataclass(frozen=True)
class ShownHeads:
    """The heads the page shows. Shapes: weights (n_heads, n, n)."""

    tokens: tuple[str, ...]
    presets: tuple[str, ...]  # what each head runs (a preset that does not fit its head: "random")
    weights: np.ndarray
    summaries: tuple[HeadSummary, ...]


def sentence(tokens) -> str:
    """The sequence's labels as the prompt quotes them, cut to SENTENCE_CHARS."""
    text = " ".join(tokens)
    return text if len(text) <= SENTENCE_CHARS else text[: SENTENCE_CHARS - 1] + "…"


def settings_text(values, tokens) -> str:
    """Everything the heads depend on, as a prompt names it."""
    d_model, n_heads = values["d_model"], values["n_heads"]
    return (
        f"Tokens '{sentence(tokens)}', d_model {d_model}, {n_heads} heads of d_head {d_model // n_heads}, seed "
        f"{values['seed']}, {'causal mask on' if values['causal'] else 'no mask'}, "
        f"{'scaled by 1/√d_head' if values['scale'] else 'not scaled'}"
    )


def head_label(shown: ShownHeads, h: int) -> str:
    return f"head {h + 1} · {PRESET_LABELS[shown.presets[h]]}"


def source(values, shown: ShownHeads) -> dict:
    keys = ("d_model", "n_heads", "seed", "causal", "scale")
    return {"tokens": list(shown.tokens), "presets": list(shown.presets), **{k: values[k] for k in keys}}


def closest_to_uniform(shown: ShownHeads, values) -> tuple[dict, list[int]]:
    """'Which head's weights are closest to uniform?' (the uniform preset's heads left out) and its answer: every
    offered head with the largest share of the maximum entropy (several on a tie)."""
    if len(shown.tokens) < 2:
        raise ValueError("with one token every row is a single weight of 1: give the sequence 2 tokens or more")
    offered = [h for h, preset in enumerate(shown.presets) if preset != "uniform"]
    if len(offered) < 2:
        raise ValueError("this needs two heads or more that are not set to 'uniform': add heads or change a preset")
    share = np.array([shown.summaries[h].normalised_entropy for h in offered])
    truth = [i for i, s in enumerate(share) if s >= share.max() - ENTROPY_TIE]
    left_out = [h + 1 for h, preset in enumerate(shown.presets) if preset == "uniform"]
    leaving = ""
    if left_out:
        leaving = f"leaving out head{'s' * (len(left_out) > 1)} {', '.join(map(str, left_out))} (uniform preset), "
    prompt = (
        f"{settings_text(values, shown.tokens)}: {leaving}which head's weights are closest to uniform (highest mean "
        "row entropy / max)?"
    )
    body = {
        "kind": "choice",
        "prompt": prompt,
        "options": [head_label(shown, h) for h in offered],
        "source": source(values, shown),
    }
    return body, truth


def head_argmax(shown: ShownHeads, values, head: int, query: int) -> tuple[dict, list[int]]:
    """'In head h, which key will query i attend to most?' and its answer: every key with the row's largest weight
    (several on a tie)."""
    n_heads, n = shown.weights.shape[:2]
    if not 1 <= head <= n_heads:
        raise ValueError(f"head {head} is not one of the page's heads 1..{n_heads}")
    if not 0 <= query < n:
        raise ValueError(f"query {query} is outside 0..{n - 1}")
    if n < 2:
        raise ValueError("a sequence of one token has only one key: nothing to ask")
    if shown.presets[head - 1] == "uniform":
        raise ValueError(f"head {head} is set to 'uniform': every key it may see ties, as its label says")
    tok = shown.tokens
    prompt = (
        f"{settings_text(values, tok)}: in {head_label(shown, head - 1)}, which key will query {query} "
        f"'{tok[query]}' attend to most?"
    )
    body = {
        "kind": "choice",
        "prompt": prompt,
        "options": key_options(tok),
        "source": source(values, shown),
    }
    return body, top_keys(shown.weights[head - 1, query])


def questions(shown: Callable[..., ShownHeads]) -> tuple[Question, ...]:
    """The page's questions; `shown(values)`: the heads the page shows for its declared values (ValueError where it
    shows none)."""

    def uniform(values, picks):
        return closest_to_uniform(shown(values), values)

    def argmax(values, picks):
        return head_argmax(shown(values), values, picks["head"], picks["query"])

    def heads(values) -> range:
        return range(1, values["n_heads"] + 1)

    head = Pick("head", "Head", heads, lambda v: [f"head {h}" for h in heads(v)])
    query = query_pick(lambda v: v["seq"])
    return (
        Question("uniform", "Which head's weights are closest to uniform?", uniform),
        Question("argmax", "In one head, which key will a query attend to most?", argmax, (head, query)),
    )
