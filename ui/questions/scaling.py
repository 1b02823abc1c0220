"""The scaling page's question: how close to 1 the largest weight is at one d_k, unscaled or scaled, in exactly the
measurement the page shows (its declared `d_ks`, `keys`, `samples` and `seed`)."""

from __future__ import annotations

from locales import marked, tr
from ui.page_questions import Pick, Question

TOLERANCE = 0.05  # an answer this close to the measured average counts as right
SCALINGS = (marked("unscaled (raw q·k)"), marked("scaled by 1/√d_k"))  # the Scaling box's labels: tr(s)
PROMPTS = (  # unscaled, scaled
    marked(
        "q and k with independent standard normal components, {keys} keys, unscaled (raw q·k), averaged over "
        "{samples} draws of q and the keys (seed {seed}): at d_k = {d_k}, what is the average largest softmax weight "
        "of the query? (1: all on one key; {uniform}: uniform)"
    ),
    marked(
        "q and k with independent standard normal components, {keys} keys, scaled by 1/√d_k, averaged over "
        "{samples} draws of q and the keys (seed {seed}): at d_k = {d_k}, what is the average largest softmax weight "
        "of the query? (1: all on one key; {uniform}: uniform)"
    ),
)


def largest_weight(stats, d_k: int, scaled: bool) -> tuple[dict, float]:
    """'What is the average largest weight at d_k?' for the measurement `stats` (lessons.scaling.ScalingStats), and
    its true value: the page's own average over the same draws. ValueError where there is nothing to ask."""
    n = stats.n_keys
    if n == 1:
        raise ValueError(tr("with one key its weight is 1 whatever d_k: pick more keys to ask this"))
    row = stats.index(d_k)
    truth = float((stats.max_weight_scaled if scaled else stats.max_weight_unscaled)[row])
    body = {
        "kind": "number",
        "prompt": PROMPTS[int(scaled)],
        "values": {
            "keys": n,
            "samples": stats.n_samples,  # written "1000" (no thousands separator: a question's numbers are "g")
            "seed": stats.seed,
            "d_k": d_k,
            "uniform": float(f"{1 / n:.3g}"),  # 1/n to 3 significant digits, as "g" writes it
        },
        "lo": 0.0,
        "hi": 1.0,
        "tolerance": TOLERANCE,
        "source": {"keys": n, "samples": stats.n_samples, "seed": stats.seed},
    }
    return body, truth


def questions(stats_of) -> tuple[Question, ...]:
    """`stats_of(values)`: the measurement the page shows for its declared values."""

    def build(values, picks):
        return largest_weight(stats_of(values), picks["d_k"], bool(picks["scaled"]))

    d_k = Pick("d_k", "d_k", lambda v: sorted(v["d_ks"]), lambda v: [f"d_k = {d}" for d in sorted(v["d_ks"])])
    # Translators: the box where the teacher picks unscaled or scaled by 1/√d_k
    scaled = Pick("scaled", marked("Scaling"), lambda v: [0, 1], lambda v: [tr(s) for s in SCALINGS])
    return (Question("largest", marked("How close to 1 is the largest weight?"), build, (d_k, scaled)),)
