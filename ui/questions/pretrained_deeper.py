"""The Read deeper page's questions, about all-MiniLM-L6-v2 as the page shows it:

- "rollout": by attention rollout through the six layers, what share of the output (the mean-pooled embedding, or
  [CLS] at the top: its declared `pool`) the text's (`text`) [CLS] and [SEP] feed together, as section 4's caption
  says;
- "pair": in sentence A or B of section 5 (`a`, `b`), which token the weights on show (its declared `layer`, `head`,
  or the layer's heads averaged: `mean`) read most from a token both sentences share: does the head's reading of
  the pronoun change with the one word that differs?

Their true values are read from the model's readings of those texts that the asking teacher's page showed last
(ui/questions/pretrained.py: `shown_reading`); asking never runs the model."""

from __future__ import annotations

import numpy as np

from attention.pretrained import MiniLMRun, attention_rollout
from lessons.reading import chosen_weights, output_feed, shared_tokens, special_share
from locales import marked, tr
from ui.classroom_questions import top_keys
from ui.page_questions import Pick, Question, key_options, token_options
from ui.questions.pretrained import MAX_OPTIONS, MODEL, quoted

SHARE_TOLERANCE = 0.05  # an answer this close to the true share counts as right
OUTPUTS = ("mean", "cls")  # the output the rollout feeds: the embedding (the top layer's mean), or [CLS] at the top
SENTENCES = ("A", "B")
ROLLOUT_QUOTED_CHARS = 64  # the rollout prompt quotes a text up to this long: the rest takes up to 231 characters
# The rollout's own choices (section 4's formula) change the share: the prompt names them. By the output it feeds.
ROLLOUT_PROMPTS = {
    "mean": marked(
        "{model} reads {text} ({n} tokens). By attention rollout through all {layers} layers (per layer: ½ heads' "
        "mean + ½ identity), what share of the embedding (the top layer's mean) comes from [CLS] and [SEP] "
        "together? (Even spread: {spread})"
    ),
    "cls": marked(
        "{model} reads {text} ({n} tokens). By attention rollout through all {layers} layers (per layer: ½ heads' "
        "mean + ½ identity), what share of [CLS] at the top comes from [CLS] and [SEP] together? (Even spread: "
        "{spread})"
    ),
}
PAIR_PROMPTS = {  # by whether the layer's heads are averaged, or one head is asked about
    False: marked(
        "{model}, layer {layer}, head {head}, on sentence {sentence}: {text}. From token {query} {token}, which token "
        "gets the most weight?"
    ),
    True: marked(
        "{model}, layer {layer}, its {n_heads} heads averaged, on sentence {sentence}: {text}. From token {query} "
        "{token}, which token gets the most weight?"
    ),
}


def rollout_share(run: MiniLMRun, pool: str) -> tuple[dict, float]:
    """'By rollout, what share of the output do [CLS] and [SEP] feed?' for the model's reading `run` and the output
    `pool` ("mean" or "cls"), and its true value (0 to 1), as section 4 computes it."""
    if pool not in OUTPUTS:
        raise ValueError(f"pool must be one of {OUTPUTS}, got {pool!r}")
    n = run.n_tokens
    feed = output_feed(attention_rollout(run.attentions), pool)  # (n,), sums to 1
    body = {
        "kind": "number",
        "prompt": ROLLOUT_PROMPTS[pool],
        "values": {
            "model": MODEL,
            "text": quoted(run.text, ROLLOUT_QUOTED_CHARS),
            "n": n,
            "layers": run.attentions.shape[0],
            "spread": float(f"{2 / n:.3g}"),  # three figures, as the prompt prints it
        },
        "lo": 0.0,
        "hi": 1.0,
        "tolerance": SHARE_TOLERANCE,
    }
    return body, special_share(feed, run.tokens)


def pair_read(
    run_a: MiniLMRun, run_b: MiniLMRun, layer: int, head: int, mean: bool, sentence: int, shared: int
) -> tuple[dict, list[int]]:
    """'In sentence A (0) or B (1), from the `shared`-th token the two share, which token do the weights on show
    read most?' (layer, head from 1; `mean`: the layer's heads averaged), and its answer: the options of the largest
    weight, over every token of that sentence (several on a tie)."""
    pos_a, pos_b = shared_tokens(run_a.tokens, run_b.tokens)
    if not 0 <= shared < len(pos_a):
        raise ValueError(
            tr(
                "the two sentences share {n} tokens: there is no shared token {shared}",
                n=len(pos_a),
                shared=shared,
            )
        )
    run = (run_a, run_b)[sentence]
    query = (pos_a, pos_b)[sentence][shared]
    if run.n_tokens > MAX_OPTIONS:
        raise ValueError(
            tr(
                "sentence {sentence} has {n} tokens, more than a question's {most} answers: shorten it",
                sentence=SENTENCES[sentence],
                n=run.n_tokens,
                most=MAX_OPTIONS,
            )
        )
    weights, _ = chosen_weights(run.attentions, layer, head, mean)  # (n, n)
    body = {
        "kind": "choice",
        "prompt": PAIR_PROMPTS[bool(mean)],
        "values": {
            "model": MODEL,
            "layer": layer,
            "head": head,
            "n_heads": run.attentions.shape[1],
            "sentence": SENTENCES[sentence],
            "text": quoted(run.text),
            "query": query,
            "token": quoted(run.tokens[query], 40),
        },
        **token_options(key_options(run.tokens)),
        "source": {"layer": layer, "head": head, "mean": mean},
    }
    return body, top_keys(np.asarray(weights[query], dtype=np.float64))


def questions(reading_of) -> tuple[Question, ...]:
    """`reading_of(text)`: the model's reading of `text` as the page showed it (ValueError if it shows none)."""

    def shared_labels(values) -> list[str]:
        try:
            tokens_a, tokens_b = reading_of(values["a"]).tokens, reading_of(values["b"]).tokens
        except ValueError:  # Ask says why: the box offers one token meanwhile
            return ["[CLS]"]
        pos_a, pos_b = shared_tokens(tokens_a, tokens_b)
        labels = [tr("'{token}' ({a} in A, {b} in B)", token=tokens_a[i], a=i, b=j)[:80] for i, j in zip(pos_a, pos_b)]
        # Translators: the only choice of the From token box when the two sentences share no token
        return labels or [tr("none")]

    def build_rollout(values, picks):
        return rollout_share(reading_of(values["text"]), values["pool"])

    def build_pair(values, picks):
        run_a, run_b = reading_of(values["a"]), reading_of(values["b"])
        return pair_read(
            run_a, run_b, values["layer"], values["head"], values["mean"], picks["sentence"], picks["shared"]
        )

    sentence = Pick("sentence", marked("Sentence"), lambda v: [0, 1], lambda v: [tr("sentence A"), tr("sentence B")])
    # Translators: the box where the teacher picks a token both sentences share (the query asked about)
    shared = Pick("shared", marked("From token"), lambda v: range(len(shared_labels(v))), shared_labels)
    return (
        Question("rollout", marked("How much of the output do [CLS] and [SEP] feed, by rollout?"), build_rollout),
        Question(
            "pair",
            marked("In one of the two sentences, which token does a token read most?"),
            build_pair,
            (sentence, shared),
        ),
    )
