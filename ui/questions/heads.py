"""The multi-head page's questions, about the heads it shows (its declared values: the sequence `seq`, whose labels
the heads read, `d_model`, `n_heads`, `presets`, `seed`, `causal` and `scale`):

- "uniform": which head's weights are closest to uniform? Each head's rows compared by their entropy as a share of
  its maximum (summarise_head, the number the page's summary table prints as 'entropy / max'), averaged over the
  rows (with the causal mask row i's maximum is log₂(i + 1), and row 0, which sees one key, is left out); the prompt
  says which. A head set to the uniform preset is left out: its label says it.
- "argmax": in head h, which key will query i attend to most? Only about a head whose preset states no rule: the
  page's list of presets says where every other preset looks ("previous token": j = i − 1, "first token": j = 0,
  "itself": j = i, "most similar word": itself and its copies, "uniform": every key ties), so its label would print
  the answer. In practice the heads set to "random" (or run as random: a preset that does not fit its head), and,
  without the mask, query 0 of a "previous token" head (the list says its rule skips the first row). With the causal
  mask, query 0 is not asked either: it sees key 0 alone.

`shown(values)` is the page's own computation for its declared values (ShownHeads): the questions read their truth
from it, so they ask about exactly the heads the page draws.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from lessons.head_library import PRESET_LABELS, HeadSummary
from ui.classroom_questions import top_keys
from ui.page_questions import Pick, Question, ask_labels, key_options

SENTENCE_CHARS = 60  # the longest the prompt quotes the sequence's labels
SHORT_AT = 30  # a quote this short, and the prompt still too long: it says the rest shorter
FEWEST_CHARS = 12  # how short the quote may be cut for the rest of a long prompt to fit
PROMPT_CHARS = 300  # classroom/questions.py's limit
ENTROPY_TIE = 1e-9  # heads whose shares of the maximum entropy are this close are tied: each is right


@dataclass(frozen=True)
class ShownHeads:
    """The heads the page shows. Shapes: weights (n_heads, n, n)."""

    tokens: tuple[str, ...]
    presets: tuple[str, ...]  # what each head runs (a preset that does not fit its head: "random")
    weights: np.ndarray
    summaries: tuple[HeadSummary, ...]


def sentence(tokens, chars: int = SENTENCE_CHARS) -> str:
    """The sequence's labels as the prompt quotes them, cut to `chars`."""
    text = " ".join(tokens)
    return text if len(text) <= chars else text[: chars - 1] + "…"


def settings_text(values, tokens, chars: int = SENTENCE_CHARS) -> str:
    """Everything the heads depend on, as a prompt names it (the tokens quoted in `chars` at most)."""
    d_model, n_heads = values["d_model"], values["n_heads"]
    return (
        f"Tokens '{sentence(tokens, chars)}', d_model {d_model}, {n_heads} heads of d_head {d_model // n_heads}, seed "
        f"{values['seed']}, {'causal mask on' if values['causal'] else 'no mask'}, "
        f"{'scaled by 1/√d_head' if values['scale'] else 'not scaled'}"
    )


def head_label(shown: ShownHeads, h: int) -> str:
    return f"head {h + 1} · {PRESET_LABELS[shown.presets[h]]}"


def fitted(prompt_with: Callable[..., str]) -> str:
    """`prompt_with(chars, short)`: the prompt with the tokens quoted in `chars` at most, said in full or `short`.
    The first that fits PROMPT_CHARS: in full with the longest quote that lets it (down to SHORT_AT), then short
    (down to FEWEST_CHARS); longer still, the store refuses it and says why."""
    for short, fewest in ((False, SHORT_AT), (True, FEWEST_CHARS)):
        for chars in range(SENTENCE_CHARS, fewest - 1, -1):
            prompt = prompt_with(chars, short)
            if len(prompt) <= PROMPT_CHARS:
                return prompt
    return prompt


def entropy_share_text(n: int, causal: bool, short: bool = False) -> str:
    """What the page's summary table prints as 'entropy / max' (HeadSummary.normalised_entropy, with ENTROPY_LATEX's
    H_i), said for n tokens and the mask as it is: each row's entropy over the largest its keys allow, averaged over
    the rows that see two keys or more (with the mask, row i sees i + 1 keys: rows 1 to n − 1). `short`: the
    formula alone."""
    if causal:
        if short:
            return f"'entropy / max': the mean of H_i / log₂(i + 1) over rows 1…{n - 1}"
        return (
            f"'entropy / max' in the summary table: row i's entropy H_i over its largest, log₂(i + 1) for its i + 1 "
            f"keys, averaged over rows 1…{n - 1}"
        )
    if short:
        return f"'entropy / max': the mean of H_i / log₂ {n} over the {n} rows"
    return (
        f"'entropy / max' in the summary table: each row's entropy H_i over its largest, log₂ {n}, averaged over the "
        f"{n} rows"
    )


# Where each preset looks, as the page's list of presets states it (pages/heads.py, preset_bullets): a head set to
# one of these, its label gives the answer to "which key will query i attend to most?"
RULES = {
    "previous": "largest at j = i − 1",
    "first": "largest at j = 0",
    "self": "largest at j = i",
    "similar": "first of all itself, and its copies",
    "uniform": "every key it may see ties",
}


def askable_heads(shown: ShownHeads, causal: bool = True) -> list[int]:
    """The heads (1..n_heads) the argmax question asks about: those whose preset states no rule ("random", or a
    preset that does not fit its head, run as random), so that its label does not say where it looks; without the
    mask, also the "previous token" heads, whose rule leaves out query 0 (it has no previous token)."""
    return [h + 1 for h, preset in enumerate(shown.presets) if preset not in RULES or unruled(preset, 0, causal)]


def unruled(preset: str, query: int, causal: bool) -> bool:
    """Whether the page's list of presets leaves where a head of `preset` looks from `query` unsaid: row 0 of a
    "previous token" head ("every row but the first"), which the causal mask would answer (it sees key 0 alone)."""
    return preset not in RULES or (preset == "previous" and query == 0 and not causal)


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
    n, causal = len(shown.tokens), bool(values["causal"])
    prompt = fitted(
        lambda chars, short: (
            f"{settings_text(values, shown.tokens, chars)}: {leaving}which head's weights are closest to uniform "
            f"(highest {entropy_share_text(n, causal, short)})?"
        )
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
    (several on a tie). Refused where the page already says it: a head whose preset states a rule (its label, with
    the page's list of presets, names the key), and, with the causal mask, query 0 (it sees key 0 alone)."""
    n_heads, n = shown.weights.shape[:2]
    if not 1 <= head <= n_heads:
        raise ValueError(f"head {head} is not one of the page's heads 1..{n_heads}")
    if not 0 <= query < n:
        raise ValueError(f"query {query} is outside 0..{n - 1}")
    if n < 2:
        raise ValueError("a sequence of one token has only one key: nothing to ask")
    if values["causal"] and query == 0:
        raise ValueError("with the causal mask on, query 0 sees key 0 alone (weight 1): pick a later query")
    preset = shown.presets[head - 1]
    if not unruled(preset, query, bool(values["causal"])):
        instead = "ask about a head set to 'random'" if askable_heads(shown) else "set a head to 'random' to ask this"
        raise ValueError(
            f"head {head} is set to '{PRESET_LABELS[preset]}': the page's list of presets says where it looks "
            f"({RULES[preset]}), so its label gives the answer: {instead} (section 2)"
        )
    tok = shown.tokens
    prompt = fitted(
        lambda chars, _: (
            f"{settings_text(values, tok, chars)}: in {head_label(shown, head - 1)}, which key will query {query} "
            f"'{tok[query]}' attend to most?"
        )
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

    def heads(values) -> list[int]:  # none to ask about (or no heads shown): head 1, whose build says why not
        try:
            return askable_heads(shown(values), bool(values["causal"])) or [1]
        except ValueError:
            return [1]

    def head_labels(values) -> list[str]:
        try:
            presets = shown(values).presets
        except ValueError:
            return [f"head {h}" for h in heads(values)]
        return [f"head {h} · {PRESET_LABELS[presets[h - 1]]}" for h in heads(values)]

    def queries(values) -> range:  # with the mask, query 0 sees key 0 alone; one token: its build says why not
        n = values["seq"].n
        return range(1, n) if values["causal"] and n > 1 else range(n)

    head = Pick("head", "Head", heads, head_labels)
    query = Pick("query", "Query", queries, lambda v: [ask_labels(v["seq"].tokens)[0][i] for i in queries(v)])
    return (
        Question("uniform", "Which head's weights are closest to uniform?", uniform),
        Question("argmax", "In one head, which key will a query attend to most?", argmax, (head, query)),
    )
