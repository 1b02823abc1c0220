"""Benchmark the pretrained encoder: run() time at 32 and 256 tokens, peak memory, and the
machine's float32 matmul speed beside them (so a slow figure can be told from a slow machine).

    python bench/bench_pretrained.py                 # BLAS threads as the environment sets them
    python bench/bench_pretrained.py --threads 1     # re-runs itself with OPENBLAS_NUM_THREADS=1
    python bench/bench_pretrained.py --check         # exit 1 if a target is missed

Targets: 32 tokens <= 30 ms, 256 tokens <= 150 ms (median of several runs, model already loaded).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _threads import print_machine, rerun_with_threads  # noqa: E402  (bench/ is on sys.path)

ROOT = Path(__file__).resolve().parent.parent
TARGETS_MS = {32: 30.0, 256: 150.0}
BASE_TEXT = (
    "The animal didn't cross the street because it was too tired. Attention lets every word look at "
    "every other word and decide how much each one matters for its own meaning. A transformer stacks "
    "such layers, each followed by a small feed-forward network, with residual connections and layer "
    "normalisation keeping the numbers well behaved. "
)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, help="BLAS threads (re-runs this script with the variables set)")
    parser.add_argument("--repeats", type=int, default=15, help="timed runs per length (default 15)")
    parser.add_argument("--check", action="store_true", help="exit with status 1 if a target is missed")
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    if args.threads is not None:
        rerun_with_threads(args.threads)
    sys.path.insert(0, str(ROOT))
    import numpy as np  # noqa: F401  (after the thread variables are final)

    from attention.pretrained import load_minilm

    print_machine()
    model, load_s = timed(load_minilm)
    weight_mb = sum(a.nbytes for a in model_arrays(model)) / 2**20
    print(f"model load (first call): {load_s * 1e3:.0f} ms, weights {weight_mb:.1f} MiB float32")
    print_matmul_speed()
    missed = []
    for n_tokens, target in TARGETS_MS.items():
        text = text_with_tokens(model, n_tokens)
        median, best = time_run(model, text, args.repeats)
        gflop = forward_flops(model.config, n_tokens) / 1e9
        verdict = "ok" if median <= target else "OVER TARGET"
        print(
            f"run() {n_tokens:>3} tokens: median {median:6.1f} ms, best {best:6.1f} ms "
            f"(target {target:.0f} ms: {verdict}); {gflop:.2f} GFLOP -> {gflop / (median / 1e3):.1f} GFLOP/s"
        )
        if median > target:
            missed.append(n_tokens)
    print_memory(model, text_with_tokens(model, 256))
    return 1 if args.check and missed else 0


def print_matmul_speed() -> None:
    """float32 GFLOP/s of a large square matmul and of the model's own largest matmul shape."""
    import numpy as np

    rng = np.random.default_rng(0)
    for m, k, n, label in ((1024, 1024, 1024, "1024^3 square"), (256, 384, 1536, "256x384 @ 384x1536 (FFN)")):
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        seconds = median_seconds(lambda a=a, b=b: a @ b, repeats=9)  # (m, n)
        print(f"float32 matmul {label}: {2 * m * k * n / seconds / 1e9:.1f} GFLOP/s")


def time_run(model, text: str, repeats: int) -> tuple[float, float]:
    """(median, best) wall time of model.run(text) in ms, after two warm-up runs."""
    import time

    for _ in range(2):
        model.run(text)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        model.run(text)
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2] * 1e3, times[0] * 1e3


def print_memory(model, text: str) -> None:
    """Peak Python-traced allocation during one 256-token run, and the process's peak RSS."""
    import resource
    import tracemalloc

    for keep_traces in (False, True):
        tracemalloc.start()
        run = model.run(text, keep_traces=keep_traces)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        arrays = [run.hidden_states, run.attentions, run.embedding]
        arrays += [a for t in run.traces for a in (t.weights, *(s.value for s in t.steps))]
        kept = sum({id(a): a.nbytes for a in arrays}.values())  # each array once
        print(
            f"memory, one {run.n_tokens}-token run, keep_traces={keep_traces}: tracemalloc peak "
            f"{peak / 2**20:.1f} MiB, result holds {kept / 2**20:.1f} MiB"
        )
    max_rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(f"process peak RSS (model loaded, all runs done): {max_rss_kib / 2**10:.0f} MiB")


def text_with_tokens(model, n_tokens: int) -> str:
    """A text of exactly n_tokens tokens ([CLS] and [SEP] included): real prose, topped up with 'the'."""
    words = (BASE_TEXT * (1 + n_tokens // 40)).split()
    lo, hi = 0, len(words)
    while lo < hi:  # the longest prefix of words that fits
        mid = (lo + hi + 1) // 2
        if len(model.tokenizer.encode(" ".join(words[:mid])).ids) <= n_tokens:
            lo = mid
        else:
            hi = mid - 1
    text = " ".join(words[:lo])
    missing = n_tokens - len(model.tokenizer.encode(text).ids)
    text = " ".join([text, *["the"] * missing])
    assert len(model.tokenizer.encode(text).ids) == n_tokens
    return text


def forward_flops(cfg, n: int) -> int:
    """Multiply-adds x 2 of one forward pass: projections, scores, weighted sums, feed-forward."""
    d, d_ff = cfg.d_model, cfg.d_ff
    per_layer = 2 * n * d * d * 4 + 2 * n * n * d * 2 + 2 * n * d * d_ff * 2
    return cfg.n_layers * per_layer


def model_arrays(model):
    from dataclasses import fields

    yield from (
        model.word_embeddings,
        model.position_embeddings,
        model.token_type_embedding,
        model.embedding_ln_gamma,
        model.embedding_ln_beta,
    )
    for layer in model.layers:
        yield from (getattr(layer, f.name) for f in fields(layer))


def timed(fn):
    import time

    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def median_seconds(fn, repeats: int) -> float:
    import time

    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


if __name__ == "__main__":
    sys.exit(main())
