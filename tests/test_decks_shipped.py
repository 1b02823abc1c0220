"""The shipped lessons (lessons/decks/*.toml): every step opens in AppTest without an error, a refused value or a
clamp note, and every number a step's notes give is true of that step's state, computed here by the core."""

from __future__ import annotations

from urllib.parse import parse_qsl

import numpy as np
import pytest

from attention import attention_steps
from classroom.decks import shipped
from lessons.positions import masks, toy
from lessons.puzzles import PUZZLES_BY_ID
from tests.apptest_helpers import every_text, open_page
from ui.declared import declared_page

DECKS = shipped(declared_page)
STEPS = [(title, n, step) for title, deck in DECKS.items() for n, step in enumerate(deck.steps, 1)]


def values_of(step) -> dict:
    values, warnings = declared_page(step.page).state.decode(dict(parse_qsl(step.view.partition("?")[2])))
    assert warnings == []
    return values


def step_of(title: str, n: int):
    return DECKS[title].steps[n - 1]


@pytest.mark.parametrize(("title", "n", "step"), STEPS, ids=[f"{t[:12]}-{n}" for t, n, _ in STEPS])
def test_every_step_opens_without_an_error_or_a_note(title, n, step):
    query = dict(parse_qsl(step.view.partition("?")[2]))
    at = open_page(f"pages/{step.page}.py", query=query)
    assert not at.exception, f"{title}, step {n}"
    text = every_text(at)
    assert not at.error, f"{title}, step {n}: {[e.value for e in at.error]}"
    assert "URL parameter" not in text and "It goes back to" not in text, f"{title}, step {n}: a refused or held value"
    state = declared_page(step.page).state
    shown = {
        name: at.session_state[state.key(name)]
        for name in ("puzzle", "layers", "method", "norm", "n_new")
        if name in state.params and state.key(name) in at.session_state
    }
    assert shown.items() <= values_of(step).items(), f"{title}, step {n}: the page shows the step's state"


def test_attention_in_20_minutes_numbers():
    title = "Attention in 20 minutes"
    seq = values_of(step_of(title, 1))["seq"]
    assert seq.tokens == ("north", "east", "south", "west") and seq.q.shape[1] == 2  # "4 tokens", "d_k = 2"
    steps = attention_steps(seq.q, seq.k, seq.v)
    np.testing.assert_allclose(steps.weights.sum(axis=1), 1)  # "every row of weights sums to 1"
    assert list(seq.q[2]) == [2, 0] and list(seq.k[1]) == [2, 0]  # step 2: "(2, 0)" both
    assert list(seq.k @ seq.q[2]) == [0, 4, 0, -4]  # "4", "0", "0", "-4"
    assert round(float(steps.weights[2, 1]), 2) == 0.89  # "about 0.89"
    assert list(seq.q[3]) == [1, 1]  # step 3
    row = steps.weights[3]
    assert (
        row[0] == row[1]
        and round(float(row[0]), 2) == 0.47
        and round(float(row[2]), 2) == 0.03 == round(float(row[3]), 2)
    )
    puzzle = PUZZLES_BY_ID[values_of(step_of(title, 4))["puzzle"]]
    assert puzzle.title.startswith("2 ·") and list(puzzle.seq.q[0]) == [0, -2]  # "Puzzle 2", "(0, -2)"
    assert list(puzzle.seq.k @ puzzle.seq.q[0]) == [-4, 0, -2]  # "-4 with 'up', 0 with 'right', -2 with 'back'"
    assert values_of(step_of(title, 5))["d_ks"] == [4, 64, 1024]  # "4, 64 and 1024 here"
    scaling = declared_page("scaling")
    _, unscaled = scaling.ask("largest", values_of(step_of(title, 5)), {"d_k": 1024, "scaled": 0})
    _, scaled = scaling.ask("largest", values_of(step_of(title, 6)), {"d_k": 1024, "scaled": 1})
    assert unscaled > 0.9 and scaled < 0.5  # "nearly everything to one key"; "stays far from 1"
    causal = values_of(step_of(title, 7))
    assert causal["t"] == 2 and causal["seq"].n == 6  # "Change token 2", "outputs 2 to 5"
    masked = attention_steps(causal["seq"].q, causal["seq"].k, causal["seq"].v, causal=True).weights
    assert np.all(masked[2, 3:] == 0) and masked[2, :3].sum() == pytest.approx(1)  # step 8
    heads = values_of(step_of(title, 9))
    assert (heads["d_model"], heads["n_heads"]) == (16, 4)  # "16 split into 4 heads of 4 dimensions"
    assert heads["presets"][:4] == ("previous", "first", "self", "similar")  # the four heads the notes name
    assert values_of(step_of(title, 10))["presets"][0] == "random"  # "Head 1 is now a random head"


def test_word_order_numbers():
    title = "Where does word order come from?"
    words, _ = toy.parse_words(values_of(step_of(title, 2))["text"])
    assert len(words) == 9  # "reorders the 9 words"
    for n, layers, heard in ((7, 3, 7), (8, 6, 13)):
        values = values_of(step_of(title, n))
        assert (values["window"], values["layers"]) == (3, layers)  # "w = 3", "3 layers" / "6 layers"
        assert int((masks.window_reach(values["n"], 3, layers)[values["n"] - 1] > 0).sum()) == heard


def test_toy_to_real_model_numbers():
    title = "From a toy to a real model"
    block = values_of(step_of(title, 1))
    assert (block["d_model"], block["d_ff"], block["n_blocks"]) == (16, 64, 4)  # "16", "64", "4 blocks"
    assert values_of(step_of(title, 6))["n_new"] == 10  # "writes 10 new letters"
    gen = values_of(step_of(title, 7))
    assert (gen["layers"], gen["heads"], gen["d_head"], gen["context"], gen["dtype"]) == (32, 32, 128, 4096, "float16")
    assert gen["heads"] // gen["kv"] == 4 and gen["kv"] == 8  # "4 query heads share each of 8 key-value heads"
