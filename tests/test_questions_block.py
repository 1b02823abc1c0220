"""The block page's questions (ui/questions/block.py): how long a position's vector is after a block, post-norm or
pre-norm, against √d_model, checked against a block written here from its definition; and the shape of a tensor
inside the block, against the sizes it is made of. In a room, the page hides the lengths (or the shapes) on every
screen until the reveal."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import erf

from classroom.questions import option_texts, prompt_text
from figures.block import shape_text
from lessons.head_library import embed_tokens, run_stack, stack_params
from tests.apptest_helpers import chart_by_key, every_text
from tests.classroom_asking import ask, hidden_on, reveal
from ui.classroom_ask import ask_box_key
from ui.page_questions import PageQuestions
from ui.questions.block import TENSORS, length_options, length_question, questions, shape_question
from ui.sequence import default_sequence

PAGE = "pages/block.py"
TOKENS = tuple(default_sequence().tokens)  # the Playground's sequence the page reads, as a fresh session has it
DEFAULTS = dict(
    d_model=16, n_heads=4, d_ff=64, activation="relu", norm="post", causal=False, n_blocks=4, seed=0, inspect=1
)
CHANGED = dict(DEFAULTS, d_model=12, n_heads=3, d_ff=40, activation="gelu", norm="pre", causal=True, n_blocks=6, seed=5)
SIX = ("the", "cat", "sat", "on", "the", "mat")
SHORTER, ABOUT, LONGER = [0], [1], [2]


def layer_norm(z: np.ndarray) -> np.ndarray:
    """γ = 1, β = 0, ε = 1e-5, as in the page's untrained blocks."""
    centred = z - z.mean(-1, keepdims=True)
    return centred / np.sqrt((centred**2).mean(-1, keepdims=True) + 1e-5)


def block_by_hand(x: np.ndarray, p, n_heads: int, norm: str, activation: str, causal: bool) -> np.ndarray:
    """One transformer block from its definition (Vaswani et al.; GPT-2 for pre-norm)."""
    n, d = x.shape
    d_head = d // n_heads

    def mha(z):
        q, k, v = (
            (z @ w + b).reshape(n, n_heads, d_head).transpose(1, 0, 2)
            for w, b in ((p.w_q, p.b_q), (p.w_k, p.b_k), (p.w_v, p.b_v))
        )
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(d_head)  # (h, n, n)
        if causal:
            scores = np.where(np.tril(np.ones((n, n), bool)), scores, -np.inf)
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        weights /= weights.sum(-1, keepdims=True)
        return (weights @ v).transpose(1, 0, 2).reshape(n, d) @ p.w_o + p.b_o

    def ffn(z):
        h = z @ p.w_1 + p.b_1
        h = np.maximum(h, 0) if activation == "relu" else 0.5 * h * (1 + erf(h / np.sqrt(2)))
        return h @ p.w_2 + p.b_2

    if norm == "post":
        y = layer_norm(x + mha(x))
        return layer_norm(y + ffn(y))
    y = x + mha(layer_norm(x))
    return y + ffn(layer_norm(y))


def expected_length(values: dict, tokens, norm: str, block: int) -> list[int]:
    x = embed_tokens(tokens, values["d_model"], values["seed"]).x
    for p in stack_params(values["d_model"], values["d_ff"], block, values["seed"]):
        x = block_by_hand(x, p, values["n_heads"], norm, values["activation"], values["causal"])
    ratio = np.sqrt((x**2).sum(-1)).mean() / math.sqrt(values["d_model"])
    return SHORTER if ratio < 0.95 else LONGER if ratio > 1.05 else ABOUT


def page_runs(values: dict, tokens) -> dict:
    """The runs the page computes (its `compute`), from the core."""
    x = embed_tokens(tokens, values["d_model"], values["seed"]).x
    blocks = stack_params(values["d_model"], values["d_ff"], values["n_blocks"], values["seed"])
    kwargs = dict(causal=values["causal"], activation=values["activation"])
    return {norm: run_stack(x, blocks, values["n_heads"], norm=norm, **kwargs) for norm in ("post", "pre")}


@pytest.mark.parametrize(("values", "tokens"), [(DEFAULTS, TOKENS), (CHANGED, SIX)], ids=["defaults", "changed"])
@pytest.mark.parametrize("norm", ["post", "pre"])
def test_the_length_answer_is_the_stack_run_by_hand(values, tokens, norm):
    runs = page_runs(values, tokens)
    input_length = np.linalg.norm(embed_tokens(tokens, values["d_model"], values["seed"]).x, axis=-1).mean()
    for block in range(1, values["n_blocks"] + 1):
        body, truth = length_question(values, tokens, runs, norm, block)
        assert truth == expected_length(values, tokens, norm, block)
        assert option_texts(body) == length_options(values["d_model"])
        assert f"√d_model = {round(math.sqrt(values['d_model']), 2):g}" in option_texts(body)[1]
        prompt = prompt_text(body)
        assert prompt.startswith(f"{norm.capitalize()}-norm stack of {values['n_blocks']} random blocks")
        for named in (
            f"d_model {values['d_model']}, d_ff {values['d_ff']}, {values['n_heads']} heads, {values['activation']}",
            "causal mask" if values["causal"] else "no mask",
            f"seed {values['seed']}",
            " ".join(tokens),
            f"after block {block},",
            f"At the input it is {round(input_length, 2):g}.",
        ):
            assert named in prompt
    # post-norm ends every block with a layer norm: √d_model; the pre-norm stream grows past it here
    assert length_question(values, tokens, runs, "post", values["n_blocks"])[1] == ABOUT
    assert length_question(values, tokens, runs, "pre", values["n_blocks"])[1] == LONGER


def test_the_length_answer_can_be_shorter_than_root_d_model():
    """Pre-norm after one block with a one-unit feed-forward: the stream, √(d_model/2) long at the input, stays
    below 95% of √d_model."""
    values = dict(DEFAULTS, d_ff=1, n_blocks=1, norm="pre")
    runs = page_runs(values, TOKENS)
    assert length_question(values, TOKENS, runs, "pre", 1)[1] == expected_length(values, TOKENS, "pre", 1) == SHORTER


@pytest.mark.parametrize(("values", "tokens"), [(DEFAULTS, TOKENS), (CHANGED, SIX)], ids=["defaults", "changed"])
def test_the_shape_answer_is_made_of_the_blocks_sizes(values, tokens):
    n, d, d_ff, h = len(tokens), values["d_model"], values["d_ff"], values["n_heads"]
    expected = {
        "ffn_hidden": f"(n, d_ff) = {shape_text((n, d_ff))}",
        "q_heads": f"(h, n, d_head) = {shape_text((h, n, d // h))}",
        "attention": f"(n, d_model) = {shape_text((n, d))}",
        "ffn_out": f"(n, d_model) = {shape_text((n, d))}",
    }
    runs = page_runs(values, tokens)
    for tensor, (name, said, _) in enumerate(TENSORS):
        body, truth = shape_question(values, tokens, runs, tensor)
        assert [option_texts(body)[i] for i in truth] == [expected[name]]
        assert len(set(option_texts(body))) == len(option_texts(body)) >= 3
        assert f"(d_model, d_ff) = {shape_text((d, d_ff))}" in option_texts(body)  # the weight W_1, not the activation
        prompt = prompt_text(body)
        assert said in prompt and f"n = {n} tokens" in prompt and " ".join(tokens) in prompt
        assert f"h = {h} heads, d_head = d_model / h = {d // h}" in prompt
        assert f"d_model {d}, d_ff {d_ff}, {h} heads" in prompt and len(prompt) <= 300


def test_each_shape_option_names_its_axes_so_one_with_the_same_sizes_is_not_right():
    """With the defaults n = h = d_head = 4: (h, n, d_head) and (h, n, n) are both (4, 4, 4), (n, n) and (n, d_head)
    both (4, 4). Each option names its axes, so the stacked queries' answer is (h, n, d_head) alone: a student who
    answers (h, n, n), the stacked scores, is wrong."""
    values = dict(DEFAULTS)
    assert len(TOKENS) == values["n_heads"] == values["d_model"] // values["n_heads"] == 4
    runs = page_runs(values, TOKENS)
    body, truth = shape_question(values, TOKENS, runs, [name for name, *_ in TENSORS].index("q_heads"))
    options = option_texts(body)
    assert "(h, n, d_head) = (4, 4, 4)" in options and "(h, n, n) = (4, 4, 4)" in options
    assert "(n, n) = (4, 4)" in options and "(n, d_head) = (4, 4)" in options
    assert [options[i] for i in truth] == ["(h, n, d_head) = (4, 4, 4)"]
    assert options.index("(h, n, n) = (4, 4, 4)") not in truth
    axes = [option.split(" = ")[0] for option in options]
    assert len(set(axes)) == len(axes)  # one shape per option: no two options name the same axes
    for tensor in range(len(TENSORS)):  # every tensor: exactly one right option, whatever sizes coincide
        assert len(shape_question(values, TOKENS, runs, tensor)[1]) == 1


def test_bad_picks_and_states_are_refused():
    def runs_of(values):
        return TOKENS, page_runs(values, TOKENS)

    declared = PageQuestions("block", "block", questions(runs_of))
    body, truth = declared.ask("length", DEFAULTS, {})  # defaults: the page's norm, the last block
    assert body["source"]["norm"] == "post" and body["source"]["block"] == 4 and truth == ABOUT
    assert declared.ask("length", dict(DEFAULTS, norm="pre"), {})[0]["source"]["norm"] == "pre"
    with pytest.raises(ValueError, match="is not one this page offers"):
        declared.ask("length", DEFAULTS, {"block": 5})
    with pytest.raises(ValueError, match="is not one this page offers"):
        declared.ask("shape", DEFAULTS, {"tensor": len(TENSORS)})
    with pytest.raises(ValueError, match="not in the stack"):
        length_question(DEFAULTS, TOKENS, page_runs(DEFAULTS, TOKENS), "post", 0)

    def no_block(values):
        raise ValueError("d_model = 10 cannot be split into 4 heads: the page shows no block")

    with pytest.raises(ValueError, match="cannot be split"):
        PageQuestions("block", "block", questions(no_block)).ask("shape", DEFAULTS, {})


def test_asked_in_a_room_the_lengths_are_hidden_until_the_reveal(room):
    teacher, student, code = room
    teacher.switch_page(PAGE).run()
    teacher.radio(key="block_norm").set_value("pre").run()
    student.run()
    assert [t.value for t in student.title] == ["The transformer block"]
    assert "mean |x| at the output" in [m.label for m in student.metric]
    question = ask(teacher, "length", norm=1, block=4)
    assert question.body["source"]["norm"] == "pre"  # norm 1: pre-norm, the norm the page shows, offered first
    assert question.truth == expected_length(dict(DEFAULTS, norm="pre"), TOKENS, "pre", 4) == LONGER
    for screen in (student, teacher):
        screen.run()
        assert not screen.exception and hidden_on(screen)
        with pytest.raises(KeyError):
            chart_by_key(screen, "block_norm_fig")
        assert "mean |x| at the output" not in [m.label for m in screen.metric]
        assert "average length goes from" not in every_text(screen)
        chart_by_key(screen, "block_diagram")  # the shapes stay in view
    reveal(teacher, question)
    student.run()
    assert not student.exception and not hidden_on(student)
    chart_by_key(student, "block_norm_fig")
    assert "average length goes from" in every_text(student)


def test_asked_in_a_room_the_shapes_are_hidden_until_the_reveal(room):
    teacher, student, code = room
    teacher.switch_page(PAGE).run()
    student.run()
    question = ask(teacher, "shape", tensor=0)  # the feed-forward hidden layer
    assert option_texts(question.body)[question.truth[0]] == f"(n, d_ff) = {shape_text((len(TOKENS), 64))}"
    for screen in (student, teacher):
        screen.run()
        assert not screen.exception and hidden_on(screen)
        with pytest.raises(KeyError):
            chart_by_key(screen, "block_diagram")
        assert not [t for t in screen.table if "shape" in t.value.columns]
        assert "Only the feed-forward hidden layer" not in every_text(screen)
        chart_by_key(screen, "block_norm_fig")  # the lengths stay in view
    reveal(teacher, question)
    student.run()
    assert not student.exception and not hidden_on(student)
    chart_by_key(student, "block_diagram")
    assert "Only the feed-forward hidden layer has another width, d_ff = 64" in every_text(student)


def test_a_block_the_page_cannot_show_cannot_be_asked_about(room):
    teacher, student, code = room
    teacher.switch_page(PAGE).run()
    teacher.slider(key="block_n_heads").set_value(3).run()  # 16 / 3: the page stops
    teacher.session_state[ask_box_key(teacher.session_state)] = True  # the teacher opens the Ask box
    teacher.run()
    teacher.radio(key="class_ask_kind").set_value("shape").run()
    assert not teacher.exception
    # the box says why before the teacher presses Ask, which waits for another choice
    refused = [w.value.replace("\\", "") for w in teacher.warning if w.value.startswith("Cannot ask")]
    assert refused == ["Cannot ask this now: d_model = 16 cannot be split into 3 heads: the page shows no block."]
    assert teacher.button(key="class_ask").disabled
    student.run()
    assert not hidden_on(student)
