"""Benchmark the decoder: one training step of the induction model, and one decoding step with and without the
KV cache at several context lengths (with the ratio), plus the cache's size.

    python bench/bench_decoder.py                 # BLAS threads as the environment sets them
    python bench/bench_decoder.py --threads 1     # re-runs itself with OPENBLAS_NUM_THREADS=1 etc. (as the app)

Figures printed (median of several runs, after a warm-up):
  * training: one Adam step of the induction lesson's model (2 layers, 2 heads, d_model 32, batch 64 of 2 x 10
    tokens, float32): forward, hand-written backward, Adam; and the whole default training (2000 steps);
  * decoding: the logits of one new token given n_total - 1 earlier ones, with the cache (one token against the
    cached keys and values) and without (the whole sequence again), on a random model of 4 layers, 8 heads,
    d_model 256; the ratio without / with is measured in the same run, beside the counted multiply-adds;
  * the cache: bytes of MHA, GQA (2 kv heads) and MQA caches measured on real arrays, and a 7B-class shape.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.machine import start  # noqa: E402
from harness.timing import timed  # noqa: E402


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, help="BLAS threads (re-runs this script with the variables set)")
    parser.add_argument("--repeats", type=int, default=9, help="timed runs of each measurement (default 9)")
    parser.add_argument("--quick", action="store_true", help="skip the whole 2000-step training")
    return parser.parse_args()


def bench_training(repeats: int, quick: bool) -> None:
    import numpy as np

    from attention.adam import AdamState, adam_step
    from attention.decoder import DecoderParams
    from attention.decoder_backward import next_token_loss
    from lessons.induction import InductionConfig, evaluate, repeated_tokens, train_induction

    config = InductionConfig()
    params = DecoderParams.random(config.decoder, 0, np.float32)
    state = AdamState.zeros(params.arrays())
    ids = repeated_tokens(np.random.default_rng(0), config.batch, 10, config.vocab_size)

    def step():
        result = next_token_loss(params, ids)
        arrays, _ = adam_step(params.arrays(), result.grads, state, lr=config.lr)
        return DecoderParams.from_arrays(config.decoder, arrays)

    forward_backward = timed(lambda: next_token_loss(params, ids), repeats)[0]
    whole = timed(step, repeats)[0]
    print(f"training step, induction model ({params.n_parameters:,} parameters), batch {config.batch} x 20 tokens:")
    print(f"  forward + hand-written backward: {forward_backward * 1000:6.2f} ms")
    print(f"  ... + Adam update:               {whole * 1000:6.2f} ms")
    if not quick:
        t0 = time.perf_counter()
        run = train_induction(config)
        seconds = time.perf_counter() - t0
        result = evaluate(run.params)
        print(
            f"  whole training ({config.steps} steps, seed {config.seed}): {seconds:.1f} s; repeated-half accuracy "
            f"{result.accuracy_repeated:.1%}, first half {result.accuracy_first:.1%} (chance {1 / 26:.1%})"
        )


def bench_decoding(repeats: int) -> None:
    import numpy as np

    from attention.decoder import DecoderConfig, DecoderParams, decode_step_madds, decoder_forward, kv_cache_nbytes

    config = DecoderConfig(256, 4, 8, 8, 256, 2048, mlp=True)
    params = DecoderParams.random(config, 0, np.float32)
    print(
        f"one decoding step, random float32 model: {config.n_layers} layers, {config.n_heads} heads, d_model "
        f"{config.d_model}, MLP {config.ff_width} ({params.n_parameters:,} parameters):"
    )
    print(
        f"  {'tokens':>6}  {'with cache':>11}  {'without':>10}  {'ratio':>6}  {'madds ratio':>11}  {'cache (MHA)':>11}"
    )
    for n_total in (16, 64, 256, 1024, 2048):
        ids = np.random.default_rng(n_total).integers(0, config.vocab_size, n_total)
        cache = decoder_forward(ids[:-1], params).cache
        with_cache = timed(lambda ids=ids, cache=cache: decoder_forward(ids[-1:], params, cache), repeats)[0]
        without = timed(lambda ids=ids: decoder_forward(ids, params), max(3, repeats // 3))[0]
        c = decode_step_madds(config, n_total, use_cache=True).total
        u = decode_step_madds(config, n_total, use_cache=False).total
        nbytes = kv_cache_nbytes(config, n_total, 4)
        print(
            f"  {n_total:>6}  {with_cache * 1000:>8.3f} ms  {without * 1000:>7.2f} ms  {without / with_cache:>5.1f}x  "
            f"{u / c:>10.0f}x  {nbytes / 1024:>8.0f} KiB"
        )


def bench_cache_sizes() -> None:
    from lessons.generation import cache_kinds, measured_cache_bytes

    print("KV cache, measured on real float32 caches of 2 layers, 8 query heads, d_head 32, after 512 tokens:")
    for kv, name in ((8, "MHA"), (2, "GQA"), (1, "MQA")):
        measured, formula = measured_cache_bytes(8, kv, 32, 512)
        print(f"  {name} (n_kv = {kv}): {measured:,} bytes (formula {formula:,})")
    kinds = cache_kinds(32, 32, 8, 128, 4096, 2)
    sizes = ", ".join(f"{k.name} {k.nbytes / 2**20:,.0f} MiB" for k in kinds)
    print(f"  a 7B-class shape (32 layers, 32 heads, d_head 128) at 4096 tokens in float16: {sizes}")


def main() -> int:
    args = parse_args()
    start(args.threads)
    bench_training(args.repeats, args.quick)
    bench_decoding(args.repeats)
    bench_cache_sizes()
    return 0


if __name__ == "__main__":
    sys.exit(main())
