"""The transformer block: shape in = shape out, a python-loop reference, the trace, and refusals."""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention import BlockParams, multi_head_attention, transformer_block

SETTINGS = settings(max_examples=25, deadline=None)
POST_STEPS = ["input", "attention", "residual_1", "norm_1", "ffn_hidden", "ffn_out", "residual_2", "norm_2"]
PRE_STEPS = ["input", "norm_1", "attention", "residual_1", "norm_2", "ffn_hidden", "ffn_out", "residual_2"]


@st.composite
def block_inputs(draw, dtype=np.float64):
    """(x, params, n_heads) with small random parameters; d_model a multiple of n_heads."""
    n_heads, d_head = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    d_model, d_ff, n = n_heads * d_head, draw(st.integers(1, 6)), draw(st.integers(1, 5))
    x = draw(arrays(dtype, (n, d_model), elements=st.floats(-3, 3, width=32 if dtype == np.float32 else 64)))
    seed = draw(st.integers(0, 2**32 - 1))
    return x, BlockParams.random(d_model, d_ff, np.random.default_rng(seed)), n_heads


# --- a reference written from scratch with python loops ------------------------------------------


def ref_layer_norm(rows, gamma, beta, eps):
    out = []
    for row in rows:
        mean = sum(row) / len(row)
        var = sum((r - mean) ** 2 for r in row) / len(row)
        out.append([g * (r - mean) / math.sqrt(var + eps) + b for r, g, b in zip(row, gamma, beta)])
    return out


def ref_linear(rows, w, b):
    return [[sum(row[i] * w[i][j] for i in range(len(row))) + b[j] for j in range(len(b))] for row in rows]


def ref_attention(rows, p, n_heads, causal):
    q, k, v = (ref_linear(rows, getattr(p, f"w_{t}").tolist(), getattr(p, f"b_{t}").tolist()) for t in "qkv")
    n, d_model = len(rows), len(rows[0])
    d_head = d_model // n_heads
    concat = [[0.0] * d_model for _ in range(n)]
    for h in range(n_heads):
        cols = range(h * d_head, (h + 1) * d_head)
        for i in range(n):
            seen = range(i + 1) if causal else range(n)
            scores = [sum(q[i][c] * k[j][c] for c in cols) / math.sqrt(d_head) for j in seen]
            exps = [math.exp(s - max(scores)) for s in scores]
            for c in cols:
                concat[i][c] = sum(e * v[j][c] for e, j in zip(exps, seen)) / sum(exps)
    return ref_linear(concat, p.w_o.tolist(), p.b_o.tolist())


def ref_block(x, p, n_heads, causal, activation, norm, eps=1e-5):
    act = (lambda z: max(z, 0.0)) if activation == "relu" else (lambda z: 0.5 * z * (1 + math.erf(z / math.sqrt(2))))

    def ffn(rows):
        hidden = [[act(z) for z in row] for row in ref_linear(rows, p.w_1.tolist(), p.b_1.tolist())]
        return ref_linear(hidden, p.w_2.tolist(), p.b_2.tolist())

    def add(a, b):
        return [[s + t for s, t in zip(ra, rb)] for ra, rb in zip(a, b)]

    ln1 = lambda rows: ref_layer_norm(rows, p.ln1_gamma.tolist(), p.ln1_beta.tolist(), eps)  # noqa: E731
    ln2 = lambda rows: ref_layer_norm(rows, p.ln2_gamma.tolist(), p.ln2_beta.tolist(), eps)  # noqa: E731
    rows = x.tolist()
    if norm == "post":
        y = ln1(add(rows, ref_attention(rows, p, n_heads, causal)))
        return np.array(ln2(add(y, ffn(y))))
    y = add(rows, ref_attention(ln1(rows), p, n_heads, causal))
    return np.array(add(y, ffn(ln2(y))))


def with_layer_norm_params(params, rng):
    """The same params with non-trivial layer-norm scales and shifts, so the reference checks them too."""
    d = params.d_model
    return dataclasses.replace(
        params,
        ln1_gamma=rng.uniform(0.5, 2, d),
        ln1_beta=rng.uniform(-1, 1, d),
        ln2_gamma=rng.uniform(0.5, 2, d),
        ln2_beta=rng.uniform(-1, 1, d),
    )


@SETTINGS
@given(block_inputs(), st.sampled_from(["post", "pre"]), st.sampled_from(["relu", "gelu"]), st.booleans())
def test_matches_the_python_loop_reference(inputs, norm, activation, causal):
    x, params, n_heads = inputs
    params = with_layer_norm_params(params, np.random.default_rng(x.shape[0]))
    out, _ = transformer_block(x, params, n_heads, causal=causal, activation=activation, norm=norm)
    assert np.allclose(out, ref_block(x, params, n_heads, causal, activation, norm), rtol=1e-9, atol=1e-9)


# --- shapes and stacking -------------------------------------------------------------------------


@SETTINGS
@given(block_inputs(), st.sampled_from(["post", "pre"]), st.booleans())
def test_output_shape_equals_input_shape_so_blocks_stack(inputs, norm, causal):
    x, params, n_heads = inputs
    second = BlockParams.random(params.d_model, 2 * params.d_ff, np.random.default_rng(7))
    out1, trace1 = transformer_block(x, params, n_heads, causal=causal, norm=norm)
    out2, trace2 = transformer_block(out1, second, n_heads, causal=causal, norm=norm)
    assert out1.shape == out2.shape == x.shape
    assert np.all(np.isfinite(out2))
    assert np.array_equal(trace2["input"], out1)
    assert trace1.weights.shape == (n_heads, x.shape[0], x.shape[0])


def test_trace_lists_every_step_in_order_with_its_shape():
    x = np.random.default_rng(0).standard_normal((2, 5, 6))  # a batch of 2 sequences
    params = BlockParams.random(6, 10, np.random.default_rng(1))
    for norm, names in (("post", POST_STEPS), ("pre", PRE_STEPS)):
        out, trace = transformer_block(x, params, 3, norm=norm)
        assert trace.names == names and trace.norm == norm
        for step in trace.steps:
            assert step.shape == ((2, 5, 10) if step.name == "ffn_hidden" else (2, 5, 6)), step.name
            assert step.label
        assert trace.weights.shape == (2, 3, 5, 5)
        assert np.array_equal(trace["input"], x)
        assert np.array_equal(out, trace["norm_2" if norm == "post" else "residual_2"])
        with pytest.raises(KeyError, match="no step named 'nope'"):
            trace["nope"]


def test_trace_attention_step_is_multi_head_attention():
    rng = np.random.default_rng(2)
    x, p = rng.standard_normal((4, 6)), BlockParams.random(6, 8, np.random.default_rng(3))
    _, trace = transformer_block(x, p, 2, causal=True, norm="post")
    expected, weights = multi_head_attention(
        x, p.w_q, p.w_k, p.w_v, p.w_o, 2, b_q=p.b_q, b_k=p.b_k, b_v=p.b_v, b_o=p.b_o, causal=True
    )
    assert np.array_equal(trace["attention"], expected) and np.array_equal(trace.weights, weights)
    assert np.array_equal(trace["residual_1"], x + expected)


def test_post_norm_output_rows_are_normalised():
    x = np.random.default_rng(4).standard_normal((5, 8)) * 10
    out, _ = transformer_block(x, BlockParams.random(8, 16, np.random.default_rng(5)), 4, norm="post")
    assert np.allclose(out.mean(axis=-1), 0, atol=1e-12) and np.allclose(out.var(axis=-1), 1, atol=1e-3)


@SETTINGS
@given(block_inputs(), st.sampled_from(["post", "pre"]), st.data())
def test_causal_outputs_ignore_later_tokens(inputs, norm, data):
    x, params, n_heads = inputs
    n = x.shape[0]
    if n < 2:
        return
    t = data.draw(st.integers(0, n - 2), label="t")
    x2 = x.copy()
    x2[t + 1 :] = data.draw(arrays(np.float64, x2[t + 1 :].shape, elements=st.floats(-3, 3)), label="new later x")
    out1, trace1 = transformer_block(x, params, n_heads, causal=True, norm=norm)
    out2, trace2 = transformer_block(x2, params, n_heads, causal=True, norm=norm)
    assert np.array_equal(out1[: t + 1], out2[: t + 1])  # bit for bit
    assert np.array_equal(trace1.weights[:, : t + 1], trace2.weights[:, : t + 1])


@SETTINGS
@given(block_inputs(dtype=np.float32), st.sampled_from(["post", "pre"]), st.sampled_from(["relu", "gelu"]))
def test_float32_stays_float32(inputs, norm, activation):
    x, params, n_heads = inputs
    params32 = BlockParams(**{f.name: getattr(params, f.name).astype(np.float32) for f in dataclasses.fields(params)})
    for p in (params, params32):  # float64 parameters do not promote a float32 x
        out, trace = transformer_block(x, p, n_heads, norm=norm, activation=activation)
        assert out.dtype == np.float32 and trace.weights.dtype == np.float32
        assert all(step.value.dtype == np.float32 for step in trace.steps), [s.value.dtype for s in trace.steps]


def test_random_params_are_seeded_shaped_and_frozen():
    a = BlockParams.random(6, 10, np.random.default_rng(0))
    b = BlockParams.random(6, 10, np.random.default_rng(0))
    assert all(np.array_equal(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    assert a.d_model == 6 and a.d_ff == 10 and a.w_1.shape == (6, 10) and a.b_2.shape == (6,)
    assert np.array_equal(a.ln1_gamma, np.ones(6)) and np.array_equal(a.ln2_beta, np.zeros(6))
    assert BlockParams.random(4, 4, np.random.default_rng(0), dtype=np.float32).w_q.dtype == np.float32
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.w_q = np.eye(6)


# --- refusals ------------------------------------------------------------------------------------

PARAMS = BlockParams.random(6, 10, np.random.default_rng(0))


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(norm="middle"), r"norm must be one of \('post', 'pre'\), got 'middle'"),
        (dict(activation="swish"), r"activation must be one of \('relu', 'gelu'\), got 'swish'"),
        (dict(n_heads=4), "d_model=6 is not divisible by n_heads=4"),
        (dict(n_heads=0), "n_heads must be at least 1"),
        (dict(x=np.ones((3, 4))), r"w_q has shape \(6, 6\); expected \(4, 4\)"),
        (dict(x=np.ones((0, 6))), r"x has shape \(0, 6\): it is empty"),
        (dict(x=np.ones(6)), r"x has shape \(6,\); expected \(..., n, d_model\)"),
        (dict(x=np.full((3, 6), np.nan)), r"x contains nan at index \(0, 0\)"),
        (dict(x=np.ones((3, 6)) * 1j), "x is complex"),
        (dict(eps=0.0), "eps must be a positive finite number"),
        (
            dict(params=dataclasses.replace(PARAMS, w_1=np.ones(6))),
            r"w_1 has shape \(6,\); expected \(d_model=6, d_ff\)",
        ),
        (dict(params=dataclasses.replace(PARAMS, b_1=np.ones(6))), r"b_1 has shape \(6,\); expected \(10,\)"),
        (
            dict(params=dataclasses.replace(PARAMS, w_2=np.ones((6, 10)))),
            r"w_2 has shape \(6, 10\); expected \(10, 6\)",
        ),
        (
            dict(params=dataclasses.replace(PARAMS, ln2_gamma=np.ones(5))),
            r"ln2_gamma has shape \(5,\); expected \(6,\)",
        ),
        (dict(params=dataclasses.replace(PARAMS, b_v=np.full(6, np.inf))), r"b_v contains inf"),
        (dict(params=dataclasses.replace(PARAMS, w_o=np.full((6, 6), 1e308))), "overflowed"),
    ],
)
def test_bad_input_raises_value_error(changes, message):
    kwargs = dict(x=np.ones((3, 6)), params=PARAMS, n_heads=2) | changes
    with np.errstate(over="ignore", invalid="ignore"):
        with pytest.raises(ValueError, match=message):
            transformer_block(**kwargs)


@pytest.mark.parametrize(
    "d_model, d_ff, message",
    [
        (0, 4, "d_model must be at least 1, got 0"),
        (4, -1, "d_ff must be at least 1, got -1"),
        (4.0, 4, "d_model must be a whole number"),
    ],
)
def test_random_params_refuse_bad_sizes(d_model, d_ff, message):
    with pytest.raises(ValueError, match=message):
        BlockParams.random(d_model, d_ff, np.random.default_rng(0))


# --- checks at the door: each argument once ------------------------------------------------------


def checked_names(fn) -> list[str]:
    """The `name` of every as_real_array call made while running fn() (the core's one array check)."""
    import sys

    from attention.checks import as_real_array

    names = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code is as_real_array.__code__:
            names.append(frame.f_locals["name"])

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return names


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_one_block_call_checks_each_argument_once(norm):
    rng = np.random.default_rng(0)
    params = BlockParams.random(16, 32, rng)
    x = rng.standard_normal((5, 16))
    names = checked_names(lambda: transformer_block(x, params, 4, norm=norm, activation="gelu"))
    assert sorted(names) == sorted(["x", *(f.name for f in dataclasses.fields(BlockParams))])  # 17, each once


def test_checks_off_skips_the_checks_and_nothing_else():
    from attention.checks import checks_off

    rng = np.random.default_rng(1)
    params = BlockParams.random(8, 16, rng)
    x = rng.standard_normal((3, 8))
    with checks_off():
        assert checked_names(lambda: transformer_block(x, params, 2)) == [
            "x",
            *(f.name for f in dataclasses.fields(BlockParams)),
        ]  # still called, but they return at once
        same, _ = transformer_block(x, params, 2)
        odd = dataclasses.replace(params, b_q=np.zeros(1))  # the wrong shape, but numpy can broadcast it
        transformer_block(x, odd, 2)  # no ValueError while the checks are off
    np.testing.assert_array_equal(same, transformer_block(x, params, 2)[0])
    with pytest.raises(ValueError, match=r"b_q has shape \(1,\); expected \(8,\)"):  # on again after the block
        transformer_block(x, odd, 2)
