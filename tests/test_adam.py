"""attention.adam: the step's bound that the induction page quotes (Kingma & Ba 2015, section 2.1)."""

import numpy as np

from attention.adam import BETA1, BETA2, AdamState, adam_step, largest_step


def moves(gradients: list[float], lr: float = 0.01) -> list[float]:
    """How far one parameter moves at each step, given its gradient at each step."""
    params = {"w": np.zeros(1)}
    state = AdamState.zeros(params)
    out = []
    for g in gradients:
        new, state = adam_step(params, {"w": np.array([g])}, state, lr=lr)
        out.append(abs(float(new["w"][0] - params["w"][0])) / lr)
        params = new
    return out


def test_a_steady_gradient_moves_about_lr_whatever_its_size():
    for size in (1e-3, 1.0, 1e3):
        assert np.allclose(moves([size] * 50), 1.0, atol=1e-3)


def test_a_gradient_after_a_long_quiet_spell_moves_nearly_the_bound_and_never_more():
    step = moves([0.0] * 20_000 + [1.0])[-1]  # the running square forgot its bias; the mean has one term
    assert 0.99 * largest_step() < step <= largest_step()
    assert largest_step() == (1 - BETA1) / np.sqrt(1 - BETA2) > 3  # the page's "3.2·lr" with β₁ = 0.9, β₂ = 0.999


def test_the_bound_is_lr_when_the_means_decay_alike():
    assert largest_step(0.9, 0.9) == 1.0
