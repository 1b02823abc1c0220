"""lessons/positions/toy.py: the words, their vectors, the toy head and `attend` with each method; and the prose
of every idea module, filled in."""

import importlib
import pkgutil

import numpy as np
import pytest

import lessons.positions
from attention import attention_steps
from attention.positions import rope, sinusoidal_encoding
from attention.pretrained import MODEL_NAME
from lessons.positions import learned
from lessons.positions.toy import (
    METHOD_LABELS,
    METHODS,
    TOY_METHODS,
    Toy,
    attend,
    method_label,
    methods_weights,
    parse_words,
    toy_head,
    toy_queries_keys,
    word_vectors,
)

SENTENCE = "the dog chased the cat up the tall tree"


def test_the_same_word_gets_the_same_vector_and_the_same_output_without_positions():
    words, _ = parse_words(SENTENCE)
    x = word_vectors(words, 16, seed=3)
    assert np.array_equal(x[0], x[3]) and np.array_equal(x[0], x[6]) and not np.array_equal(x[0], x[1])
    out = attend(x, toy_head(16, 3)).output
    assert np.array_equal(out[0], out[3])  # "the" is "the" wherever it stands
    assert not np.allclose(
        attend(x, toy_head(16, 3), "sinusoidal").output[0], attend(x, toy_head(16, 3), "sinusoidal").output[3]
    )


def test_each_method_adds_position_where_it_says():
    x, head = word_vectors(["a", "b", "c", "d"], 8), toy_head(8)
    plain = attend(x, head)
    assert np.array_equal(attend(x, head, "sinusoidal").q, (x + sinusoidal_encoding(4, 8)) @ head.w_q)
    rope_steps = attend(x, head, "rope")
    assert np.array_equal(rope_steps.q, rope(x @ head.w_q)) and np.array_equal(rope_steps.v, plain.v)  # v untouched
    alibi = attend(x, head, "alibi", alibi_heads=8, alibi_head=0)
    np.testing.assert_allclose(
        alibi.masked - plain.scaled, [[-0.5 * max(i - j, 0) for j in range(4)] for i in range(4)]
    )
    with pytest.raises(ValueError, match="at least 4 rows"):
        attend(x, head, "learned", table=np.zeros((3, 8)))
    with pytest.raises(ValueError, match="method='absolute'"):
        attend(x, head, "absolute")


@pytest.mark.parametrize(
    "text, problem",
    [
        (SENTENCE, None),
        ("one", "at least 2 words (found 1)"),
        ("   ", "at least 2 words (found 0)"),
        ("w " * 17, "at most 16 words (found 17)"),
        ("a " + "x" * 25, "a word has 25 characters"),
    ],
)
def test_parse_words(text, problem):
    found = parse_words(text)[1]
    assert found == problem if problem is None else problem in found


def test_attention_steps_is_what_the_toy_runs():
    x, head = word_vectors(["a", "b"], 4), toy_head(4)
    expected = attention_steps(x @ head.w_q, x @ head.w_k, x @ head.w_v)
    np.testing.assert_array_equal(attend(x, head).weights, expected.weights)


NINE = parse_words("the dog chased the cat up the tall tree")[0]


def test_the_toy_bundles_the_words_their_vectors_and_the_head():
    toy = Toy.build(list(NINE), 8, 3)
    assert toy.words == NINE and (toy.d_model, toy.seed) == (8, 3)
    np.testing.assert_array_equal(toy.x, word_vectors(NINE, 8, 3))
    np.testing.assert_array_equal(toy.head.w_v, toy_head(8, 3).w_v)
    np.testing.assert_array_equal(toy.x[0], toy.x[3])  # "the" twice: the same vector, no position in it


def test_the_toy_queries_and_keys_are_x_times_w_q_and_w_k():
    toy = Toy.build(NINE, 16, 0)
    q, k = toy_queries_keys(toy.x, toy.head)
    for i in (0, 4):
        np.testing.assert_allclose(q[i], [toy.x[i] @ toy.head.w_q[:, c] for c in range(16)])
        np.testing.assert_allclose(k[i], [toy.x[i] @ toy.head.w_k[:, c] for c in range(16)])
    assert not np.allclose(q, k)


def test_methods_weights_is_each_toy_method_in_order_and_uses_the_alibi_heads_given():
    toy = Toy.build(NINE, 16, 0)
    weights = methods_weights(toy.x, toy.head, alibi_heads=5)
    assert weights.shape == (4, 9, 9) and TOY_METHODS == ("none", "sinusoidal", "rope", "alibi")
    for panel, method in zip(weights, TOY_METHODS):
        np.testing.assert_allclose(panel, attend(toy.x, toy.head, method, alibi_heads=5).weights)
    assert not np.allclose(weights[3], methods_weights(toy.x, toy.head, alibi_heads=8)[3])  # head 1 of 5 ≠ of 8
    assert np.all(weights[0][0, 1:] > 0)  # no causal mask: the first word reads the words after it


def test_each_method_is_named_by_its_own_label():
    assert [method_label(m) for m in METHODS] == [METHOD_LABELS[m] for m in METHODS]  # English outside a run
    assert len({method_label(m) for m in METHODS}) == len(METHODS)
    assert method_label("rope") == "RoPE (rotates q and k)"


IDEAS = [
    importlib.import_module(f"lessons.positions.{m.name}") for m in pkgutil.iter_modules(lessons.positions.__path__)
]
# every module's sentences and names in capitals (its equations, *_LATEX, are LaTeX: braces are theirs)
CONSTANTS = {
    f"{module.__name__}.{name}": value
    for module in IDEAS
    for name, value in vars(module).items()
    if name.isupper() and isinstance(value, str) and not name.endswith("_LATEX")
}


def test_every_paragraph_is_filled_in_and_names_the_model_where_it_speaks_of_it():
    assert len(CONSTANTS) >= 12
    for name, value in CONSTANTS.items():
        assert value.strip() and "{" not in value and "}" not in value, name  # an f-string that lost its f
        assert "  " not in value.replace("  \n", ""), name  # two joined string pieces, one space too many
    for name in ("LEARNED_INTRO", "LEARNED_NOT_INSTALLED", "LEARNED_COLUMN_MISSING"):
        assert MODEL_NAME in CONSTANTS[f"lessons.positions.learned.{name}"]
    assert learned.WORD_PIECES in learned.LEARNED_HEAD_INTRO
