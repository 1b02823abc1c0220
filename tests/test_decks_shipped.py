"""The shipped lessons (lessons/decks/*.toml): every step opens in AppTest without an error, a refused value or a
clamp note, and every number a step's notes give is true of that step's state, computed here by the core."""

from __future__ import annotations

from urllib.parse import parse_qsl

import numpy as np
import pytest

from attention import attention_steps
from classroom.decks import shipped
from classroom.questions import option_texts
from lessons.positions import toy
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


def truth(title: str, n: int):
    """The true value of step n's question, as the teacher's Next builds it from the step's view."""
    step = step_of(title, n)
    picks = {k: v for k, v in step.question.items() if k not in ("kind", "seconds")}
    return declared_page(step.page).ask(step.question["kind"], values_of(step), picks)[1]


def test_attention_in_20_minutes_numbers():
    title = "Attention in 20 minutes"
    seq = values_of(step_of(title, 1))["seq"]
    # step 1: "Four tokens", "a query and a key of 2 numbers (d_k = 2)", "a one-hot value of 4 numbers"
    assert seq.tokens == ("north", "east", "south", "west") and seq.q.shape[1] == seq.k.shape[1] == 2
    np.testing.assert_array_equal(seq.v, np.eye(4))
    np.testing.assert_allclose(attention_steps(seq.q, seq.k, seq.v).weights.sum(axis=1), 1)  # "every row sums to 1"
    assert list(seq.q[2]) == [2, 0] and truth(title, 1) == [1]  # "points east"; it reads 'east' most
    # step 2: "the same short vector, (0, 1)"; "2", "0", "-2"; "about 0.19", and not within the tolerance of step 1's
    # 'north' row, whose weight on the orthogonal key was on screen then
    seq = values_of(step_of(title, 2))["seq"]
    assert seq.tokens == ("up", "right", "down") and all(list(q) == [0, 1] for q in seq.q)
    assert list(seq.k @ seq.q[0]) == [2, 0, -2] and round(truth(title, 2), 2) == 0.19
    compass = values_of(step_of(title, 1))["seq"]
    shown = attention_steps(compass.q, compass.k, compass.v).weights
    assert abs(shown[0, 1] - truth(title, 2)) > 0.05  # the weight question's tolerance
    # step 3: "every query is now (1, 0)", "like the query of 'south' in step 1, (2, 0)"; "east about 0.65 (south's row
    # gave it 0.89), north and south about 0.16 each, west about 0.04"; no row of step 1 is within the row tolerance
    seq = values_of(step_of(title, 3))["seq"]
    assert all(list(q) == [1, 0] for q in seq.q) and list(compass.q[2]) == [2, 0]
    row = truth(title, 3)
    assert [round(w, 2) for w in row] == [0.16, 0.65, 0.16, 0.04] and round(float(shown[2, 1]), 2) == 0.89
    assert all(np.abs(shown[i] - row).max() > 0.1 for i in range(4))  # the row question's tolerance
    # step 4: "Puzzle 2", "(0, -2)", "-4 with 'up', 0 with 'right' and -2 with 'back'"
    puzzle = PUZZLES_BY_ID[values_of(step_of(title, 4))["puzzle"]]
    assert puzzle.title.startswith("2 ·") and list(puzzle.seq.q[0]) == [0, -2]
    assert list(puzzle.seq.k @ puzzle.seq.q[0]) == [-4, 0, -2] and truth(title, 4) == [1]
    # steps 5 and 6: "4, 64 and 1024 here", "about 0.97"; "about 0.36 from d_k = 64 on" (as the page's caption)
    assert values_of(step_of(title, 5))["d_ks"] == [4, 64, 1024] and round(truth(title, 5), 2) == 0.97
    assert step_of(title, 6).question is None and values_of(step_of(title, 6)) == values_of(step_of(title, 5))
    from ui.declared.scaling import shown_stats

    stats = shown_stats(values_of(step_of(title, 6)))
    assert round(stats.settled_max_weight_scaled, 2) == 0.36
    # steps 7 and 8: "Query 2 reads only keys 0, 1 and 2 ... exactly 0 ... still sum to 1"; "outputs 2 to 5 change"
    causal = values_of(step_of(title, 7))
    masked = attention_steps(causal["seq"].q, causal["seq"].k, causal["seq"].v, causal=True).weights
    assert np.all(masked[2, 3:] == 0) and masked[2, :3].sum() == pytest.approx(1) and step_of(title, 7).question is None
    body = declared_page("causal").ask("changes", values_of(step_of(title, 8)), {"token": 2, "mask": 1})[0]
    assert [option_texts(body)[i] for i in truth(title, 8)] == ["outputs 2…5"]
    # step 9: "16 split into 4 heads of 4 dimensions"; the four heads named; "the least sharp is head 4"
    heads = values_of(step_of(title, 9))
    assert (heads["d_model"], heads["n_heads"]) == (16, 4)
    assert heads["presets"][:4] == ("previous", "first", "self", "similar") and truth(title, 9) == [3]
    # step 10: "Head 1 is now a random head"; "reading 'west' most"
    assert values_of(step_of(title, 10))["presets"][0] == "random" and truth(title, 10) == [3]


def test_word_order_numbers():
    title = "Where does word order come from?"
    words, _ = toy.parse_words(values_of(step_of(title, 2))["text"])
    assert len(words) == 9 and truth(title, 2) == [1]  # "reorders the 9 words"; "They are not"
    for n, window, layers, heard in ((7, 3, 3, 7), (8, 4, 4, 13)):
        values = values_of(step_of(title, n))
        assert (values["window"], values["layers"]) == (window, layers)  # "w = 3", "3 layers" / "w = 4, and 4 layers"
        assert truth(title, n) == [heard - 1]  # "7" / "13 positions" (option i is i + 1 positions)
        assert heard == layers * (window - 1) + 1  # "L(w - 1) + 1" / "4 · 3 + 1 = 13"


def test_toy_to_real_model_numbers():
    title = "From a toy to a real model"
    block = values_of(step_of(title, 1))
    assert (block["d_model"], block["d_ff"], block["n_blocks"]) == (16, 64, 4)  # "16", "64", "4 blocks"
    assert truth(title, 1) == [1]  # "(n, d_ff): 4 tokens by 64"
    length = declared_page("block").ask("length", values_of(step_of(title, 2)), {"norm": 0, "block": 4})[1]
    assert length == [1]  # step 2: "about as long as the square root of d_model = 16, that is 4"
    from ui.declared.block import shown_runs

    pre = values_of(step_of(title, 3))
    assert pre["norm"] == "pre" and pre["n_blocks"] == 4
    norms = shown_runs(pre)[1]["pre"].residual_norms
    assert np.all(np.diff(norms) > 0)  # step 3: "longer after every one of the 4 blocks than before it"
    assert truth(title, 4) == 1.0  # "Every time here, 1.0"
    text = values_of(step_of(title, 5))["text"].split()
    attend = declared_page("induction").ask("attend", values_of(step_of(title, 5)), {"query": 5})[1]
    assert text[5] == text[1] == "n" and text[2] == "o" and attend == [2]  # "looks at 'o', position 2"
    assert values_of(step_of(title, 6))["n_new"] == 10  # "writes 10 new letters"
    gen = values_of(step_of(title, 7))
    assert (gen["layers"], gen["heads"], gen["d_head"], gen["context"], gen["dtype"]) == (32, 32, 128, 32768, "float16")
    assert gen["heads"] // gen["kv"] == 8 and gen["kv"] == 4  # "8 query heads share each of 4 key-value heads"
    body = declared_page("generation").ask("shared", gen, {"sharing": 0})[0]
    assert option_texts(body)[truth(title, 7)[0]] == "2 GiB"  # the deck's "2 GiB"
    assert 32 * 2 * 32 * 128 * 32768 * 2 == 16 * 2**30  # "the 16 GiB without sharing": layers x (K, V) x heads ...
