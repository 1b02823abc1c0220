"""Train the induction-head model that the "Watch an induction head form" page ships, and save it.

    python scripts/train_induction.py                 # InductionConfig() (seed 0) -> lessons/data/induction_model.npz
    python scripts/train_induction.py --seed 3 --out /tmp/induction_seed3.npz

Trains on one core (BLAS limited to one thread, as in the app's server), then measures the model on
fresh sequences (a seed no training batch used) and prints the accuracy on each half, the per-head
scores, the training time and the file's size. Same seed, same model, up to float32 rounding.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from threadpoolctl import threadpool_limits  # noqa: E402

from lessons.induction import MODEL_FILE, InductionConfig, evaluate, save_run, train_induction  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=InductionConfig().seed, help="seed of weights and batches")
    parser.add_argument("--steps", type=int, default=InductionConfig().steps, help="Adam steps")
    parser.add_argument("--out", type=Path, default=MODEL_FILE, help="where to write the .npz")
    args = parser.parse_args()
    config = replace(InductionConfig(), seed=args.seed, steps=args.steps)
    print(f"training {config}")
    with threadpool_limits(limits=1, user_api="blas"):
        run = train_induction(config)
        result = evaluate(run.params)
    path = save_run(run, args.out)
    print(f"trained in {run.seconds:.1f} s on one core ({run.seconds / config.steps * 1000:.1f} ms per step)")
    print(
        f"fresh sequences (2 x {result.half} tokens, {result.n_sequences} of them): top-1 accuracy "
        f"{result.accuracy_first:.1%} on the first half, {result.accuracy_repeated:.1%} on the repeated half; "
        f"loss {result.loss_first:.3f} and {result.loss_repeated:.3f}"
    )
    print(f"previous-token scores (layer x head):\n{result.previous_token.round(2)}")
    print(f"induction scores (layer x head):\n{result.induction.round(2)}")
    print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
