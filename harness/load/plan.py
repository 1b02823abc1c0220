"""The load test's plan: the pages, what a session can do on each, the order a session visits them, and the
mischievous student's heaviest interactions."""

from __future__ import annotations

import random

# name -> url_path in app.py (the Playground is the default page, at "/")
PAGES = {
    "playground": "",
    "predict": "predict",
    "causal": "causal",
    "pitfalls": "pitfalls",
    "heads": "heads",
    "positions": "positions",
    "block": "block",
    "pretrained": "pretrained",
    "pretrained_deeper": "pretrained_deeper",
    "scaling": "scaling",
    "induction": "induction",
    "generation": "generation",
}
# what a session can do on each page: (kind, label)
ACTIONS = {
    "playground": [("toggle", "Causal mask"), ("toggle", "Divide by √d_k")],
    "predict": [],
    "causal": [("button", "Randomise later tokens")],
    "pitfalls": [],
    "heads": [("toggle", "Causal mask"), ("toggle", "Divide by √d_head")],
    "positions": [("button", "Shuffle the words"), ("toggle", "Causal mask too")],
    "block": [("toggle", "Causal mask")],
    "pretrained": [("toggle", "Hide [CLS] and [SEP]"), ("toggle", "Compare with a second head")],
    "pretrained_deeper": [("toggle", "Average the layer's heads")],
    "scaling": [("slider", "keys per query")],
    "induction": [],
    "generation": [],
}
# The mischievous student (--mischief): each page's heaviest reachable interaction, as a link a student can
# type (every page reads its state from the link) plus, where the work needs one, a button. A fresh seed on
# every visit defeats the caches, as a student changing the seed would.


def mischief_plan(seed: int) -> list[tuple[str, dict, str | None]]:
    """(page, link parameters, button to press or None) for every page with heavy work, at its limits."""
    from lessons.reading import LONG_EXAMPLE

    return [
        # the sweep's six largest d_k at 256 keys x 1000 samples, and the largest training the page accepts
        (
            "scaling",
            {
                "dk": "128,256,512,1024,2048,4096",
                "keys": 256,
                "samples": 1000,
                "seed": seed,
                "tdk": 1024,
                "lr": 3.0,
                "steps": 1000,
            },
            None,
        ),
        ("induction", {"model": "yours", "seed": seed, "steps": 2000}, "Train it yourself"),  # the longest training
        (
            "generation",
            {"prompt": "a b c d e f a b", "n_new": 24, "temperature": 1.0, "seed": seed},
            None,
        ),
        ("pretrained_deeper", {"text": LONG_EXAMPLE, "rows": "all", "mean": 1}, None),
        ("pretrained", {"text": LONG_EXAMPLE, "compare": 1}, None),
        ("heads", {"d_model": 64, "n_heads": 8, "seed": seed}, None),
        ("block", {"d_model": 64, "n_heads": 8, "d_ff": 256, "blocks": 12, "seed": seed % 10000}, None),
    ]


def session_plan(pages: list[str], index: int, rng: random.Random) -> list[str]:
    """Pages in a per-wave shuffled order; session i starts at page i mod len(pages), so all pages get
    traffic from the start."""
    order = list(pages)
    rng.shuffle(order)
    k = index % len(order)
    return order[k:] + order[:k]
