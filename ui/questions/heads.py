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
from locales import marked, tr
from ui.classroom_questions import top_keys
from ui.page_questions import QUERY, Pick, Question, ask_labels, key_options, token_options

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


def settings_values(values, tokens, chars: int = SENTENCE_CHARS) -> dict:
    """Everything the heads depend on, as a prompt's values (the tokens quoted in `chars` at most); the mask and the
    scaling pick the prompt's message."""
    d_model, n_heads = values["d_model"], values["n_heads"]
    return {
        "sentence": sentence(tokens, chars),
        "d_model": d_model,
        "n_heads": n_heads,
        "d_head": d_model // n_heads,
        "seed": values["seed"],
    }


def english(message: str, values: dict) -> str:
    """A language-free prompt as it reads in English (as classroom.questions checks its length)."""
    return message.format(**{k: v if isinstance(v, str) else format(v, "g") for k, v in values.items()})


# Option labels of the uniform question: a head and its preset (the uniform preset's heads are not offered)
HEAD_OPTIONS = {
    "random": marked("head {head} · random"),
    "previous": marked("head {head} · previous token"),
    "first": marked("head {head} · first token"),
    "self": marked("head {head} · itself"),
    "similar": marked("head {head} · most similar word"),
}

# The prompts, each variant a whole message. The settings come first: tokens, sizes, seed, the mask (on or not), the
# scaling (by 1/√d_head or not). The uniform question then says which heads it leaves out (none, one, several) and
# what the page's summary table prints as 'entropy / max' (HeadSummary.normalised_entropy, with ENTROPY_LATEX's
# H_i): each row's entropy over the largest its keys allow, averaged over the rows that see two keys or more (with
# the mask, row i sees i + 1 keys: rows 1 to n − 1), said in full or, for a long prompt, by the formula alone.
# Keys: (causal, scaled, heads left out: "", "one" or "many", short).
UNIFORM_PROMPTS = {
    (True, True, "", False): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, causal mask"
        " on, scaled by 1/√d_head: which head's weights are closest to uniform (highest 'entropy / max' in "
        "the summary table: row i's entropy H_i over its largest, log₂(i + 1) for its i + 1 keys, averaged "
        "over rows 1…{last_row})?"
    ),
    (True, True, "", True): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, causal mask"
        " on, scaled by 1/√d_head: which head's weights are closest to uniform (highest 'entropy / max': the "
        "mean of H_i / log₂(i + 1) over rows 1…{last_row})?"
    ),
    (True, True, "one", False): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, causal mask"
        " on, scaled by 1/√d_head: leaving out head {left_out} (uniform preset), which head's weights are "
        "closest to uniform (highest 'entropy / max' in the summary table: row i's entropy H_i over its "
        "largest, log₂(i + 1) for its i + 1 keys, averaged over rows 1…{last_row})?"
    ),
    (True, True, "one", True): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, causal mask"
        " on, scaled by 1/√d_head: leaving out head {left_out} (uniform preset), which head's weights are "
        "closest to uniform (highest 'entropy / max': the mean of H_i / log₂(i + 1) over rows 1…{last_row})?"
    ),
    (True, True, "many", False): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, causal mask"
        " on, scaled by 1/√d_head: leaving out heads {left_out} (uniform preset), which head's weights are "
        "closest to uniform (highest 'entropy / max' in the summary table: row i's entropy H_i over its "
        "largest, log₂(i + 1) for its i + 1 keys, averaged over rows 1…{last_row})?"
    ),
    (True, True, "many", True): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, causal mask"
        " on, scaled by 1/√d_head: leaving out heads {left_out} (uniform preset), which head's weights are "
        "closest to uniform (highest 'entropy / max': the mean of H_i / log₂(i + 1) over rows 1…{last_row})?"
    ),
    (True, False, "", False): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, causal mask"
        " on, not scaled: which head's weights are closest to uniform (highest 'entropy / max' in the summary"
        " table: row i's entropy H_i over its largest, log₂(i + 1) for its i + 1 keys, averaged over rows "
        "1…{last_row})?"
    ),
    (True, False, "", True): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, causal mask"
        " on, not scaled: which head's weights are closest to uniform (highest 'entropy / max': the mean of "
        "H_i / log₂(i + 1) over rows 1…{last_row})?"
    ),
    (True, False, "one", False): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, causal mask"
        " on, not scaled: leaving out head {left_out} (uniform preset), which head's weights are closest to "
        "uniform (highest 'entropy / max' in the summary table: row i's entropy H_i over its largest, log₂(i "
        "+ 1) for its i + 1 keys, averaged over rows 1…{last_row})?"
    ),
    (True, False, "one", True): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, causal mask"
        " on, not scaled: leaving out head {left_out} (uniform preset), which head's weights are closest to "
        "uniform (highest 'entropy / max': the mean of H_i / log₂(i + 1) over rows 1…{last_row})?"
    ),
    (True, False, "many", False): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, causal mask"
        " on, not scaled: leaving out heads {left_out} (uniform preset), which head's weights are closest to "
        "uniform (highest 'entropy / max' in the summary table: row i's entropy H_i over its largest, log₂(i "
        "+ 1) for its i + 1 keys, averaged over rows 1…{last_row})?"
    ),
    (True, False, "many", True): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, causal mask"
        " on, not scaled: leaving out heads {left_out} (uniform preset), which head's weights are closest to "
        "uniform (highest 'entropy / max': the mean of H_i / log₂(i + 1) over rows 1…{last_row})?"
    ),
    (False, True, "", False): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, no mask, "
        "scaled by 1/√d_head: which head's weights are closest to uniform (highest 'entropy / max' in the "
        "summary table: each row's entropy H_i over its largest, log₂ {n}, averaged over the {n} rows)?"
    ),
    (False, True, "", True): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, no mask, "
        "scaled by 1/√d_head: which head's weights are closest to uniform (highest 'entropy / max': the mean "
        "of H_i / log₂ {n} over the {n} rows)?"
    ),
    (False, True, "one", False): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, no mask, "
        "scaled by 1/√d_head: leaving out head {left_out} (uniform preset), which head's weights are closest "
        "to uniform (highest 'entropy / max' in the summary table: each row's entropy H_i over its largest, "
        "log₂ {n}, averaged over the {n} rows)?"
    ),
    (False, True, "one", True): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, no mask, "
        "scaled by 1/√d_head: leaving out head {left_out} (uniform preset), which head's weights are closest "
        "to uniform (highest 'entropy / max': the mean of H_i / log₂ {n} over the {n} rows)?"
    ),
    (False, True, "many", False): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, no mask, "
        "scaled by 1/√d_head: leaving out heads {left_out} (uniform preset), which head's weights are closest"
        " to uniform (highest 'entropy / max' in the summary table: each row's entropy H_i over its largest, "
        "log₂ {n}, averaged over the {n} rows)?"
    ),
    (False, True, "many", True): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, no mask, "
        "scaled by 1/√d_head: leaving out heads {left_out} (uniform preset), which head's weights are closest"
        " to uniform (highest 'entropy / max': the mean of H_i / log₂ {n} over the {n} rows)?"
    ),
    (False, False, "", False): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, no mask, "
        "not scaled: which head's weights are closest to uniform (highest 'entropy / max' in the summary "
        "table: each row's entropy H_i over its largest, log₂ {n}, averaged over the {n} rows)?"
    ),
    (False, False, "", True): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, no mask, "
        "not scaled: which head's weights are closest to uniform (highest 'entropy / max': the mean of H_i / "
        "log₂ {n} over the {n} rows)?"
    ),
    (False, False, "one", False): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, no mask, "
        "not scaled: leaving out head {left_out} (uniform preset), which head's weights are closest to "
        "uniform (highest 'entropy / max' in the summary table: each row's entropy H_i over its largest, log₂"
        " {n}, averaged over the {n} rows)?"
    ),
    (False, False, "one", True): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, no mask, "
        "not scaled: leaving out head {left_out} (uniform preset), which head's weights are closest to "
        "uniform (highest 'entropy / max': the mean of H_i / log₂ {n} over the {n} rows)?"
    ),
    (False, False, "many", False): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, no mask, "
        "not scaled: leaving out heads {left_out} (uniform preset), which head's weights are closest to "
        "uniform (highest 'entropy / max' in the summary table: each row's entropy H_i over its largest, log₂"
        " {n}, averaged over the {n} rows)?"
    ),
    (False, False, "many", True): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, no mask, "
        "not scaled: leaving out heads {left_out} (uniform preset), which head's weights are closest to "
        "uniform (highest 'entropy / max': the mean of H_i / log₂ {n} over the {n} rows)?"
    ),
}
# Keys: (causal, scaled, the asked head's preset: "random", or "previous" for query 0 without the mask).
ARGMAX_PROMPTS = {
    (True, True, "random"): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, causal mask"
        " on, scaled by 1/√d_head: in head {head} · random, which key will query {query} '{query_token}' "
        "attend to most?"
    ),
    (True, False, "random"): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, causal mask"
        " on, not scaled: in head {head} · random, which key will query {query} '{query_token}' attend to "
        "most?"
    ),
    (False, True, "random"): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, no mask, "
        "scaled by 1/√d_head: in head {head} · random, which key will query {query} '{query_token}' attend to"
        " most?"
    ),
    (False, False, "random"): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, no mask, "
        "not scaled: in head {head} · random, which key will query {query} '{query_token}' attend to most?"
    ),
    (False, True, "previous"): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, no mask, "
        "scaled by 1/√d_head: in head {head} · previous token, which key will query {query} '{query_token}' "
        "attend to most?"
    ),
    (False, False, "previous"): marked(
        "Tokens '{sentence}', d_model {d_model}, {n_heads} heads of d_head {d_head}, seed {seed}, no mask, "
        "not scaled: in head {head} · previous token, which key will query {query} '{query_token}' attend to "
        "most?"
    ),
}


def fitted(prompt_with: Callable[..., tuple[str, dict]]) -> tuple[str, dict]:
    """`prompt_with(chars, short)`: (message, values) of the prompt with the tokens quoted in `chars` at most, said in
    full or `short`. The first whose English fits PROMPT_CHARS: in full with the longest quote that lets it (down to
    SHORT_AT), then short (down to FEWEST_CHARS); longer still, the store refuses it and says why."""
    for short, fewest in ((False, SHORT_AT), (True, FEWEST_CHARS)):
        for chars in range(SENTENCE_CHARS, fewest - 1, -1):
            prompt = prompt_with(chars, short)
            if len(english(*prompt)) <= PROMPT_CHARS:
                return prompt
    return prompt


# Where each preset looks, as the page's list of presets states it (lessons/head_library.py, preset_bullets): a head
# set to one of these, its label gives the answer to "which key will query i attend to most?"
RULES = {
    # Translators: where a "previous token" head looks: its largest weight is on key j = i − 1
    "previous": marked("largest at j = i − 1"),
    # Translators: where a "first token" head looks
    "first": marked("largest at j = 0"),
    # Translators: where an "itself" head looks
    "self": marked("largest at j = i"),
    # Translators: where a "most similar word" head looks: itself first, and the copies of its word
    "similar": marked("first of all itself, and its copies"),
    # Translators: where a "uniform" head looks
    "uniform": marked("every key it may see ties"),
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
        raise ValueError(tr("with one token every row is a single weight of 1: give the sequence 2 tokens or more"))
    offered = [h for h, preset in enumerate(shown.presets) if preset != "uniform"]
    if len(offered) < 2:
        raise ValueError(tr("this needs two heads or more that are not set to 'uniform': add heads or change a preset"))
    share = np.array([shown.summaries[h].normalised_entropy for h in offered])
    truth = [i for i, s in enumerate(share) if s >= share.max() - ENTROPY_TIE]
    left_out = [h + 1 for h, preset in enumerate(shown.presets) if preset == "uniform"]
    leaving = "" if not left_out else "one" if len(left_out) == 1 else "many"
    n, causal, scale = len(shown.tokens), bool(values["causal"]), bool(values["scale"])
    extra = {"left_out": ", ".join(map(str, left_out)), "n": n, "last_row": n - 1}
    prompt, prompt_values = fitted(
        lambda chars, short: (
            UNIFORM_PROMPTS[causal, scale, leaving, short],
            {**settings_values(values, shown.tokens, chars), **extra},
        )
    )
    body = {
        "kind": "choice",
        "prompt": prompt,
        "values": prompt_values,
        "options": [HEAD_OPTIONS[shown.presets[h]] for h in offered],
        "option_values": [{"head": h + 1} for h in offered],
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
        raise ValueError(tr("a sequence of one token has only one key: nothing to ask"))
    if values["causal"] and query == 0:
        raise ValueError(tr("with the causal mask on, query 0 sees key 0 alone (weight 1): pick a later query"))
    preset = shown.presets[head - 1]
    causal, scale = bool(values["causal"]), bool(values["scale"])
    if not unruled(preset, query, causal):
        said = {"head": head, "preset": tr(PRESET_LABELS[preset]), "rule": tr(RULES[preset])}
        if askable_heads(shown):
            raise ValueError(
                tr(
                    "head {head} is set to '{preset}': the page's list of presets says where it looks ({rule}), so "
                    "its label gives the answer: ask about a head set to 'random' (section 2)",
                    **said,
                )
            )
        raise ValueError(
            tr(
                "head {head} is set to '{preset}': the page's list of presets says where it looks ({rule}), so its "
                "label gives the answer: set a head to 'random' to ask this (section 2)",
                **said,
            )
        )
    tok = shown.tokens
    prompt, prompt_values = fitted(
        lambda chars, _: (
            ARGMAX_PROMPTS[causal, scale, preset],
            {**settings_values(values, tok, chars), "head": head, "query": query, "query_token": tok[query]},
        )
    )
    body = {
        "kind": "choice",
        "prompt": prompt,
        "values": prompt_values,
        **token_options(key_options(tok)),
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
            return [tr("head {head}", head=h) for h in heads(values)]
        return [tr("head {head} · {preset}", head=h, preset=tr(PRESET_LABELS[presets[h - 1]])) for h in heads(values)]

    def queries(values) -> range:  # with the mask, query 0 sees key 0 alone; one token: its build says why not
        n = values["seq"].n
        return range(1, n) if values["causal"] and n > 1 else range(n)

    head = Pick("head", marked("Head"), heads, head_labels)
    query = Pick("query", QUERY, queries, lambda v: [ask_labels(v["seq"].tokens)[0][i] for i in queries(v)])
    return (
        Question("uniform", marked("Which head's weights are closest to uniform?"), uniform),
        Question("argmax", marked("In one head, which key will a query attend to most?"), argmax, (head, query)),
    )
