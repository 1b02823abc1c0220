"""Benchmark the pretrained encoder against the same forward pass in PyTorch, and what its checks cost.

    python bench/bench_pretrained.py                 # threads as the environment sets them
    python bench/bench_pretrained.py --threads 1     # re-runs itself with OPENBLAS/OMP/MKL_NUM_THREADS=1
    python bench/bench_pretrained.py --check         # exit 1 if a target is missed

What it prints, in order:
  * the machine (Python, numpy, CPUs, thread variables, load), the model's load time and size, and
    this machine's float32 matmul speed (so a slow figure can be told from a slow machine);
  * side by side, at 32 and 256 tokens: our `run()` and the same BERT forward pass written by hand in
    PyTorch eager (CPU, float32, inference mode, same safetensors weights, same token ids from our
    tokenizer; no `transformers`). Each side runs in its own child process, so that numpy's BLAS
    threads and torch's OpenMP threads never fight for the 2 cores; the parent alternates them
    (ours, torch, ours, ...) for several rounds and prints each side's median and best run,
    ours/torch of the medians (the target), the spread of the per-round ratios (wide: the machine
    was busy) and the ratio of the best runs. Both sides tokenise, embed, run the 6 blocks, keep
    every layer's states and attention weights and mean-pool the sentence embedding: the same work
    as `run()`.
  * the largest |difference| between torch's last hidden state and ours, at 32 and 256 tokens;
  * what input validation costs: `run()` with the checks on and inside `checks_off()`, interleaved,
    as the share of run() time, (on - off) / on;
  * peak memory of one 256-token run and the process's peak RSS.

Targets (ok / OVER on each line): run() at 32 tokens <= 30 ms and at 256 tokens <= 150 ms; ours no
slower than torch eager (ours/torch <= 1.0) at both lengths; max |diff| <= 1e-4; validation < 5 % of
run(). Without torch (`pip install -r requirements-bench.txt`), the torch lines say how to install it
and everything else still runs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.children import ask, read_reply  # noqa: E402
from harness.machine import print_machine, rerun_with_threads, thread_settings  # noqa: E402

LENGTHS = (32, 256)
TARGETS_MS = {32: 30.0, 256: 150.0}
MAX_RATIO = 1.0  # ours / torch eager
MAX_DIFF = 1e-4  # max |last hidden state, torch - ours|
MAX_VALIDATION_SHARE = 0.05  # of run() time
VALIDATION_PAIRS = {32: 60, 256: 20}  # (checks on, checks off) pairs timed per length
WARMUP_RUNS = 3
INSTALL_TORCH = "pip install -r requirements-bench.txt"
BASE_TEXT = (
    "The animal didn't cross the street because it was too tired. Attention lets every word look at "
    "every other word and decide how much each one matters for its own meaning. A transformer stacks "
    "such layers, each followed by a small feed-forward network, with residual connections and layer "
    "normalisation keeping the numbers well behaved. "
)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--threads",
        type=int,
        help="threads for BLAS and torch (re-runs this script with the "
        "thread variables set; the torch side also calls torch.set_num_threads)",
    )
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds per side (default 5)")
    parser.add_argument("--repeats", type=int, default=10, help="timed runs per length per round (default 10)")
    parser.add_argument("--check", action="store_true", help="exit with status 1 if a target is missed")
    # internal: the parent starts one child per side with these
    parser.add_argument("--side", choices=("numpy", "torch"), help=argparse.SUPPRESS)
    parser.add_argument("--lengths", default=",".join(map(str, LENGTHS)), help=argparse.SUPPRESS)
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    if args.threads is not None:
        rerun_with_threads(args.threads)  # before numpy (or torch) is imported: they read the variables once
    if args.side:
        return child_main(args)
    import numpy as np  # noqa: F401  (after the thread variables are final)

    from attention.pretrained import load_minilm

    print_machine()
    model, load_s = timed(load_minilm)
    weight_mb = sum(a.nbytes for a in model_arrays(model)) / 2**20
    print(f"model load (first call): {load_s * 1e3:.0f} ms, weights {weight_mb:.1f} MiB float32")
    print_matmul_speed()
    texts = {n: text_with_tokens(model, n) for n in LENGTHS}
    with tempfile.TemporaryDirectory() as tmp:
        hidden_file = Path(tmp) / "torch_last_hidden.npz"
        times = side_by_side(args, hidden_file)
        missed = print_speed(model, times)
        missed += print_correctness(model, texts, hidden_file if "torch" in times else None)
    missed += print_validation_cost(model, texts)
    print_memory(model, texts[256])
    return 1 if args.check and missed else 0


# ---------------------------------------------------------------------------------------------
# The parent: start one child per side, alternate their rounds, print the figures.


def side_by_side(args, hidden_file: Path) -> dict[str, dict[int, list[list[float]]]]:
    """{side: {length: [[ms per run] per round]}} from alternating rounds; no torch key if it cannot run.

    Each child loads and warms up before the next one starts, then only one of them works at a time:
    the other waits on its stdin, so the two thread pools never share the cores."""
    children = {}
    for side in ("numpy", "torch"):
        child, ready = start_child(side, args)
        if "error" in ready:  # only the torch side can fail this way; ours still runs
            print(f"torch eager: {ready['error']}")
            child.wait()
            continue
        children[side] = child
        print(f"{side} side ready: {ready['ready']}")
    times = {side: {n: [] for n in LENGTHS} for side in children}
    for _ in range(args.rounds):
        for side, child in children.items():  # numpy, torch, numpy, torch, ...
            for n, ms in ask(child, "round").items():
                times[side][int(n)].append(ms)
    if "torch" in children:
        ask(children["torch"], f"save_hidden {hidden_file}")
    for child in children.values():
        child.stdin.close()  # the child's command loop ends at end of input
        child.wait()
    return times


def start_child(side: str, args) -> tuple[subprocess.Popen, dict]:
    """Start `side` in its own process (same interpreter, same environment) and wait until it is ready."""
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--side",
        side,
        "--lengths",
        ",".join(map(str, LENGTHS)),
        "--repeats",
        str(args.repeats),
    ]
    if args.threads is not None:
        command += ["--threads", str(args.threads)]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # stderr: ours
    return child, read_reply(child)


def print_speed(model, times: dict[str, dict[int, list[list[float]]]]) -> list[str]:
    """Median and best per side and length, ours/torch, and the targets; returns the missed ones.

    The ratio of each round's medians is printed too (a wide spread says the machine was busy), and the
    ratio of the best runs: other processes only ever add time, so on a busy machine it is the steadier."""
    rounds, repeats = len(times["numpy"][LENGTHS[0]]), len(times["numpy"][LENGTHS[0]][0])
    print(
        f"\nrun() time, ours (numpy) vs PyTorch eager: {rounds} alternating rounds x {repeats} runs per side and "
        f"length (load average now {os.getloadavg()[0]:.2f})"
    )
    missed = []
    for n in LENGTHS:
        ours_runs = [ms for one_round in times["numpy"][n] for ms in one_round]
        ours, gflop = median(ours_runs), forward_flops(model.config, n) / 1e9
        verdict = "ok" if ours <= TARGETS_MS[n] else "OVER"
        print(
            f"{n:>3} tokens  ours : median {ours:6.1f} ms, best {min(ours_runs):6.1f} ms "
            f"(target {TARGETS_MS[n]:.0f} ms: {verdict}); {gflop:.2f} GFLOP -> {gflop / (ours / 1e3):.1f} GFLOP/s"
        )
        missed += [f"run() {n}"] if verdict != "ok" else []
        if "torch" not in times:
            print(f"{n:>3} tokens  torch: not run ({INSTALL_TORCH}); ours/torch target not checked")
            continue
        torch_runs = [ms for one_round in times["torch"][n] for ms in one_round]
        theirs = median(torch_runs)
        ratio = ours / theirs
        per_round = sorted(median(a) / median(b) for a, b in zip(times["numpy"][n], times["torch"][n]))
        verdict = "ok" if ratio <= MAX_RATIO else "OVER"
        print(
            f"{n:>3} tokens  torch: median {theirs:6.1f} ms, best {min(torch_runs):6.1f} ms; "
            f"{gflop / (theirs / 1e3):.1f} GFLOP/s"
        )
        print(
            f"{n:>3} tokens  ours/torch = {ratio:.2f} (target <= {MAX_RATIO:.1f}: {verdict}); "
            f"per round {per_round[0]:.2f} .. {per_round[-1]:.2f}; best/best {min(ours_runs) / min(torch_runs):.2f}"
        )
        missed += [f"ratio {n}"] if verdict != "ok" else []
    return missed


def print_correctness(model, texts: dict[int, str], hidden_file: Path | None) -> list[str]:
    """max |torch - ours| of the last hidden state at each length, against MAX_DIFF."""
    import numpy as np

    print("\nlast hidden state, torch vs ours (float32 both)")
    if hidden_file is None:
        print(f"not compared: torch is not installed ({INSTALL_TORCH})")
        return []
    missed = []
    with np.load(hidden_file) as saved:
        for n, text in texts.items():
            ours = model.run(text).hidden_states[-1]  # (n, d_model)
            diff = float(np.abs(saved[str(n)] - ours).max())
            verdict = "ok" if diff <= MAX_DIFF else "OVER"
            print(
                f"{n:>3} tokens: max |diff| {diff:.2e} (largest |value| {np.abs(ours).max():.1f}; "
                f"target <= {MAX_DIFF:.0e}: {verdict})"
            )
            missed += [f"diff {n}"] if verdict != "ok" else []
    return missed


def print_validation_cost(model, texts: dict[int, str]) -> list[str]:
    """Share of run() time spent in input validation: run() with checks on and off, interleaved.

    Both shares are (on - off) / on: from the two medians, and from the median of the pairs' own
    differences. A pair's two runs are adjacent in time, so a slow spell of the machine hits both
    alike and cancels in their difference: the paired figure is the steadier, and is the one judged."""
    print("\ninput validation, run() with checks on and inside checks_off(), interleaved")
    missed = []
    for n, pairs in VALIDATION_PAIRS.items():
        on, off = time_checks_on_off(model, texts[n], pairs)
        share_of_medians = (median(on) - median(off)) / median(on)
        share = median([a - b for a, b in zip(on, off)]) / median(on)
        verdict = "ok" if share < MAX_VALIDATION_SHARE else "OVER"
        print(
            f"{n:>3} tokens, {pairs} pairs: on median {median(on):6.2f} ms, off median {median(off):6.2f} ms "
            f"({share_of_medians:.1%}); paired: validation {share:.1%} of run() "
            f"(target < {MAX_VALIDATION_SHARE:.0%}: {verdict})"
        )
        missed += [f"validation {n}"] if verdict != "ok" else []
    return missed


def time_checks_on_off(model, text: str, pairs: int) -> tuple[list[float], list[float]]:
    """ms of model.run(text) with checks on and off, pair by pair; which goes first alternates,
    so that neither gains from always following the other (warm caches, BLAS threads awake)."""
    from attention.checks import checks_off

    on, off = [], []
    for i in range(pairs):
        for checks in ("on", "off") if i % 2 == 0 else ("off", "on"):
            if checks == "on":
                on.append(timed(model.run, text)[1] * 1e3)
            else:
                with checks_off():
                    off.append(timed(model.run, text)[1] * 1e3)
    return on, off


# ---------------------------------------------------------------------------------------------
# A child: one side of the side-by-side, answering the parent's commands on stdin.


def child_main(args) -> int:
    """Load one side, warm it up, say ready, then answer 'round' and 'save_hidden PATH' until stdin ends.

    Only one-line JSON answers go to stdout (the parent reads them); anything else goes to stderr."""
    from attention.pretrained import load_minilm

    model = load_minilm()  # the tokenizer for both sides, and our forward pass for the numpy side
    lengths = [int(n) for n in args.lengths.split(",")]
    texts = {n: text_with_tokens(model, n) for n in lengths}
    try:
        run, last_hidden, info = numpy_side(model) if args.side == "numpy" else torch_side(model, args.threads)
    except ImportError as err:
        reply({"error": f"torch is not importable ({err}); install it with `{INSTALL_TORCH}`"})
        return 0
    for text in texts.values():
        for _ in range(WARMUP_RUNS):  # first-touch page faults, thread pools starting, allocator caches
            run(text)
    reply({"ready": info})
    for line in sys.stdin:
        command, *rest = line.split()
        if command == "round":
            reply({str(n): [timed(run, texts[n])[1] * 1e3 for _ in range(args.repeats)] for n in lengths})
        elif command == "save_hidden":
            import numpy as np

            np.savez(rest[0], **{str(n): last_hidden(texts[n]) for n in lengths})
            reply({"saved": rest[0]})
    return 0


def reply(message: dict) -> None:
    print(json.dumps(message), flush=True)


def numpy_side(model):
    """(run, last_hidden, description) of our forward pass."""
    try:
        from threadpoolctl import threadpool_info

        blas = "; ".join(
            f"{Path(p['filepath']).parent.name.removesuffix('.libs')}: {p['internal_api']} "
            f"{p.get('version')} {p.get('architecture')}, {p['num_threads']} threads"
            for p in threadpool_info()
        )  # numpy's BLAS and scipy's, each with its own threads
    except ImportError:
        blas = thread_settings()
    return model.run, lambda text: model.run(text).hidden_states[-1], f"numpy, {blas}"


def torch_side(model, threads: int | None):
    """(run, last_hidden, description) of the PyTorch eager forward pass; ImportError without torch."""
    import torch
    from safetensors.torch import load_file

    from attention.pretrained import model_dir

    if threads is not None:
        torch.set_num_threads(threads)  # torch's own pool; the OMP/MKL variables are already set
    weights = load_file(model_dir() / "model.safetensors")  # the file our loader reads, as torch tensors
    cfg = model.config
    layers = [
        {
            name.removeprefix(f"encoder.layer.{i}."): t
            for name, t in weights.items()
            if name.startswith(f"encoder.layer.{i}.")
        }
        for i in range(cfg.n_layers)
    ]  # once, not per run

    def run(text: str):
        _, ids = model.tokenize(text)  # same tokenizer, same ids, and timed like ours
        with torch.inference_mode():
            states, attentions = torch_forward(weights, layers, torch.tensor(ids), cfg)
            pooled = states[-1].mean(dim=0)
            return states, attentions, pooled / pooled.norm()

    def last_hidden(text: str):
        return run(text)[0][-1].numpy()

    return run, last_hidden, f"torch {torch.__version__}, {torch.get_num_threads()} threads"


def torch_forward(w: dict, layers: list[dict], ids, cfg):
    """BERT's encoder, by hand: ([x_0, ..., x_L] each (n, d_model), [attention weights (h, n, n)] per layer).

    `w` holds every tensor by its checkpoint name; `layers[i]` block i's, without the "encoder.layer.i." prefix."""
    import torch.nn.functional as F

    d = cfg.d_model
    e = "embeddings."
    x = (
        w[e + "word_embeddings.weight"][ids]
        + w[e + "position_embeddings.weight"][: len(ids)]
        + w[e + "token_type_embeddings.weight"][0]
    )  # (n, d); every token is of type 0
    x = F.layer_norm(x, (d,), w[e + "LayerNorm.weight"], w[e + "LayerNorm.bias"], cfg.eps)
    states, attentions = [x], []
    for p in layers:
        x, weights = torch_layer(x, p, cfg)
        states.append(x)
        attentions.append(weights)
    return states, attentions


def torch_layer(x, p: dict, cfg):
    """One post-norm BERT block, as in HF's eager BertLayer. Shapes: x (n, d) -> ((n, d), (h, n, n))."""
    import torch.nn.functional as F

    n, d = x.shape
    h, d_head = cfg.n_heads, cfg.d_head

    def linear(name: str, t):  # PyTorch layout (out, in): F.linear computes t @ W.T + b
        return F.linear(t, p[name + ".weight"], p[name + ".bias"])

    def heads(t):  # (n, d) -> (h, n, d_head)
        return t.view(n, h, d_head).transpose(0, 1)

    q, k, v = (heads(linear(f"attention.self.{name}", x)) for name in ("query", "key", "value"))
    weights = (q @ k.transpose(-1, -2) / math.sqrt(d_head)).softmax(dim=-1)  # (h, n, n)
    context = (weights @ v).transpose(0, 1).reshape(n, d)  # heads concatenated, (n, d)
    y = F.layer_norm(
        x + linear("attention.output.dense", context),
        (d,),
        p["attention.output.LayerNorm.weight"],
        p["attention.output.LayerNorm.bias"],
        cfg.eps,
    )
    hidden = F.gelu(linear("intermediate.dense", y), approximate="none")  # (n, d_ff), exact GELU
    out = F.layer_norm(
        y + linear("output.dense", hidden), (d,), p["output.LayerNorm.weight"], p["output.LayerNorm.bias"], cfg.eps
    )
    return out, weights


# ---------------------------------------------------------------------------------------------
# Matmul speed, memory, and the helpers.


def print_matmul_speed() -> None:
    """float32 GFLOP/s of a large square matmul and of the model's own largest matmul shape."""
    import numpy as np

    rng = np.random.default_rng(0)
    for m, k, n, label in ((1024, 1024, 1024, "1024^3 square"), (256, 384, 1536, "256x384 @ 384x1536 (FFN)")):
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        seconds = median_seconds(partial(np.matmul, a, b), repeats=9)  # (m, n)
        print(f"float32 matmul {label}: {2 * m * k * n / seconds / 1e9:.1f} GFLOP/s")


def print_memory(model, text: str) -> None:
    """Peak Python-traced allocation during one 256-token run, and the process's peak RSS."""
    import resource
    import tracemalloc

    print()
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
    print(f"process peak RSS (model loaded, all runs done; torch ran in a child): {max_rss_kib / 2**10:.0f} MiB")


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


def timed(fn, *args):
    """(fn(*args), seconds it took)."""
    start = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - start


def median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def median_seconds(fn, repeats: int) -> float:
    fn()
    return median([timed(fn)[1] for _ in range(repeats)])


if __name__ == "__main__":
    sys.exit(main())
