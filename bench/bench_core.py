"""How close does the core's attention come to this machine's matmul ceiling, and to PyTorch eager?

Run as `python bench/bench_core.py` (add `--check` to exit 1 when a target is missed). Prints, in one run:
  * the machine: Python, numpy, CPUs, BLAS library and threads, load average;
  * the float32 matmul rate of a large A @ B (the ceiling), from the fastest of many calls;
  * the rate of causal float32 attention at (heads, n, d_head) = (8, 512, 64) and (12, 128, 32),
    counting 4·h·n²·d flops (Q Kᵀ and weights @ V, 2·n²·d each per head), as GFLOP/s and as a
    fraction of the ceiling, for `attention_steps` (the readable reference every page shows) and
    `scaled_dot_product_attention` (the public call: the blocked kernel);
  * side by side with PyTorch eager doing the same work (Q Kᵀ/√d, causal mask, softmax, @ V, the
    weights kept; float32, inference mode, torch's default threads): each side in its own child
    process, so that numpy's BLAS threads and torch's OpenMP threads never share the cores; the
    parent alternates them (ours, torch, ours, ...) for --rounds rounds of --calls calls each, and
    prints every round's ratio of medians, ours/torch, and the median of those ratios;
  * how many times one `transformer_block` call checks an argument (checks at the door: each once).

Targets (ok / OVER): the public call at <= 0.8x PyTorch eager at both shapes (median of the per-round
ratios), and at >= 30 % of the ceiling at (8, 512, 64), >= 25 % at (12, 128, 32).

The flop count is the conventional one for dense attention: it ignores the softmax (whose cost is
memory traffic, not flops) and does not halve for causal masking. The environment (thread counts,
OPENBLAS_* variables) is left as the machine sets it. Rates come from the fastest call, since on a
shared machine other processes only ever add time; the median is printed alongside. Ratios to torch
use medians, as a caller would feel them; a wide spread across rounds says the machine was busy.
Without torch (`pip install -r requirements-bench.txt`), the side-by-side says so and the rest runs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from anywhere without installing

from attention import BlockParams, attention_steps, scaled_dot_product_attention, transformer_block  # noqa: E402
from attention.checks import as_real_array  # noqa: E402
from harness.children import ask, read_reply  # noqa: E402

SHAPES = ((8, 512, 64), (12, 128, 32))  # (heads, n, d_head)
MIN_CEILING_SHARE = {(8, 512, 64): 0.30, (12, 128, 32): 0.25}  # the public call's
MAX_TORCH_RATIO = 0.8  # the public call / PyTorch eager, medians
INSTALL_TORCH = "pip install -r requirements-bench.txt"
SETTLE_SECONDS = 0.3  # between the sides' turns: the idle side's threads stop spinning and sleep


def call_seconds(fn, min_calls: int, min_seconds: float = 1.0) -> np.ndarray:
    """Wall-clock seconds of each of at least `min_calls` calls of fn() (and at least `min_seconds` in all).

    Each call is timed on its own so that the fastest one can be reported: on a shared machine the
    other processes only ever add time, so the minimum is the best estimate of what the code can do.
    """
    fn()  # warm up: first-touch page faults, thread pool start-up
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < min_calls or time.perf_counter() - start < min_seconds:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return np.array(times)


def matmul_ceiling(size: int, repeats: int, rng: np.random.Generator) -> float:
    """GFLOP/s of the fastest (size, size) @ (size, size) float32 product (2·size³ flops)."""
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    out = np.empty((size, size), dtype=np.float32)
    seconds = call_seconds(lambda: np.matmul(a, b, out=out), repeats)
    return 2 * size**3 / seconds.min() / 1e9


def qkv(h: int, n: int, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The same float32 q, k, v (h, n, d) on both sides of the comparison."""
    rng = np.random.default_rng(h * 1_000_000 + n * 1000 + d)
    return tuple(rng.standard_normal((h, n, d), dtype=np.float32) for _ in range(3))


def steps_pair(q, k, v, *, causal):
    """(output, weights) of the readable reference, as the public call returns them."""
    s = attention_steps(q, k, v, causal=causal)
    return s.output, s.weights


def attention_times(attend, h: int, n: int, d: int, repeats: int) -> np.ndarray:
    """Seconds per call of causal float32 attention at (h, n, d) with `attend`."""
    q, k, v = qkv(h, n, d)
    out, weights = attend(q, k, v, causal=True)
    assert out.dtype == np.float32 and weights.dtype == np.float32
    return call_seconds(lambda: attend(q, k, v, causal=True), repeats)


def checks_per_block_call() -> tuple[int, int]:
    """(as_real_array calls, distinct arguments) for one transformer_block call on a (5, 16) input."""
    rng = np.random.default_rng(0)
    params, x = BlockParams.random(16, 64, rng), rng.standard_normal((5, 16))
    names = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code is as_real_array.__code__:
            names.append(frame.f_locals["name"])

    sys.setprofile(profile)
    try:
        transformer_block(x, params, 4)
    finally:
        sys.setprofile(None)
    return len(names), len(set(names))


def blas_description() -> str:
    from threadpoolctl import threadpool_info

    return "; ".join(
        f"{p['internal_api']} {p.get('version')} {p.get('architecture')}, {p['num_threads']} threads"
        for p in threadpool_info()
        if p["user_api"] == "blas"
    )


def print_ceiling_shares(args) -> list[str]:
    """The ceiling and each path's share of it; returns the missed targets."""
    ceiling = matmul_ceiling(args.size, args.repeats, np.random.default_rng(0))
    print(f"float32 matmul {args.size}x{args.size}: {ceiling:7.1f} GFLOP/s (ceiling, fastest call)")
    missed = []
    for name, attend in (("attention_steps             ", steps_pair), ("scaled_dot_product_attention", None)):
        for h, n, d in SHAPES:
            seconds = attention_times(attend or scaled_dot_product_attention, h, n, d, args.repeats)
            rate = 4 * h * n * n * d / seconds.min() / 1e9
            share = rate / ceiling
            target = ""
            if attend is None:
                verdict = "ok" if share >= MIN_CEILING_SHARE[(h, n, d)] else "OVER"
                target = f"  target >= {MIN_CEILING_SHARE[(h, n, d)]:.0%}: {verdict}"
                missed += [f"ceiling share {(h, n, d)}"] if verdict != "ok" else []
            print(
                f"{name} causal float32 h={h:<2} n={n:<4} d_head={d:<3}: {rate:6.1f} GFLOP/s {share:6.1%} of ceiling"
                f"  (fastest {seconds.min() * 1e3:.3f} ms, median {np.median(seconds) * 1e3:.3f} ms over "
                f"{seconds.size} calls){target}"
            )
    return missed


# ---------------------------------------------------------------------------------------------
# Side by side with PyTorch eager: one child process per side, the parent alternates them.


def print_side_by_side(args) -> list[str]:
    """Alternating rounds of ours and torch's; prints each round's ratio; returns the missed targets."""
    children = {}
    for side in ("numpy", "torch"):
        child = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--side", side, "--calls", str(args.calls)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        ready = read_reply(child)
        if "error" in ready:
            print(f"\nPyTorch eager: {ready['error']}; ours/torch not measured")
            child.wait()
            for other in children.values():
                other.stdin.close()
                other.wait()
            return []
        children[side] = child
        print(f"{side} side: {ready['ready']}")
    medians = {side: {shape: [] for shape in SHAPES} for side in children}
    for _ in range(args.rounds):
        for side, child in children.items():  # numpy, torch, numpy, torch, ...
            time.sleep(SETTLE_SECONDS)
            for shape, seconds in zip(SHAPES, ask(child, "round")["medians"]):
                medians[side][shape].append(seconds)
    for child in children.values():
        child.stdin.close()  # the child's command loop ends at end of input
        child.wait()
    print(
        f"\nours (scaled_dot_product_attention) / PyTorch eager, causal float32, medians of {args.calls} calls, "
        f"{args.rounds} alternating rounds (load average now {os.getloadavg()[0]:.2f}):"
    )
    missed = []
    for shape in SHAPES:
        ours, theirs = np.array(medians["numpy"][shape]), np.array(medians["torch"][shape])
        ratios = ours / theirs
        verdict = "ok" if np.median(ratios) <= MAX_TORCH_RATIO else "OVER"
        missed += [f"torch ratio {shape}"] if verdict != "ok" else []
        print(
            f"  h={shape[0]:<2} n={shape[1]:<4} d_head={shape[2]:<3}: ratio median {np.median(ratios):.2f} "
            f"(rounds: {' '.join(f'{r:.2f}' for r in ratios)}; target <= {MAX_TORCH_RATIO}: {verdict})\n"
            f"      ours  ms per round: {' '.join(f'{s * 1e3:.2f}' for s in ours)}\n"
            f"      torch ms per round: {' '.join(f'{s * 1e3:.2f}' for s in theirs)}"
        )
    return missed


def child_main(side: str, calls: int) -> None:
    """Answer each "round" on stdin with the median seconds of `calls` calls at every shape."""
    try:
        attend, description = numpy_side() if side == "numpy" else torch_side()
    except ImportError as err:
        print(json.dumps({"error": f"torch is not importable ({err}); install it with `{INSTALL_TORCH}`"}), flush=True)
        return
    problems = [attend(*qkv(*shape)) for shape in SHAPES]  # each: a function of no arguments
    for run in problems:
        for _ in range(3):  # warm up: page faults, thread pools starting, allocator caches
            run()
    print(json.dumps({"ready": description}), flush=True)
    for line in sys.stdin:
        if line.strip() == "round":
            medians = [float(np.median([timed(run) for _ in range(calls)])) for run in problems]
            print(json.dumps({"medians": medians}), flush=True)


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def numpy_side():
    def attend(q, k, v):
        return lambda: scaled_dot_product_attention(q, k, v, causal=True)

    return attend, f"numpy {np.__version__}, {blas_description()}"


def torch_side():
    import torch

    def attend(q, k, v):
        q, k, v = (torch.from_numpy(a) for a in (q, k, v))
        n, d = q.shape[-2:]
        allowed = torch.ones(n, n, dtype=torch.bool).tril()  # True = may attend, as ours

        def run():
            with torch.inference_mode():
                scores = q @ k.transpose(-1, -2) / d**0.5  # (h, n, n)
                weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)  # (h, n, n)
                return weights @ v, weights  # (h, n, d), the weights kept

        return run

    threads, isa = torch.get_num_threads(), torch.backends.cpu.get_cpu_capability()
    return attend, f"torch {torch.__version__}, {threads} threads, {isa}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2048, help="matmul side for the ceiling (default 2048)")
    parser.add_argument("--repeats", type=int, default=20, help="at least this many timed calls (default 20)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds against torch (default 5)")
    parser.add_argument("--calls", type=int, default=15, help="calls per side, shape and round (default 15)")
    parser.add_argument("--check", action="store_true", help="exit with status 1 if a target is missed")
    parser.add_argument("--side", choices=("numpy", "torch"), help=argparse.SUPPRESS)  # a child's role
    args = parser.parse_args()
    if args.side:
        child_main(args.side, args.calls)
        return
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    blas_env = {k: v for k, v in os.environ.items() if k.startswith(("OPENBLAS", "OMP_", "MKL_"))}
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S %Z')}, python {sys.version.split()[0]}, numpy {np.__version__}, ")
    print(f"{os.cpu_count()} CPUs, {blas_description()}, env {blas_env or '{}'}, load average {load}")
    missed = print_ceiling_shares(args)
    missed += print_side_by_side(args)
    calls, arguments = checks_per_block_call()
    verdict = "ok" if calls == arguments else "OVER"
    print(f"one transformer_block call checks {calls} times for {arguments} arguments (target: each once: {verdict})")
    print(f"targets missed: {', '.join(missed)}" if missed else "every target met")
    if args.check and missed:
        sys.exit(1)


if __name__ == "__main__":
    main()
