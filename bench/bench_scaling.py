"""Benchmark the "why divide by sqrt(d_k)" page's computations: the measurement sweep and the training.

    python bench/bench_scaling.py                 # BLAS threads as the environment sets them
    python bench/bench_scaling.py --threads 1     # re-runs itself with OPENBLAS_NUM_THREADS=1 etc.
    python bench/bench_scaling.py --check         # exit 1 if a target is missed

Targets (median of several runs):
  * sweep: every power of 2 from 1 to 4096, 1000 samples each, at the page's default 8 keys: <= 0.5 s;
  * training: the page's default comparison (d_k = 256, 300 steps, both runs): <= 5 s ("a few seconds").
Also printed: the sweep at other key counts, the two normal generators, and the training result
(final loss and accuracy, scaled vs unscaled) at several d_k, so the figures can be quoted.
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

SWEEP_TARGET_S = 0.5
TRAIN_TARGET_S = 5.0


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, help="BLAS threads (re-runs this script with the variables set)")
    parser.add_argument("--repeats", type=int, default=7, help="timed runs of the sweep (default 7)")
    parser.add_argument("--check", action="store_true", help="exit with status 1 if a target is missed")
    parser.add_argument("--quick", action="store_true", help="skip the training table at other d_k")
    return parser.parse_args()


def bench_generators() -> None:
    import numpy as np

    from lessons.scaling import standard_normal_f32

    rng, n = np.random.default_rng(0), 4_000_000
    for name, fn in (
        ("rng.standard_normal(float32)", lambda: rng.standard_normal(n, dtype=np.float32)),
        ("Box-Muller standard_normal_f32", lambda: standard_normal_f32(rng, (n,))),
    ):
        median, _ = timed(fn, 5)
        print(f"  {name:<32} {median / n * 1e9:5.2f} ns per number")


def bench_sweep(repeats: int) -> float:
    """Print the sweep's timings; return the median at the page's default number of keys."""
    from lessons.scaling import DEFAULT_KEYS, SWEEP_D_KS, scaling_stats

    draws = sum(SWEEP_D_KS)
    print(f"sweep d_k = 1, 2, 4, ..., 4096 ({len(SWEEP_D_KS)} values), 1000 samples each:")
    default = 0.0
    for n_keys in (DEFAULT_KEYS, 1, 16, 64, 256):
        median, best = timed(
            lambda k=n_keys: scaling_stats(SWEEP_D_KS, n_keys=k, n_samples=1000, seed=0), repeats if n_keys <= 16 else 3
        )
        if n_keys == DEFAULT_KEYS:
            default = median
        verdict = (
            f"(default; target {SWEEP_TARGET_S} s: {'ok' if median <= SWEEP_TARGET_S else 'OVER TARGET'})"
            if n_keys == DEFAULT_KEYS
            else ""
        )
        drawn, independent = 1000 * (n_keys + 1) * 4096 / 1e6, 1000 * (n_keys + 1) * draws / 1e6
        print(
            f"  {n_keys:>3} keys: median {median:6.3f} s, best {best:6.3f} s; {drawn:6.1f}M numbers drawn "
            f"(independent draws per d_k would need {independent:.1f}M) {verdict}"
        )
    return default


def bench_training(quick: bool) -> float:
    """Print the default comparison's time and results (and other d_k); return the default's time."""
    from dataclasses import replace

    from lessons.training import TrainingConfig, compare_scaling

    base = TrainingConfig()
    print(
        f"training: retrieval, {base.steps} steps, batch {base.batch}, lr {base.lr}, seed {base.seed}, "
        f"both runs (scaled, then unscaled):"
    )
    default_seconds = 0.0
    for d_k in (256,) if quick else (256, 1, 4, 16, 64, 1024):
        config = replace(base, d_k=d_k)
        t0 = time.perf_counter()
        c = compare_scaling(config)
        seconds = time.perf_counter() - t0
        if d_k == 256:
            default_seconds = seconds
        s, u = c.scaled, c.unscaled
        note = (
            f"  (target {TRAIN_TARGET_S} s: {'ok' if seconds <= TRAIN_TARGET_S else 'OVER TARGET'})"
            if d_k == 256
            else ""
        )
        print(
            f"  d_k={d_k:>4}: {seconds:5.2f} s  loss {s.final_loss:.4f} vs {u.final_loss:.4f}, "
            f"accuracy {s.final_accuracy:6.1%} vs {u.final_accuracy:6.1%}, stuck {s.final_stuck:5.1%} vs "
            f"{u.final_stuck:5.1%}; unscaled worse: {c.unscaled_trains_worse}{note}"
        )
    return default_seconds


def main() -> int:
    args = parse_args()
    start(args.threads)
    print("normal generators, 4M float32 numbers:")
    bench_generators()
    sweep = bench_sweep(args.repeats)
    training = bench_training(args.quick)
    missed = sweep > SWEEP_TARGET_S or training > TRAIN_TARGET_S
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
