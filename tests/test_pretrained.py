"""The pretrained encoder (all-MiniLM-L6-v2) checked against facts that do not come from our code:
the published checksum of the weights, bert-base-uncased's token ids, the similarity matrix that
sentence-transformers publishes for this model, and a layer recomputed here with plain loops."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.metadata
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from safetensors import safe_open

import attention.pretrained as pretrained
from attention import transformer_block
from attention.blocked_attention import blocked_kernel
from attention.pretrained import EXAMPLE_SENTENCES, MiniLMRun, cosine_similarity, load_minilm

# The sha256 Hugging Face lists for sentence-transformers/all-MiniLM-L6-v2's model.safetensors.
PUBLISHED_WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


@pytest.fixture(scope="module")
def model():
    return load_minilm()


@pytest.fixture(scope="module")
def hello(model) -> MiniLMRun:
    return model.run("Hello world!")


def raw_tensor(model, name: str) -> np.ndarray:
    """A tensor straight from the file, in PyTorch's layout, as float64 (bypassing our loader)."""
    return _raw_tensor(str(model.source / "model.safetensors"), name)


@functools.lru_cache(maxsize=None)
def _raw_tensor(path: str, name: str) -> np.ndarray:
    with safe_open(path, framework="np") as f:
        return f.get_tensor(name).astype(np.float64)


# --- loading ---------------------------------------------------------------------------------


def test_weights_file_is_the_published_checkpoint(model):
    digest = hashlib.sha256((model.source / "model.safetensors").read_bytes()).hexdigest()
    assert digest == PUBLISHED_WEIGHTS_SHA256


def test_load_is_cached(model):
    assert load_minilm() is model
    assert load_minilm() is load_minilm()


def test_model_files_are_found_in_the_package(model):
    assert pretrained.model_dir() == model.source
    assert (model.source / "tokenizer.json").is_file()


def test_missing_package_says_how_to_install(monkeypatch):
    def no_distribution(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(pretrained.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(pretrained.importlib.metadata, "files", no_distribution)
    with pytest.raises(FileNotFoundError, match="requirements-model.txt"):
        pretrained.model_dir()


def test_config_matches_the_architecture(model):
    cfg = model.config
    assert (cfg.n_layers, cfg.n_heads, cfg.d_model, cfg.d_ff, cfg.d_head) == (6, 12, 384, 1536, 32)
    assert cfg.eps == 1e-12 and cfg.max_tokens == 256
    assert len(model.layers) == 6


def test_weights_are_transposed_to_in_out_and_float32(model):
    p = model.layers[0]
    assert p.w_q.shape == (384, 384) and p.w_1.shape == (384, 1536) and p.w_2.shape == (1536, 384)
    np.testing.assert_array_equal(p.w_1, raw_tensor(model, "encoder.layer.0.intermediate.dense.weight").T)
    for layer in model.layers:
        for f in dataclasses.fields(layer):
            a = getattr(layer, f.name)
            assert a.dtype == np.float32 and a.flags.c_contiguous, f.name
    assert model.word_embeddings.shape == (30522, 384) and model.word_embeddings.dtype == np.float32


def test_model_cannot_be_mutated(model):
    with pytest.raises(dataclasses.FrozenInstanceError):
        model.layers = ()
    with pytest.raises(ValueError):  # read-only array
        model.layers[0].w_q[0, 0] = 1.0
    with pytest.raises(ValueError):
        model.word_embeddings[0, 0] = 1.0


# --- tokenizer: bert-base-uncased's vocabulary -------------------------------------------------


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("hello world", [101, 7592, 2088, 102]),
        ("Hello world!", [101, 7592, 2088, 999, 102]),
        ("The dog.", [101, 1996, 3899, 1012, 102]),
        ("I love a man, and it is.", [101, 1045, 2293, 1037, 2158, 1010, 1998, 2009, 2003, 1012, 102]),
    ],
)
def test_token_ids_are_bert_uncased(model, text, ids):
    assert model.tokenize(text)[1] == ids


def test_tokens_have_cls_and_sep_and_no_padding(model, hello):
    assert hello.tokens == ["[CLS]", "hello", "world", "!", "[SEP]"]
    assert hello.ids == [101, 7592, 2088, 999, 102]
    long_text = " ".join(["word"] * 200)  # longer than the file's built-in truncation at 128
    tokens, _ = model.tokenize(long_text)
    assert len(tokens) == 202 and "[PAD]" not in tokens


def test_uncased_tokenizer_lowercases_strips_accents_and_splits_words(model):
    assert model.tokenize("Café")[0] == ["[CLS]", "cafe", "[SEP]"]
    assert model.tokenize("unaffable")[0] == ["[CLS]", "una", "##ffa", "##ble", "[SEP]"]


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   ", "\n\t ", "\x00\x01"])
def test_empty_text_is_refused(model, text):
    with pytest.raises(ValueError, match="empty|no tokens"):
        model.run(text)


@pytest.mark.parametrize("text", [None, 42, b"hello", ["hello"]])
def test_non_string_is_refused(model, text):
    with pytest.raises(ValueError, match="must be a string"):
        model.run(text)


def test_too_long_text_is_refused_with_count_and_limit(model):
    model.run(" ".join(["hello"] * 254))  # exactly 256 tokens with [CLS] and [SEP]: fine
    with pytest.raises(ValueError, match=r"257 tokens.*at most 256"):
        model.run(" ".join(["hello"] * 255))


@pytest.mark.parametrize("ids", [[], [[101, 102]], [101, 30522], [-1], [1.5], list(range(513))])
def test_embed_refuses_bad_ids(model, ids):
    with pytest.raises(ValueError, match="ids"):
        model.embed(ids)


# --- forward pass: shapes, dtypes, invariants ------------------------------------------------


def test_shapes_and_float32(hello):
    n = len(hello.tokens)
    assert hello.n_tokens == n == len(hello.ids)
    assert hello.hidden_states.shape == (7, n, 384)
    assert hello.attentions.shape == (6, 12, n, n)
    assert hello.embedding.shape == (384,)
    for a in (hello.hidden_states, hello.attentions, hello.embedding):
        assert a.dtype == np.float32
        assert np.isfinite(a).all()


def test_traces_are_kept_on_request(model, hello):
    assert hello.traces == ()
    run = model.run("Hello world!", keep_traces=True)
    assert len(run.traces) == 6
    for layer, trace in enumerate(run.traces):
        assert all(step.value.dtype == np.float32 for step in trace.steps), trace.names
        np.testing.assert_array_equal(trace["input"], run.hidden_states[layer])
        np.testing.assert_array_equal(trace["norm_2"], run.hidden_states[layer + 1])
        np.testing.assert_array_equal(trace.weights, run.attentions[layer])
    assert trace["ffn_hidden"].shape == (5, 1536)


def test_attention_rows_sum_to_one(hello):
    assert (hello.attentions >= 0).all()
    np.testing.assert_allclose(hello.attentions.sum(axis=-1), 1.0, atol=1e-5)


def test_embedding_is_unit_mean_of_last_layer(hello):
    assert np.linalg.norm(hello.embedding) == pytest.approx(1.0, abs=1e-5)
    mean = hello.hidden_states[-1].astype(np.float64).mean(axis=0)
    np.testing.assert_allclose(hello.embedding, mean / np.linalg.norm(mean), atol=1e-6)


def test_deterministic(model, hello):
    again = model.run("Hello world!")
    for name in ("hidden_states", "attentions", "embedding"):
        np.testing.assert_array_equal(getattr(again, name), getattr(hello, name))


def test_result_is_frozen_and_read_only(hello):
    with pytest.raises(dataclasses.FrozenInstanceError):
        hello.embedding = None
    with pytest.raises(ValueError):
        hello.attentions[0, 0, 0, 0] = 0.5


def test_forward_pass_is_built_from_the_core(model, monkeypatch):
    # The model runs the core's own block (the one transformer_block checks its arguments for and then
    # calls) with the blocked attention kernel, held equal to the reference in test_blocked_attention.py.
    calls = []
    real_block, real_norm = pretrained.block, pretrained.layer_norm_of

    def spy_block(x, params, n_heads, **kwargs):
        kernel = kwargs["kernel"]  # the blocked kernel, told where to write this layer's weights
        calls.append(("block", n_heads, {k: v for k, v in kwargs.items() if k != "kernel"}, kernel.func))
        return real_block(x, params, n_heads, **kwargs)

    def spy_norm(*args):
        calls.append(("layer_norm",))
        return real_norm(*args)

    monkeypatch.setattr(pretrained, "block", spy_block)
    monkeypatch.setattr(pretrained, "layer_norm_of", spy_norm)
    model.run("Hello world!")
    assert calls[0] == ("layer_norm",)
    settings = {"causal": False, "activation": "gelu", "norm": "post", "eps": 1e-12}
    assert calls[1:] == [("block", 12, settings, blocked_kernel)] * 6


def test_the_blocked_kernel_gives_the_reference_blocks_answer(model):
    # Run the same sentence through transformer_block (checked arguments, reference kernel): same states.
    run = model.run("The bank raised its interest rates.")
    x = model.embed(run.ids)
    for layer, params in enumerate(model.layers):
        x, trace = transformer_block(x, params, 12, activation="gelu", norm="post", eps=1e-12)
        np.testing.assert_allclose(x, run.hidden_states[layer + 1], rtol=0, atol=2e-5)
        np.testing.assert_allclose(trace.weights, run.attentions[layer], rtol=0, atol=2e-6)


# --- an independent recomputation of the embeddings and layer 0 ---------------------------------


def reference_layer_0(model, ids: list[int]):
    """Embeddings and the first block in float64 with plain loops, from the raw file (torch layout)."""
    t = lambda name: raw_tensor(model, name)  # noqa: E731
    n, h, d_head = len(ids), 12, 32

    def ln(v, prefix):
        mu = v.mean(axis=-1, keepdims=True)
        var = ((v - mu) ** 2).mean(axis=-1, keepdims=True)
        return (v - mu) / np.sqrt(var + 1e-12) * t(prefix + ".weight") + t(prefix + ".bias")

    def linear(v, prefix):  # PyTorch's Linear: v W^T + b with W stored (out, in)
        return v @ t(prefix + ".weight").T + t(prefix + ".bias")

    x = np.stack(
        [
            t("embeddings.word_embeddings.weight")[i]
            + t("embeddings.position_embeddings.weight")[pos]
            + t("embeddings.token_type_embeddings.weight")[0]
            for pos, i in enumerate(ids)
        ]
    )
    x = ln(x, "embeddings.LayerNorm")
    p = "encoder.layer.0."
    q, k, v = (linear(x, p + "attention.self." + name) for name in ("query", "key", "value"))
    weights = np.zeros((h, n, n))
    context = np.zeros((n, h * d_head))
    for head in range(h):
        cols = slice(head * d_head, (head + 1) * d_head)
        for i in range(n):
            scores = [float(np.dot(q[i, cols], k[j, cols])) / math.sqrt(d_head) for j in range(n)]
            top = max(scores)
            exps = [math.exp(s - top) for s in scores]
            for j in range(n):
                weights[head, i, j] = exps[j] / sum(exps)
                context[i, cols] += weights[head, i, j] * v[j, cols]
    y = ln(x + linear(context, p + "attention.output.dense"), p + "attention.output.LayerNorm")
    pre = linear(y, p + "intermediate.dense")
    gelu = pre * 0.5 * (1.0 + np.vectorize(math.erf)(pre / math.sqrt(2.0)))
    out = ln(y + linear(gelu, p + "output.dense"), p + "output.LayerNorm")
    heads = lambda m: np.stack([m[:, head * d_head : (head + 1) * d_head] for head in range(h)])  # noqa: E731
    return x, weights, out, heads(q), heads(k)


def test_layer_0_matches_a_plain_loop_recomputation(model):
    run = model.run("The animal didn't cross the street because it was too tired.")
    x, weights, out, q, k = reference_layer_0(model, run.ids)
    np.testing.assert_allclose(run.hidden_states[0], x, atol=1e-4)
    np.testing.assert_allclose(run.attentions[0], weights, atol=1e-5)
    np.testing.assert_allclose(run.hidden_states[1], out, atol=1e-3)
    np.testing.assert_allclose(run.queries[0], q, atol=1e-4)  # the vectors each head compared, unscaled
    np.testing.assert_allclose(run.keys[0], k, atol=1e-4)


def test_queries_and_keys_are_the_ones_each_head_compared(model):
    run = model.run("The bank raised its interest rates.")
    n = run.n_tokens
    assert run.queries.shape == run.keys.shape == (6, 12, n, 32)
    for a in (run.queries, run.keys):
        assert a.dtype == np.float32 and not a.flags.writeable
        with pytest.raises(ValueError):
            a[0, 0, 0, 0] = 1.0
    scores = run.queries.astype(np.float64) @ run.keys.astype(np.float64).swapaxes(-1, -2) / math.sqrt(32)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))  # (6, 12, n, n)
    np.testing.assert_allclose(weights / weights.sum(axis=-1, keepdims=True), run.attentions, atol=2e-6)
    for layer, params in enumerate(model.layers):  # every layer's queries come from that layer's input
        x = run.hidden_states[layer].astype(np.float64)
        q = (x @ params.w_q + params.b_q).reshape(n, 12, 32).swapaxes(0, 1)  # (12, n, 32)
        k = (x @ params.w_k + params.b_k).reshape(n, 12, 32).swapaxes(0, 1)
        np.testing.assert_allclose(run.queries[layer], q, atol=2e-4)
        np.testing.assert_allclose(run.keys[layer], k, atol=2e-4)


# --- behaviour a working sentence encoder must have ---------------------------------------------


def test_reproduces_the_published_similarity_matrix(model):
    # From the sentence-transformers quickstart (README and docs) for all-MiniLM-L6-v2.
    sentences = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
    published = [[1.0000, 0.6660, 0.1046], [0.6660, 1.0000, 0.1411], [0.1046, 0.1411, 1.0000]]
    embeddings = [model.encode(s) for s in sentences]
    for i, a in enumerate(embeddings):
        for j, b in enumerate(embeddings):
            assert cosine_similarity(a, b) == pytest.approx(published[i][j], abs=1e-3), (i, j)


def test_paraphrases_are_closer_than_unrelated_sentences(model):
    guitar = model.encode("A man is playing a guitar.")
    paraphrase = cosine_similarity(guitar, model.encode("Someone is playing an instrument."))
    unrelated = cosine_similarity(guitar, model.encode("The bank raised its interest rates."))
    assert paraphrase > 0.5
    assert unrelated < 0.2
    assert paraphrase - unrelated > 0.4


def test_example_sentences_all_run(model):
    assert isinstance(EXAMPLE_SENTENCES, tuple) and len(EXAMPLE_SENTENCES) >= 4
    for text in EXAMPLE_SENTENCES:
        run = model.run(text)
        assert 2 < run.n_tokens <= 256


# --- cosine similarity -------------------------------------------------------------------------


def test_cosine_similarity_hand_computed():
    assert cosine_similarity([1.0, 0.0], [0.0, 1.0]) == pytest.approx(0.0)
    assert cosine_similarity([1.0, 2.0], [2.0, 4.0]) == pytest.approx(1.0)
    assert cosine_similarity([1.0, 2.0], [-1.0, -2.0]) == pytest.approx(-1.0)
    assert cosine_similarity([1.0, 0.0], [1.0, 1.0]) == pytest.approx(1 / math.sqrt(2))


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ([0.0, 0.0], [1.0, 0.0], "zero vector"),
        ([1.0, 2.0], [1.0, 2.0, 3.0], "same length"),
        ([[1.0, 2.0]], [[1.0, 2.0]], "single vector"),
        ([], [], "empty"),
        ([1.0, float("nan")], [1.0, 2.0], "finite"),
    ],
)
def test_cosine_similarity_refuses_bad_vectors(a, b, message):
    with pytest.raises(ValueError, match=message):
        cosine_similarity(a, b)


# --- no deep-learning framework, no network ----------------------------------------------------


def test_runs_without_torch_or_network():
    code = (
        "import sys; from attention.pretrained import load_minilm; load_minilm().run('hi there'); "
        "bad = [m for m in ('torch', 'transformers', 'sentence_transformers', 'streamlit', 'plotly') "
        "if m in sys.modules]; assert not bad, bad"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr


def test_runs_keep_no_memory_of_each_other(model):
    # Every layer's weights are written straight into the run's own array: nothing is shared between runs.
    a = model.run("The first sentence.")
    b = model.run("Another, longer sentence than the first one.")
    again = model.run("The first sentence.")
    np.testing.assert_array_equal(a.attentions, again.attentions)
    assert not np.shares_memory(a.attentions, again.attentions) and not np.shares_memory(a.attentions, b.attentions)
