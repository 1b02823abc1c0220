"""Why attention at all: a fixed mixing matrix against attention, on two inputs.

A layer that mixes positions with a fixed, learned matrix W (n × n, rows summing to 1) gives position i
the same share of position j whatever tokens sit there: the mixing is decided before the input is seen.
Attention computes its mixing matrix from the input, softmax(Q Kᵀ / √d_k), so it changes with the input.

The demonstration runs both on a sequence A and on B, the same tokens in another order:

    fixed:      out = W V          W is the same matrix for A and for B
    attention:  out = A(X) V       A(B) = P A(A) Pᵀ: each token still reads from the same tokens, wherever
                                   they now stand (P is the permutation that turns A into B)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention.dot_product import scaled_dot_product_attention
from attention.sequence import TokenSequence
from attention.stable_softmax import softmax

FIXED_LATEX = (
    r"\text{fixed: } \mathrm{out} = W V \qquad "
    r"\text{attention: } \mathrm{out} = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V"
)


@dataclass(frozen=True)
class FixedVersusAttention:
    """Both layers on A and on B = A reordered.

    Shapes: order (n,) with B's position i holding A's token order[i]; fixed (n, n), the same for A and
    B; weights_a, weights_b (n, n) attention weights; outputs (n, d_v) each.
    """

    a: TokenSequence
    b: TokenSequence
    order: np.ndarray
    fixed: np.ndarray
    weights_a: np.ndarray
    weights_b: np.ndarray
    fixed_out_a: np.ndarray
    fixed_out_b: np.ndarray
    out_a: np.ndarray
    out_b: np.ndarray

    @property
    def weights_b_in_a_order(self) -> np.ndarray:
        """B's attention weights with rows and columns put back in A's order: equal to weights_a."""
        back = np.argsort(self.order)  # A's position j sits at B's position back[j]
        return self.weights_b[np.ix_(back, back)]


def fixed_mixing(n: int, seed: int = 0) -> np.ndarray:
    """A fixed n × n mixing matrix with rows summing to 1, as a layer might have learned it (seeded)."""
    rng = np.random.default_rng(seed)
    return softmax(2.0 * rng.standard_normal((n, n)))  # (n, n)


def fixed_versus_attention(a: TokenSequence, order=None, seed: int = 0) -> FixedVersusAttention:
    """Run a fixed mixing matrix and attention on `a` and on `a` reordered by `order` (default: reversed)."""
    order = np.arange(a.n)[::-1] if order is None else np.asarray(order)
    if sorted(order.tolist()) != list(range(a.n)):
        raise ValueError(f"order {order.tolist()} is not a reordering of the positions 0..{a.n - 1}")
    b = TokenSequence(tuple(a.tokens[i] for i in order), a.q[order], a.k[order], a.v[order])
    w = fixed_mixing(a.n, seed)
    out_a, weights_a = scaled_dot_product_attention(a.q, a.k, a.v)
    out_b, weights_b = scaled_dot_product_attention(b.q, b.k, b.v)
    return FixedVersusAttention(a, b, order, w, weights_a, weights_b, w @ a.v, w @ b.v, out_a, out_b)
