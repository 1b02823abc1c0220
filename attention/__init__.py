"""Attention from scratch: the numpy core behind every number the app shows.

No streamlit, no plotly, no deep-learning framework: only numpy (and scipy's erf for GELU).
"""

from .block import NORMS, BlockParams, BlockTrace, TraceStep, transformer_block
from .dot_product import (
    AttentionSteps,
    PaddedAttention,
    attention_steps,
    padded_attention,
    scaled_dot_product_attention,
)
from .ffn import ACTIVATIONS, feed_forward, feed_forward_steps, gelu, relu
from .heads import MultiHeadSteps, divisors, merge_heads, multi_head_attention, multi_head_steps, split_heads
from .masks import causal_mask, padding_mask, sliding_window_mask
from .norms import layer_norm
from .positions import alibi_bias, alibi_slopes, rope, sinusoidal_encoding
from .stable_softmax import softmax

__all__ = [
    "ACTIVATIONS",
    "NORMS",
    "AttentionSteps",
    "BlockParams",
    "BlockTrace",
    "MultiHeadSteps",
    "PaddedAttention",
    "TraceStep",
    "alibi_bias",
    "alibi_slopes",
    "attention_steps",
    "causal_mask",
    "divisors",
    "feed_forward",
    "feed_forward_steps",
    "gelu",
    "layer_norm",
    "merge_heads",
    "multi_head_attention",
    "multi_head_steps",
    "padded_attention",
    "padding_mask",
    "relu",
    "rope",
    "scaled_dot_product_attention",
    "sinusoidal_encoding",
    "sliding_window_mask",
    "softmax",
    "split_heads",
    "transformer_block",
]
