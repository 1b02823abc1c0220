"""A small decoder-only transformer (GPT-style): causal attention layers, a KV cache, generation.

    x_0 = E[ids] + P[positions]                       token embedding plus learned absolute position
    x_l = x_{l-1} + Attn_l(x_{l-1})                   causal self-attention, added to the residual stream
    x_l = x_l + MLP_l(x_l)                            only when config.mlp
    logits = LN_f(x_L) W_U                            LN_f only when config.final_norm

Each layer has n_heads query heads and n_kv_heads key/value heads; every group of n_heads / n_kv_heads
query heads shares one key/value head (query head i reads key/value head i // group). n_kv_heads =
n_heads is ordinary multi-head attention (MHA), n_kv_heads = 1 is multi-query attention (MQA), in
between is grouped-query attention (GQA). The heads' attention is `attention.dot_product.steps`, the
reference every page teaches; a mask lets query i (at absolute position p + i after p cached tokens)
see keys 0 .. p + i.

The KV cache: decoding one token at a time, the keys and values of the tokens already seen do not
change (they depend only on earlier tokens), so each layer keeps them, (n_kv_heads, n_total, d_head)
each, and a new token computes only its own query, key and value. `decoder_forward(ids, params,
cache)` returns the cache grown by the new tokens; the old cache object is left as it was.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, fields

import numpy as np

from .checks import as_real_array, check_positive_int, check_result, check_shape
from .dot_product import steps as attention_steps_of
from .ffn import ffn_trace
from .limits import MAX_DIM, MAX_POSITIONS, check_scores
from .norms import standardise
from .stable_softmax import softmax_inplace

MAX_VOCAB = 4096
MAX_LAYERS = 48
MAX_TEMPERATURE = 100.0
NORM_EPS = 1e-5

DECODER_LATEX = (
    r"x_0 = E_{t_i} + P_i,\quad x_\ell = x_{\ell-1} + \mathrm{Attn}_\ell(x_{\ell-1}),"
    r"\quad \mathrm{logits} = x_L\, W_U"
)
CAUSAL_CACHE_LATEX = (
    r"\mathrm{attn}(q_t) = \mathrm{softmax}\!\Big(\frac{q_t\,[k_0, \dots, k_t]^\top}{\sqrt{d_{head}}}\Big)"
    r"\,[v_0, \dots, v_t]"
)
GQA_LATEX = (
    r"\mathrm{head}_i = \mathrm{Attention}\big(Q_i,\; K_{\lfloor i / g \rfloor},\; V_{\lfloor i / g \rfloor}\big),"
    r"\quad g = n_{heads} / n_{kv}"
)
CACHE_BYTES_LATEX = (
    r"\text{bytes} = \underbrace{2}_{K,\,V} \times n_{layers} \times n_{kv} \times n_{total} \times d_{head}"
    r" \times \text{bytes per number}"
)
SAMPLING_LATEX = (
    r"p_j = \frac{e^{z_j / T}}{\sum_{i \in \text{top-}k} e^{z_i / T}}\ \ (j \in \text{top-}k),"
    r"\quad T \to 0:\ \arg\max_j z_j"
)


@dataclass(frozen=True)
class DecoderConfig:
    """The shape of a decoder. Frozen and hashable (a cache key).

    vocab_size tokens, n_layers layers of n_heads query heads of d_head = d_model / n_heads and
    n_kv_heads key/value heads (n_kv_heads divides n_heads), learned positions 0 .. max_positions - 1,
    an MLP of width d_ff (default 4 d_model) after each attention when `mlp`, and a final layer norm
    before the unembedding when `final_norm`.
    """

    vocab_size: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_model: int
    max_positions: int
    mlp: bool = False
    d_ff: int | None = None
    final_norm: bool = False

    def __post_init__(self) -> None:
        bounds = {
            "vocab_size": MAX_VOCAB,
            "n_layers": MAX_LAYERS,
            "n_heads": MAX_DIM,
            "n_kv_heads": MAX_DIM,
            "d_model": MAX_DIM,
            "max_positions": MAX_POSITIONS,
        }
        for name, hi in bounds.items():
            value = check_positive_int(getattr(self, name), name)
            if value > hi:
                raise ValueError(f"{name}={value} is too large: at most {hi}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}")
        if self.n_heads % self.n_kv_heads:
            raise ValueError(
                f"n_kv_heads={self.n_kv_heads} does not divide n_heads={self.n_heads}: each key/value head "
                "serves a whole group of query heads"
            )
        for name in ("mlp", "final_norm"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if self.d_ff is not None and check_positive_int(self.d_ff, "d_ff") > MAX_DIM:
            raise ValueError(f"d_ff={self.d_ff} is too large: at most {MAX_DIM}")

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    @property
    def group(self) -> int:
        """How many query heads share one key/value head."""
        return self.n_heads // self.n_kv_heads

    @property
    def ff_width(self) -> int:
        return self.d_ff if self.d_ff is not None else 4 * self.d_model

    @property
    def attention_kind(self) -> str:
        """'MHA', 'MQA' or 'GQA'."""
        if self.n_kv_heads == self.n_heads:
            return "MHA"
        return "MQA" if self.n_kv_heads == 1 else "GQA"


@dataclass(frozen=True)
class LayerParams:
    """One layer's weights (no biases in attention, as in many recent decoders).

    Shapes: w_q (d_model, n_heads d_head), w_k and w_v (d_model, n_kv_heads d_head),
    w_o (n_heads d_head, d_model); with an MLP, w_1 (d_model, d_ff), b_1 (d_ff,), w_2 (d_ff, d_model),
    b_2 (d_model,), else None. Head i owns columns i d_head .. (i + 1) d_head - 1.
    """

    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    w_o: np.ndarray
    w_1: np.ndarray | None = None
    b_1: np.ndarray | None = None
    w_2: np.ndarray | None = None
    b_2: np.ndarray | None = None


def layer_shapes(config: DecoderConfig) -> dict[str, tuple[int, ...]]:
    """The shape of each array of one layer, by name (the MLP's only when config.mlp)."""
    d, h, kv, dh = config.d_model, config.n_heads, config.n_kv_heads, config.d_head
    shapes = {"w_q": (d, h * dh), "w_k": (d, kv * dh), "w_v": (d, kv * dh), "w_o": (h * dh, d)}
    if config.mlp:
        ff = config.ff_width
        shapes |= {"w_1": (d, ff), "b_1": (ff,), "w_2": (ff, d), "b_2": (d,)}
    return shapes


def param_shapes(config: DecoderConfig) -> dict[str, tuple[int, ...]]:
    """Every parameter array's shape, by its flat name ("layers.0.w_q" ...), in a fixed order."""
    shapes = {
        "token_embedding": (config.vocab_size, config.d_model),
        "position_embedding": (config.max_positions, config.d_model),
    }
    for i in range(config.n_layers):
        shapes |= {f"layers.{i}.{name}": shape for name, shape in layer_shapes(config).items()}
    if config.final_norm:
        shapes |= {"norm_gamma": (config.d_model,), "norm_beta": (config.d_model,)}
    return shapes | {"unembedding": (config.d_model, config.vocab_size)}


@dataclass(frozen=True)
class DecoderParams:
    """Every learned array of a decoder, checked once when made (shapes, one float dtype, finite).

    Shapes: token_embedding (vocab_size, d_model), position_embedding (max_positions, d_model),
    layers: n_layers LayerParams, norm_gamma / norm_beta (d_model,) or None, unembedding (d_model, vocab_size).
    """

    config: DecoderConfig
    token_embedding: np.ndarray
    position_embedding: np.ndarray
    layers: tuple[LayerParams, ...]
    unembedding: np.ndarray
    norm_gamma: np.ndarray | None = None
    norm_beta: np.ndarray | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.config, DecoderConfig):
            raise ValueError(f"config must be a DecoderConfig, got {type(self.config).__name__}")
        if len(self.layers) != self.config.n_layers:
            raise ValueError(f"layers has {len(self.layers)} entries; config.n_layers = {self.config.n_layers}")
        dtypes = set()
        arrays = self.arrays()
        if set(arrays) != set(param_shapes(self.config)):
            missing = sorted(set(param_shapes(self.config)) - set(arrays))
            extra = sorted(set(arrays) - set(param_shapes(self.config)))
            raise ValueError(f"parameters do not fit the config: missing {missing}, unexpected {extra}")
        for name, shape in param_shapes(self.config).items():
            a = as_real_array(arrays[name], name)
            check_shape(a, name, shape)
            dtypes.add(a.dtype)
        if len(dtypes) > 1:
            raise ValueError(f"every parameter must have the same dtype; got {sorted(str(d) for d in dtypes)}")

    @property
    def dtype(self) -> np.dtype:
        return np.asarray(self.token_embedding).dtype

    def arrays(self) -> dict[str, np.ndarray]:
        """Every parameter by its flat name, in the order of `param_shapes` (the arrays themselves, not copies)."""
        out = {"token_embedding": self.token_embedding, "position_embedding": self.position_embedding}
        for i, layer in enumerate(self.layers):
            out |= {
                f"layers.{i}.{f.name}": getattr(layer, f.name)
                for f in fields(layer)
                if getattr(layer, f.name) is not None
            }
        if self.norm_gamma is not None or self.norm_beta is not None:
            out |= {"norm_gamma": self.norm_gamma, "norm_beta": self.norm_beta}
        return out | {"unembedding": self.unembedding}

    @classmethod
    def from_arrays(cls, config: DecoderConfig, arrays: dict[str, np.ndarray]) -> "DecoderParams":
        """Parameters from flat names (as `arrays()` gives them); `ValueError` if any is missing or misshaped."""
        missing = sorted(set(param_shapes(config)) - set(arrays))
        if missing:
            raise ValueError(f"missing parameters: {missing}")
        layers = tuple(
            LayerParams(**{name: np.asarray(arrays[f"layers.{i}.{name}"]) for name in layer_shapes(config)})
            for i in range(config.n_layers)
        )
        norm = {k: np.asarray(arrays[k]) for k in ("norm_gamma", "norm_beta")} if config.final_norm else {}
        return cls(
            config,
            np.asarray(arrays["token_embedding"]),
            np.asarray(arrays["position_embedding"]),
            layers,
            np.asarray(arrays["unembedding"]),
            **norm,
        )

    @classmethod
    def random(
        cls,
        config: DecoderConfig,
        seed: int = 0,
        dtype=np.float64,
        *,
        token_std: float = 0.3,
        position_std: float = 0.1,
    ) -> "DecoderParams":
        """Starting weights from `seed`: matrices N(0, 1/fan_in) (activations keep their size), token embeddings
        N(0, token_std²), position embeddings N(0, position_std²), biases 0, a final norm starting as the identity.

        Small embeddings train well (the induction lesson measured it): positions that start nearly alike can
        be shaped into "the one before me" by training, where large random ones resist it.
        """
        if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed must be a whole number >= 0, got {seed!r}")
        rng = np.random.default_rng(seed)
        arrays = {}
        for name, shape in param_shapes(config).items():
            if name.endswith(("b_1", "b_2", "norm_beta")):
                arrays[name] = np.zeros(shape)
            elif name == "norm_gamma":
                arrays[name] = np.ones(shape)
            elif name == "token_embedding":
                arrays[name] = token_std * rng.standard_normal(shape)
            elif name == "position_embedding":
                arrays[name] = position_std * rng.standard_normal(shape)
            else:
                arrays[name] = rng.standard_normal(shape) / math.sqrt(shape[0])
        return cls.from_arrays(config, {k: v.astype(dtype) for k, v in arrays.items()})

    def astype(self, dtype) -> "DecoderParams":
        """The same parameters in another float dtype (float64 for checks, float32 for speed)."""
        return DecoderParams.from_arrays(self.config, {k: v.astype(dtype) for k, v in self.arrays().items()})

    @property
    def n_parameters(self) -> int:
        return sum(int(np.size(a)) for a in self.arrays().values())


@dataclass(frozen=True)
class KVCache:
    """The keys and values of every token seen so far, per layer.

    Shapes: keys[l], values[l] (n_kv_heads, n_total, d_head) for layer l. Immutable: decoding returns a
    new, longer cache.
    """

    keys: tuple[np.ndarray, ...]
    values: tuple[np.ndarray, ...]

    @classmethod
    def empty(cls, config: DecoderConfig, dtype=np.float64) -> "KVCache":
        """A cache holding no token yet."""
        shape = (config.n_kv_heads, 0, config.d_head)
        return cls(
            tuple(np.zeros(shape, dtype) for _ in range(config.n_layers)),
            tuple(np.zeros(shape, dtype) for _ in range(config.n_layers)),
        )

    @property
    def n_total(self) -> int:
        """How many tokens the cache holds."""
        return int(self.keys[0].shape[-2]) if self.keys else 0

    @property
    def nbytes(self) -> int:
        """The cache's size in bytes: every key and value array of every layer."""
        return sum(a.nbytes for a in (*self.keys, *self.values))

    @property
    def shapes(self) -> tuple[tuple[int, ...], ...]:
        """The shape of each layer's keys (its values have the same)."""
        return tuple(tuple(k.shape) for k in self.keys)

    def check(self, config: DecoderConfig, dtype: np.dtype) -> "KVCache":
        """Return self, or raise `ValueError` if the cache does not fit a decoder of `config` in `dtype`."""
        if len(self.keys) != config.n_layers or len(self.values) != config.n_layers:
            raise ValueError(f"the cache has {len(self.keys)} layers; the decoder has {config.n_layers}")
        n = self.n_total
        for i, (k, v) in enumerate(zip(self.keys, self.values)):
            for name, a in ((f"cache.keys[{i}]", k), (f"cache.values[{i}]", v)):
                check_shape(np.asarray(a), name, (config.n_kv_heads, n, config.d_head))
                if np.asarray(a).dtype != dtype:
                    raise ValueError(f"{name} has dtype {np.asarray(a).dtype}; the parameters are {dtype}")
        return self


def kv_cache_nbytes(config: DecoderConfig, n_total: int, itemsize: int = 8) -> int:
    """2 (K and V) x layers x kv heads x tokens x d_head x bytes per number: the size of a cache of n_total tokens."""
    return 2 * config.n_layers * config.n_kv_heads * int(n_total) * config.d_head * int(itemsize)


@dataclass(frozen=True)
class DecoderOutput:
    """What `decoder_forward` returns.

    Shapes: logits (n, vocab_size), one row per new token (row i predicts the token after it);
    attentions (n_layers, n_heads, n, n_total), the weights of each new token over every token so far;
    cache: the KV cache holding all n_total tokens.
    """

    logits: np.ndarray
    attentions: np.ndarray
    cache: KVCache


@dataclass(frozen=True)
class LayerTrace:
    """One layer's forward pass, kept for the backward pass.

    Shapes: x (..., n, d_model) the layer's input; q (..., n_kv, g, n, d_head); k, v (..., n_kv, 1, m, d_head)
    (m = cached + n tokens); weights (..., n_kv, g, n, m); concat (..., n, n_heads d_head);
    y (..., n, d_model) after the attention's residual add; pre, hidden (..., n, d_ff) or None;
    out (..., n, d_model) the layer's output.
    """

    x: np.ndarray
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    weights: np.ndarray
    concat: np.ndarray
    y: np.ndarray
    pre: np.ndarray | None
    hidden: np.ndarray | None
    out: np.ndarray


@dataclass(frozen=True)
class ForwardTrace:
    """The whole forward pass. Shapes: ids (..., n); layers as LayerTrace; final (..., n, d_model), what the
    unembedding reads (after the final norm, if any); x_hat (..., n, d_model) and rstd (..., n, 1) of the final
    norm (None without it); logits (..., n, vocab_size)."""

    ids: np.ndarray
    layers: tuple[LayerTrace, ...]
    final: np.ndarray
    x_hat: np.ndarray | None
    rstd: np.ndarray | None
    logits: np.ndarray


def causal_offset_mask(n: int, m: int) -> np.ndarray:
    """Bool (n, m), True = may attend: the i-th of n new tokens sits at position m - n + i and sees keys
    0 .. m - n + i. With nothing cached (m = n) this is the ordinary causal mask."""
    return np.tri(n, m, m - n, dtype=bool)  # (n, m)


def layer_forward(x: np.ndarray, layer: LayerParams, config: DecoderConfig, past_k=None, past_v=None) -> LayerTrace:
    """One layer on arrays already checked: causal (grouped-query) attention plus residual, then the MLP.

    Shapes: x (..., n, d_model); past_k, past_v (..., n_kv, p, d_head) or None -> LayerTrace with m = p + n.
    """
    *batch, n, _ = x.shape
    kv, g, dh = config.n_kv_heads, config.group, config.d_head
    q = (x @ layer.w_q).reshape(*batch, n, kv, g, dh)  # (..., n, n_kv, g, d_head): query head i = kv_j g + r
    q = np.moveaxis(q, -4, -2)  # (..., n_kv, g, n, d_head)
    k = (x @ layer.w_k).reshape(*batch, n, kv, dh).swapaxes(-2, -3)  # (..., n_kv, n, d_head)
    v = (x @ layer.w_v).reshape(*batch, n, kv, dh).swapaxes(-2, -3)  # (..., n_kv, n, d_head)
    if past_k is not None:
        k = np.concatenate([past_k, k], axis=-2)  # (..., n_kv, m, d_head)
        v = np.concatenate([past_v, v], axis=-2)  # (..., n_kv, m, d_head)
    k, v = k[..., None, :, :], v[..., None, :, :]  # (..., n_kv, 1, m, d_head): shared by the group's g heads
    s = attention_steps_of(q, k, v, causal_offset_mask(n, k.shape[-2]), True)
    concat = np.moveaxis(s.output, -2, -4).reshape(*batch, n, config.n_heads * dh)  # (..., n, n_heads d_head)
    y = x + concat @ layer.w_o  # (..., n, d_model)
    pre = hidden = None
    out = y
    if config.mlp:
        pre, hidden, mlp = ffn_trace(y, layer.w_1, layer.b_1, layer.w_2, layer.b_2, "gelu")  # (..., n, d_ff) x2
        out = y + mlp  # (..., n, d_model)
    return LayerTrace(x, q, k, v, s.weights, concat, y, pre, hidden, check_result(out, "a layer's output"))


def final_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """attention.norms' layer norm over the last axis, returning (out, x_hat, rstd) for the backward pass.

    Shapes: x (..., d) -> out, x_hat (..., d), rstd (..., 1).
    """
    x_hat, rstd = standardise(x, NORM_EPS)  # (..., d), (..., 1)
    return x_hat * gamma + beta, x_hat, rstd


def forward_trace(ids: np.ndarray, params: DecoderParams, cache: KVCache | None = None) -> ForwardTrace:
    """The forward pass on ids already checked, keeping every intermediate.

    Shapes: ids (..., n) ints (a leading batch axis is allowed without a cache); cache holds p tokens ->
    ForwardTrace; new tokens sit at positions p .. p + n - 1.
    """
    config = params.config
    p = 0 if cache is None else cache.n_total
    n = ids.shape[-1]
    x = params.token_embedding[ids] + params.position_embedding[p : p + n]  # (..., n, d_model)
    traces = []
    for i, layer in enumerate(params.layers):
        past = (None, None) if cache is None else (cache.keys[i], cache.values[i])
        traces.append(layer_forward(x, layer, config, *past))
        x = traces[-1].out  # (..., n, d_model)
    x_hat = rstd = None
    final = x
    if config.final_norm:
        final, x_hat, rstd = final_norm(x, params.norm_gamma, params.norm_beta)  # (..., n, d_model)
    logits = check_result(final @ params.unembedding, "the logits")  # (..., n, vocab_size)
    return ForwardTrace(ids, tuple(traces), final, x_hat, rstd, logits)


def check_ids(ids, config: DecoderConfig, name: str = "ids", *, start: int = 0) -> np.ndarray:
    """`ids` as a non-empty 1-D int array of tokens in 0 .. vocab_size - 1 that fits after `start` tokens
    within max_positions, or `ValueError` naming what is wrong."""
    try:
        a = np.asarray(ids)
    except ValueError:
        raise ValueError(f"{name} is not a flat list of token numbers") from None
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{name} has shape {a.shape}; expected (n,) with n >= 1")
    if a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"{name} must be whole token numbers (an integer array), got dtype {a.dtype}")
    if a.min() < 0 or a.max() >= config.vocab_size:
        bad = a[(a < 0) | (a >= config.vocab_size)][0]
        raise ValueError(f"{name} holds token {bad}; tokens go from 0 to vocab_size - 1 = {config.vocab_size - 1}")
    if start + a.size > config.max_positions:
        raise ValueError(
            f"{start} cached + {a.size} new tokens = {start + a.size} positions; this decoder has "
            f"max_positions = {config.max_positions}"
        )
    return a.astype(np.intp)


def decoder_forward(ids, params: DecoderParams, cache: KVCache | None = None) -> DecoderOutput:
    """Run the decoder on the new tokens `ids`, after the tokens already in `cache` (none if None).

    Shapes: ids (n,) token numbers -> DecoderOutput with logits (n, vocab_size), attentions
    (n_layers, n_heads, n, n_total) and the cache grown to n_total = cached + n tokens.
    Feeding a sequence whole, or in pieces passing the cache along, gives the same logits.
    """
    if not isinstance(params, DecoderParams):
        raise ValueError(f"params must be DecoderParams, got {type(params).__name__}")
    config = params.config
    if cache is not None:
        if not isinstance(cache, KVCache):
            raise ValueError(f"cache must be a KVCache or None, got {type(cache).__name__}")
        cache.check(config, params.dtype)
    start = 0 if cache is None else cache.n_total
    ids = check_ids(ids, config, start=start)
    check_scores((config.n_heads, ids.size, start + ids.size))
    trace = forward_trace(ids, params, cache)
    n, m = ids.size, start + ids.size
    attentions = np.stack([t.weights.reshape(config.n_heads, n, m) for t in trace.layers])  # (layers, heads, n, m)
    new_cache = KVCache(tuple(t.k[:, 0] for t in trace.layers), tuple(t.v[:, 0] for t in trace.layers))
    return DecoderOutput(trace.logits, attentions, new_cache)


# ---------------------------------------------------------------- generation


def next_token_probabilities(logits, temperature: float = 0.0, top_k: int | None = None) -> np.ndarray:
    """The distribution the next token is drawn from: softmax(z / T) over the top_k largest logits.

    Shapes: logits (vocab_size,) -> (vocab_size,), summing to 1. T = 0 is greedy: all the probability
    on the largest logit (the first one if several tie). top_k=None keeps every token.
    """
    z = as_real_array(logits, "logits").astype(np.float64)
    if z.ndim != 1 or z.size == 0:
        raise ValueError(f"logits has shape {z.shape}; expected (vocab_size,)")
    temperature, top_k = check_sampling(temperature, top_k, z.size)
    if temperature == 0.0:
        return np.eye(z.size)[int(np.argmax(z))]  # (vocab_size,): greedy
    keep = np.ones(z.size, bool)
    if top_k is not None:
        keep[:] = False
        keep[np.argsort(-z, kind="stable")[:top_k]] = True  # exactly k tokens, the earliest on a tie
    return softmax_inplace(np.where(keep, z / temperature, -np.inf))  # (vocab_size,): exp(-inf) = 0


def check_sampling(temperature, top_k, vocab_size: int) -> tuple[float, int | None]:
    """Return (temperature, top_k) checked: 0 <= temperature <= MAX_TEMPERATURE, top_k None or 1 .. vocab_size."""
    is_number = isinstance(temperature, (int, float, np.floating, np.integer)) and not isinstance(temperature, bool)
    if not (is_number and math.isfinite(temperature) and 0 <= temperature <= MAX_TEMPERATURE):
        raise ValueError(f"temperature must be a number from 0 to {MAX_TEMPERATURE:g}, got {temperature!r}")
    if top_k is not None:
        top_k = check_positive_int(top_k, "top_k")
        if top_k > vocab_size:
            raise ValueError(f"top_k={top_k} is more than the {vocab_size} tokens there are")
    return float(temperature), top_k


@dataclass(frozen=True)
class GenerationStep:
    """One new token. Shapes: logits, probabilities (vocab_size,); attentions (n_layers, n_heads, n_total),
    the row of weights of the query that produced these logits over every token so far (the new one not yet
    included); cache_shape (n_kv_heads, n_total, d_head) of each layer's keys after the step, cache_nbytes
    the whole cache's bytes (0 without a cache); seconds the time the step took."""

    token: int
    logits: np.ndarray
    probabilities: np.ndarray
    attentions: np.ndarray
    cache_shape: tuple[int, ...] | None
    cache_nbytes: int
    seconds: float


def generation_steps(
    params: DecoderParams,
    prompt_ids,
    n_new: int,
    *,
    temperature: float = 0.0,
    top_k: int | None = None,
    seed: int = 0,
    use_cache: bool = True,
) -> tuple[GenerationStep, ...]:
    """Generate n_new tokens after the prompt, one at a time, keeping what each step saw.

    With `use_cache`, the prompt runs once and then each step feeds only the newest token with the cache;
    without, each step reruns the whole sequence so far. Sampling from np.random.default_rng(seed).
    """
    if not isinstance(params, DecoderParams):
        raise ValueError(f"params must be DecoderParams, got {type(params).__name__}")
    config = params.config
    ids = list(check_ids(prompt_ids, config, "prompt_ids"))
    n_new = check_positive_int(n_new, "n_new")
    check_ids(np.zeros(len(ids) + n_new - 1, int), config, "the prompt and the new tokens")
    temperature, top_k = check_sampling(temperature, top_k, config.vocab_size)
    rng = np.random.default_rng(seed)
    out, cache, feed = [], None, ids
    for _ in range(n_new):
        t0 = time.perf_counter()
        result = decoder_forward(feed, params, cache) if use_cache else decoder_forward(ids, params)
        logits = result.logits[-1]  # (vocab_size,): the prediction after the newest token
        probs = next_token_probabilities(logits, temperature, top_k)
        token = int(np.argmax(probs)) if temperature == 0.0 else int(rng.choice(config.vocab_size, p=probs))
        seconds = time.perf_counter() - t0
        cache = result.cache if use_cache else None
        shape = result.cache.shapes[0] if use_cache else None
        out.append(
            GenerationStep(token, logits, probs, result.attentions[:, :, -1], shape, cache_bytes(cache), seconds)
        )
        ids, feed = ids + [token], [token]
    return tuple(out)


def cache_bytes(cache: KVCache | None) -> int:
    return 0 if cache is None else cache.nbytes


def generate(
    params: DecoderParams,
    prompt_ids,
    n_new: int,
    *,
    temperature: float = 0.0,
    top_k: int | None = None,
    seed: int = 0,
    use_cache: bool = True,
) -> np.ndarray:
    """The prompt followed by n_new generated tokens: greedy (temperature 0), or sampled from
    softmax(logits / temperature) over the top_k largest logits, seeded by `seed`.

    Shapes: prompt_ids (p,) -> (p + n_new,) ints. With or without the cache, the same tokens.
    """
    steps = generation_steps(
        params, prompt_ids, n_new, temperature=temperature, top_k=top_k, seed=seed, use_cache=use_cache
    )
    new = np.array([s.token for s in steps], dtype=np.intp)
    return np.concatenate([np.asarray(prompt_ids).astype(np.intp), new])


# ---------------------------------------------------------------- the work per new token


@dataclass(frozen=True)
class MultiplyAdds:
    """Multiply-adds to produce the logits of the newest token in a sequence of n_total, by part of the model.

    projections: x W_q, x W_k, x W_v; scores: q kᵀ; mixing: weights V; output: concat W_o; mlp: both MLP
    matrices; unembedding: x W_U. Every layer's counts are summed.
    """

    projections: int
    scores: int
    mixing: int
    output: int
    mlp: int
    unembedding: int

    @property
    def total(self) -> int:
        return self.projections + self.scores + self.mixing + self.output + self.mlp + self.unembedding


def decode_step_madds(config: DecoderConfig, n_total: int, *, use_cache: bool) -> MultiplyAdds:
    """Count the multiply-adds of one decoding step, the way `decoder_forward` does it.

    With the cache, only the newest token's row: its projections, one row of n_total scores per head.
    Without, the whole sequence of n_total tokens again: every projection, the full (n_total, n_total)
    score matrix per head (the masked half is computed, then set to -inf), and every position's logits.
    """
    t = check_positive_int(n_total, "n_total")
    rows = 1 if use_cache else t
    d, h, kv, dh, layers = config.d_model, config.n_heads, config.n_kv_heads, config.d_head, config.n_layers
    mlp = 2 * rows * d * config.ff_width if config.mlp else 0
    return MultiplyAdds(
        projections=layers * rows * d * (h + 2 * kv) * dh,
        scores=layers * h * rows * t * dh,
        mixing=layers * h * rows * t * dh,
        output=layers * rows * h * dh * d,
        mlp=layers * mlp,
        unembedding=rows * d * config.vocab_size,
    )
