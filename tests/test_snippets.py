"""The 'reproduce this in Python' snippets run, and print the numbers the pages show."""

import io
from contextlib import redirect_stdout

import numpy as np
import pytest

from attention import attention_steps, multi_head_steps
from lessons.examples import random_example
from lessons.head_library import embed_tokens, head_library_weights
from tests.apptest_helpers import run_page
from ui.snippets import (
    attention_snippet,
    block_snippet,
    deeper_snippet,
    four_ways_snippet,
    generation_snippet,
    heads_snippet,
    induction_snippet,
    masks_snippet,
    pretrained_snippet,
    scaling_snippet,
    shuffle_snippet,
)


def run(code: str) -> dict:
    namespace: dict = {}
    with redirect_stdout(io.StringIO()):
        exec(compile(code, "<snippet>", "exec"), namespace)  # noqa: S102 - our own generated code
    return namespace


@pytest.mark.parametrize("causal, scale", [(False, True), (True, True), (False, False), (True, False)])
def test_the_numpy_snippet_gives_the_cores_weights_and_output(causal, scale):
    e = random_example(5, 3, 2, seed=3).seq
    ns = run(attention_snippet(e.tokens, e.q, e.k, e.v, causal=causal, scale=scale))
    steps = attention_steps(e.q, e.k, e.v, causal=causal, scale=scale)
    np.testing.assert_allclose(ns["weights"], steps.weights, atol=1e-12)
    np.testing.assert_allclose(ns["output"], steps.output, atol=1e-12)
    assert ns["tokens"] == list(e.tokens)


def test_user_text_stays_a_string_literal():
    tokens = ["');import os;print('", "<img src=x onerror=alert(1)>"]
    ns = run(attention_snippet(tokens, np.eye(2), np.eye(2), np.eye(2), causal=False, scale=True))
    assert ns["tokens"] == tokens and "os" not in ns


def test_the_heads_snippet_matches_the_heads_computation():
    tokens = ("the", "cat", "sat", "on", "the", "mat")
    ns = run(
        heads_snippet(
            tokens,
            d_model=16,
            n_heads=4,
            presets=["previous", "first", "self", "uniform"],
            seed=2,
            causal=True,
            scale=True,
        )
    )
    emb = embed_tokens(tokens, 16, 2)
    hw = head_library_weights(emb, ["previous", "first", "self", "uniform"], 2)
    expected = multi_head_steps(emb.x, hw.w_q, hw.w_k, hw.w_v, hw.w_o, 4, b_q=hw.b_q, causal=True).weights
    np.testing.assert_array_equal(ns["weights"], expected)


def test_the_block_snippet_stacks_blocks_and_keeps_the_shape():
    ns = run(
        block_snippet(
            ["a", "b", "c"],
            d_model=8,
            d_ff=32,
            n_heads=2,
            n_blocks=3,
            seed=1,
            causal=False,
            activation="gelu",
            norm="pre",
        )
    )
    assert ns["x"].shape == (3, 8) and len(ns["trace"].steps) == 8


def test_the_scaling_snippet_runs():
    ns = run(scaling_snippet(n_keys=4, n_samples=20, seed=0, train_d_k=16, lr=1.0, steps=5))
    assert ns["stats"].d_k[-1] == 4096 and len(ns["c"].scaled.loss) == 5


def test_the_pretrained_snippet_reads_the_same_head():
    from attention.pretrained import load_minilm

    text = 'He said "it\'s fine"\nand left.'
    ns = run(pretrained_snippet(text, layer=2, head=5))
    np.testing.assert_array_equal(ns["weights"], load_minilm().run(text).attentions[1, 4])


def test_the_deeper_snippet_projects_the_same_head_and_rolls_out_the_same_weights():
    from attention.pretrained import load_minilm

    text = 'It said "\\n" and left; import os'  # quotes, a backslash and code-like words stay text
    ns = run(deeper_snippet(text, layer=6, head=1))
    reference = load_minilm().run(text)
    np.testing.assert_array_equal(ns["q"], reference.queries[5, 0])
    np.testing.assert_array_equal(ns["k"], reference.keys[5, 0])
    np.testing.assert_allclose(ns["feed"].sum(), 1.0)
    assert ns["rollout"].shape == (reference.n_tokens, reference.n_tokens)
    assert "os" not in ns  # the text was never run as code


def test_the_playground_shows_its_snippet():
    at = run_page()
    assert not at.main.code  # drawn only while its expander is open
    at.session_state["snippet"] = True  # what opening the expander in the browser does
    at.run()
    codes = [c.value for c in at.main.code]
    assert any("Q = np.array([[0, 2], [0, 2], [2, 0], [1, 1]], dtype=float)" in c for c in codes)


def test_the_induction_snippet_measures_and_completes_with_the_shipped_model():
    from attention.decoder import generate
    from lessons.induction import evaluate, letters_to_ids, load_induction_model

    text = "q w e ');import os;print(' q w"
    ns = run(induction_snippet(model="shipped", seed=0, steps=2000, text="a b c a", n_new=3))
    expected = evaluate(load_induction_model(), half=10, n_sequences=500, seed=12345)
    assert ns["result"].accuracy_repeated == expected.accuracy_repeated
    np.testing.assert_array_equal(ns["completed"], generate(load_induction_model(), letters_to_ids("abca"), 3))
    assert ns["attentions"].shape == (2, 2, 6, 6)
    code = induction_snippet(model="shipped", seed=0, steps=2000, text=text, n_new=3)
    assert repr(text) in code  # user text stays a string literal; it is refused by letters_to_ids when run
    with pytest.raises(ValueError, match="not one of the model's tokens"):
        run(code)


def test_the_induction_snippet_trains_your_model_with_its_seed():
    from lessons.induction import InductionConfig, train_induction

    ns = run(induction_snippet(model="yours", seed=3, steps=4, text="a b a", n_new=1))
    expected = train_induction(InductionConfig(seed=3, steps=4)).params
    np.testing.assert_array_equal(ns["params"].token_embedding, expected.token_embedding)


def test_the_generation_snippet_generates_and_checks_the_cache():
    from attention.decoder import generate
    from lessons.induction import letters_to_ids, load_induction_model

    ns = run(generation_snippet(prompt="a b c a", n_new=5, temperature=0.5, top_k=3, seed=2))
    expected = generate(load_induction_model(), letters_to_ids("abca"), 5, temperature=0.5, top_k=3, seed=2)
    np.testing.assert_array_equal(ns["ids"], expected)
    assert ns["difference"] < 1e-12 and ns["cache"].n_total == 8


# ---------------------------------------------------------------- the position page

POSITION_WORDS = ["the", "dog", "bit", "the", "man", "');import os;print('"]


def test_the_shuffle_snippet_runs_the_pages_check():
    from lessons.positions.shuffle import permutation, shuffle_check
    from lessons.positions.toy import toy_head, word_vectors

    ns = run(shuffle_snippet(POSITION_WORDS, d_model=8, seed=4, shuffle=3, alibi_heads=4, head=2))
    assert ns["words"] == POSITION_WORDS and "os" not in ns
    x, head, perm = word_vectors(POSITION_WORDS, 8, 4), toy_head(8, 4), permutation(6, 3)
    np.testing.assert_array_equal(ns["perm"], perm)
    assert not ns["check"].passed  # the last check it ran: MiniLM's layer 1, with its positions
    expected = shuffle_check(x, head, perm, "alibi", alibi_heads=4)
    np.testing.assert_array_equal(
        shuffle_check(ns["x"], ns["head"], ns["perm"], "alibi", alibi_heads=4).undone, expected.undone
    )


def test_the_four_ways_snippet_checks_what_the_page_checks():
    from lessons.positions.rope import rope_offset_check
    from lessons.positions.sinusoidal import shift_error
    from lessons.positions.toy import toy_head, word_vectors

    ns = run(four_ways_snippet(POSITION_WORDS, d_model=16, seed=1, table_d=32, shift=5, offset=300, alibi_heads=6))
    assert float(np.abs(ns["pe"][5:] - ns["pe"][:-5] @ ns["m_k"]).max()) == shift_error(95, 32, 5)
    x, head = word_vectors(POSITION_WORDS, 16, 1), toy_head(16, 1)
    assert ns["check"].max_diff == rope_offset_check(x @ head.w_q, x @ head.w_k, 300).max_diff
    assert ns["check"].passed


def test_the_masks_snippet_runs_the_pages_padded_batch():
    from attention import padded_attention
    from lessons.positions.masks import padded_batch, window_reach
    from lessons.positions.toy import toy_head

    sequences = [["a", "b", "c"], ["<img src=x>"]]
    ns = run(masks_snippet(n=9, window=3, layers=2, sequences=sequences, d_model=8, seed=2, causal=True))
    np.testing.assert_array_equal(ns["first"], window_reach(9, 3, 2))
    x, lengths, _ = padded_batch(sequences, 8, 2)
    head = toy_head(8, 2)
    expected = padded_attention(x @ head.w_q, x @ head.w_k, x @ head.w_v, lengths, causal=True)
    np.testing.assert_array_equal(ns["result"].weights, expected.weights)
    assert ns["result"].used.tolist() == [[True, True, True], [True, False, False]]


def test_the_position_page_shows_its_snippets():
    keys = ("pos_snippet_shuffle", "pos_snippet_four_ways", "pos_snippet_masks")  # three expanders, opened
    at = run_page("pages/positions.py", state=dict.fromkeys(keys, True))
    codes = [c.value for c in at.main.code]
    assert any("perm = permutation(len(words), 1)" in c for c in codes)
    assert any("rope_offset_check(x @ head.w_q, x @ head.w_k, offset=5)" in c for c in codes)
    assert any("sliding_window_mask(16, 3)" in c for c in codes)
