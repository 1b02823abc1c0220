"""figures/heatmaps.py's and figures/base.py's colour maps stay readable under the common colour-vision deficiencies
(#32), checked by simulation: Machado, Oliveira & Fernandes (2009), "A physiologically-based model for simulation of
color vision deficiency", IEEE TVCG 15(6), severity 1.0 matrices, applied in linear RGB.

- "Blues" (attention weights, 0..1): lightness still rises steadily from 1 to 0, for every deficiency, so
  a larger weight is always a darker cell.
- "RdBu" (signed values): its two ends stay far apart (CIE76 ΔE > 30) and both differ from its white
  middle, so positive, negative and zero are still told apart.
"""

import numpy as np
import pytest
from plotly.colors import sample_colorscale, unlabel_rgb

from figures.base import colorscale
from figures.heatmaps import WEIGHT_COLORSCALE

MACHADO = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
    "none": np.eye(3).tolist(),
}


def _linear(rgb: np.ndarray) -> np.ndarray:
    c = rgb / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def lab(rgb: np.ndarray, deficiency: str) -> np.ndarray:
    """CIE L*a*b* (D65) of sRGB colours (k, 3) as seen with `deficiency`."""
    lin = np.clip(_linear(np.asarray(rgb, float)) @ np.array(MACHADO[deficiency]).T, 0, 1)
    xyz = lin @ np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]).T
    xyz = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 216 / 24389, np.cbrt(xyz), (24389 / 27 * xyz + 16) / 116)
    return np.column_stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])])


def sampled(name: str, k: int = 11) -> np.ndarray:
    colours = sample_colorscale([list(stop) for stop in colorscale(name)], np.linspace(0, 1, k).tolist())
    return np.array([unlabel_rgb(c) for c in colours], float)


@pytest.mark.parametrize("deficiency", MACHADO)
def test_weights_get_steadily_darker_for_every_deficiency(deficiency):
    lightness = lab(sampled(WEIGHT_COLORSCALE), deficiency)[:, 0]
    steps = np.diff(lightness)
    assert np.all(steps < -2.0), lightness.round(1)  # every tenth of weight is a visibly darker step


@pytest.mark.parametrize("deficiency", MACHADO)
def test_signed_colours_keep_their_two_sides_and_their_zero_apart(deficiency):
    colours = lab(sampled("RdBu"), deficiency)
    low, middle, high = colours[0], colours[5], colours[-1]
    assert np.linalg.norm(low - high) > 30
    assert np.linalg.norm(low - middle) > 30 and np.linalg.norm(high - middle) > 30


def test_the_simulation_itself_merges_red_and_green_for_a_deuteranope():
    # what the check would miss if the matrices were wrong: pure red and a matching green look alike to them
    red, green = lab(np.array([[200, 60, 50], [110, 130, 40]]), "deuteranopia")
    seen_normally = lab(np.array([[200, 60, 50], [110, 130, 40]]), "none")
    assert np.linalg.norm(red - green) < 0.4 * np.linalg.norm(seen_normally[0] - seen_normally[1])
