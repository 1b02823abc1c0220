"""Size limits at the core's entry points: a request too big for a shared server is refused, with a message."""

import numpy as np
import pytest

from attention import (
    BlockParams,
    attention_steps,
    feed_forward,
    multi_head_attention,
    scaled_dot_product_attention,
    transformer_block,
)
from attention.limits import MAX_DIM, MAX_POSITIONS, MAX_SCORES


def big(shape) -> np.ndarray:
    """A read-only array of the given shape that takes no memory (the limit must fire before any work)."""
    return np.broadcast_to(np.float32(0.5), shape)


def test_the_benchmark_sizes_are_allowed():
    q = np.ones((8, 512, 64), np.float32)
    out, w = scaled_dot_product_attention(q, q, q, causal=True)
    assert w.shape == (8, 512, 512)


@pytest.mark.parametrize("fn", [scaled_dot_product_attention, attention_steps])
def test_too_many_scores_are_refused_before_any_work(fn):
    heads = MAX_SCORES // (2048 * 2048) + 1
    q = big((heads, 2048, 4))
    with pytest.raises(ValueError, match="server limit"):
        fn(q, q, q)


def test_too_long_or_too_wide_is_refused():
    with pytest.raises(ValueError, match=f"at most {MAX_POSITIONS} are allowed"):
        scaled_dot_product_attention(big((MAX_POSITIONS + 1, 2)), big((1, 2)), big((1, 2)))
    with pytest.raises(ValueError, match=f"at most {MAX_DIM} dimensions"):
        scaled_dot_product_attention(big((2, MAX_DIM + 1)), big((2, MAX_DIM + 1)), big((2, 1)))


def test_multi_head_block_and_feed_forward_are_bounded_too():
    d = MAX_DIM + 8
    w = big((d, d))
    with pytest.raises(ValueError, match="server limit"):
        multi_head_attention(big((2, d)), w, w, w, w, n_heads=8)
    with pytest.raises(ValueError, match="server limit"):
        feed_forward(big((MAX_SCORES // 64 + 1, 4)), big((4, 64)), big((64,)), big((64, 4)), big((4,)))
    params = BlockParams.random(8, 16, np.random.default_rng(0))
    with pytest.raises(ValueError, match="server limit"):
        transformer_block(big((MAX_POSITIONS + 1, 8)), params, 2)
