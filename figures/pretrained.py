"""Figures for a real pretrained encoder: all 6 × 12 heads at a glance, one head in full, token to token.

Pure functions: numpy arrays in, plotly Figures out (no streamlit). Built to stay fast at 256 tokens:
the overview is one PNG image (every head block-averaged to at most 48 × 48 cells), and the one-head
heatmap carries numbers, not one hover string per cell (at 256 tokens `attention_heatmap`'s per-cell
hover strings take ~0.2 s to build and serialise and weigh 5 MB).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import sample_colorscale, unlabel_rgb
from plotly.utils import image_array_to_data_uri

from figures.base import colorscale as named_colorscale
from figures.base import figure
from figures.heatmaps import WEIGHT_COLORSCALE, safe_labels
from lessons.reading import SPECIAL_TOKENS
from locales import num, tr

LINE_THRESHOLD = 0.05  # the token-to-token views skip weights below this
THUMB_CELLS = 48  # a thumbnail shows at most 48 × 48 cells, whatever the input length
THUMB_PIXELS = 96  # small inputs are blown up (nearest neighbour) to about this many pixels a side
THUMB_GAMMA = 0.5  # thumbnails colour sqrt(weight): at 256 tokens most weights are small
GAP_RGB = (205, 208, 214)  # the lines between thumbnails
HIGHLIGHT_COLOURS = ("#d62728", "#ff7f0e")  # head A, head B
ANNOTATE_MAX = 20  # write the weight in every cell up to this many tokens


def strip_special(weights: np.ndarray, tokens: Sequence[str]) -> tuple[np.ndarray, list[int]]:
    """Drop the [CLS]/[SEP] rows and columns and rescale every remaining row to sum to 1 again.

    Shapes: weights (..., n, n) -> (..., m, m) with m = number of other tokens; also returns the m kept
    positions. Rescaling (rather than leaving rows short of 1) keeps colours comparable between heads
    that park very different amounts of weight on [CLS]/[SEP].
    """
    n = weights.shape[-1]
    if weights.shape[-2:] != (n, n) or len(tokens) != n:
        raise ValueError(f"weights has shape {weights.shape}; expected (..., {len(tokens)}, {len(tokens)})")
    kept = [i for i, tok in enumerate(tokens) if tok not in SPECIAL_TOKENS]
    if not kept:
        raise ValueError("every token is [CLS] or [SEP]: nothing would be left")
    sub = weights[..., kept, :][..., :, kept]  # (..., m, m)
    mass = sub.sum(axis=-1, keepdims=True)  # (..., m, 1)
    return sub / np.where(mass > 0, mass, 1.0), kept


def downsample(weights: np.ndarray, max_cells: int = THUMB_CELLS) -> np.ndarray:
    """Shrink an (n, n) weight matrix to at most max_cells a side: rows averaged, columns summed.

    Shapes: (n, n) -> (m, m), m = min(n, max_cells). Cell (r, c) is the share of a query in row-block r
    that goes to the keys in column-block c, so every row still sums to what the original rows summed to.
    """
    n = weights.shape[0]
    if weights.shape != (n, n) or n == 0:
        raise ValueError(f"weights has shape {weights.shape}; expected a non-empty square matrix (n, n)")
    m = min(n, max_cells)
    if m == n:
        return np.asarray(weights, dtype=np.float64)
    edges = np.linspace(0, n, m + 1).round().astype(int)  # m blocks of n/m positions, none empty
    counts = np.diff(edges)  # (m,)
    rows = np.add.reduceat(weights.astype(np.float64), edges[:-1], axis=0) / counts[:, None]  # (m, n)
    return np.add.reduceat(rows, edges[:-1], axis=1)  # (m, m)


def head_mosaic(attentions: np.ndarray, max_cells: int = THUMB_CELLS, gap: int = 1) -> np.ndarray:
    """Every head's (downsampled) weights tiled in one array: layers down, heads across, NaN between.

    Shapes: attentions (n_layers, n_heads, n, n) -> (n_layers * (m + gap) - gap, n_heads * (m + gap) - gap).
    """
    n_layers, n_heads, n, _ = attentions.shape
    m = min(n, max_cells)
    step = m + gap
    out = np.full((n_layers * step - gap, n_heads * step - gap), np.nan)
    for layer in range(n_layers):
        for head in range(n_heads):
            out[layer * step : layer * step + m, head * step : head * step + m] = downsample(attentions[layer, head], m)
    return out


@functools.lru_cache(maxsize=4)
def _colour_table(colorscale: str) -> np.ndarray:
    """256 RGB colours sampled along a plotly colour scale. Shapes: -> (256, 3) uint8."""
    colours = sample_colorscale(colorscale, np.linspace(0.0, 1.0, 256), colortype="rgb")
    return np.array([unlabel_rgb(c) for c in colours]).round().astype(np.uint8)


def weights_to_rgb(values: np.ndarray, colorscale: str = WEIGHT_COLORSCALE, gamma: float = 1.0) -> np.ndarray:
    """Weights in 0..1 as colours of weight**gamma (NaN as the gap colour). Shapes: (h, w) -> (h, w, 3) uint8.

    gamma < 1 darkens small weights, so a head that spreads its weight thinly still shows its pattern.
    """
    index = np.clip(np.nan_to_num(values, nan=0.0), 0.0, 1.0) ** gamma * 255
    rgb = _colour_table(colorscale)[index.round().astype(np.intp)]  # (h, w, 3)
    rgb[np.isnan(values)] = GAP_RGB
    return rgb


def head_summaries(attentions: np.ndarray, tokens: Sequence[str]) -> list[list[str]]:
    """Per head, for the overview's hover: where its weight goes, averaged over the queries, and its
    heaviest single weight to a key other than [CLS]/[SEP] (those have their shares above): query → key,
    exact, read from the full weights, not from the shrunk thumbnail.

    Shapes: attentions (n_layers, n_heads, n, n) -> n_layers lists of n_heads strings (escaped HTML), in the
    session's language.
    """
    n = attentions.shape[-1]
    mean_to = attentions.mean(axis=-2)  # (L, H, n): average weight each key receives
    diag = lambda k: np.diagonal(attentions, offset=k, axis1=-2, axis2=-1).sum(axis=-1) / n  # noqa: E731
    parts = {  # each part's text, its {share} filled in below
        "[CLS] {share}": mean_to[..., 0] if tokens[0] == "[CLS]" else None,
        "[SEP] {share}": mean_to[..., -1] if tokens[-1] == "[SEP]" else None,
        tr("itself {share}"): diag(0),
        tr("previous token {share}"): diag(-1),
        tr("next token {share}"): diag(1),
    }
    shares = {text: share for text, share in parts.items() if share is not None}
    heaviest = tr("heaviest weight to a word: '{query}' ({query_position}) → '{key}' ({key_position}) {weight}")
    labels = safe_labels(tokens)
    special = np.array([tok in SPECIAL_TOKENS for tok in tokens])
    to_words = np.where(special.all() | ~special, attentions, -1.0)  # (L, H, n, n): [CLS]/[SEP] keys out
    flat = to_words.reshape(*attentions.shape[:2], n * n)  # (L, H, n·n)
    query, key = np.divmod(flat.argmax(axis=-1), n)  # (L, H) each: every head's heaviest weight to a word
    return [
        [
            " · ".join(text.format(share=num(shares[text][layer, head], ".0%")) for text in shares)
            + "<br>"
            + heaviest.format(
                query=labels[query[layer, head]],
                query_position=query[layer, head],
                key=labels[key[layer, head]],
                key_position=key[layer, head],
                weight=num(flat[layer, head].max(), ".3f"),
            )
            for head in range(attentions.shape[1])
        ]
        for layer in range(attentions.shape[0])
    ]


def overview_figure(
    attentions: np.ndarray,
    tokens: Sequence[str],
    *,
    summaries: list[list[str]] | None = None,
    max_cells: int = THUMB_CELLS,
) -> go.Figure:
    """All heads as thumbnails in one image, rows = layers, columns = heads, with a hover per head.

    Shapes: attentions (n_layers, n_heads, n, n), rows summing to 1; tokens n strings. The image is a
    PNG (one element in the browser however long the input); an invisible marker at each thumbnail's
    centre carries its hover text and can be clicked (point index = layer * n_heads + head).
    """
    n_layers, n_heads, n, _ = attentions.shape
    m = min(n, max_cells)
    scale = max(1, -(-THUMB_PIXELS // m))  # ceil: whole pixels per cell
    rgb = weights_to_rgb(head_mosaic(attentions, max_cells), gamma=THUMB_GAMMA)  # (rows, cols, 3)
    rgb = rgb.repeat(scale, axis=0).repeat(scale, axis=1)  # nearest neighbour: sharp cells
    step = (m + 1) * scale
    centres = lambda count: [i * step + m * scale / 2 - 0.5 for i in range(count)]  # noqa: E731
    # the image trace px.imshow(rgb, binary_string=True, binary_compression_level=1) makes, without its hover
    image = dict(
        type="image",
        source=image_array_to_data_uri(rgb, backend="auto", compression=1, ext="png"),
        name="0",
        xaxis="x",
        yaxis="y",
        hoverinfo="skip",
    )
    summaries = summaries if summaries is not None else head_summaries(attentions, tokens)
    xs, ys = np.meshgrid(centres(n_heads), centres(n_layers))  # (L, H) each
    click = tr("click to open")
    names = [
        [tr("layer {layer}, head {head}", layer=layer + 1, head=head + 1) for head in range(n_heads)]
        for layer in range(n_layers)
    ]
    labels = [
        [f"<b>{names[layer][head]}</b><br>{summaries[layer][head]}<br>{click}" for head in range(n_heads)]
        for layer in range(n_layers)
    ]
    markers = dict(
        type="scatter",
        x=xs.ravel(),
        y=ys.ravel(),
        mode="markers",
        hovertext=np.array(labels).ravel(),
        hoverinfo="text",
        marker=dict(size=max(8, step // 2), opacity=0, symbol="square"),
        showlegend=False,
        selected=dict(marker=dict(opacity=0)),
        unselected=dict(marker=dict(opacity=0)),
    )
    if m < n:
        axis_title = tr(
            "head (each thumbnail:<br>{n} queries down × {n} keys across,<br>each shrunk to {m} × {m})", n=n, m=m
        )
    else:
        axis_title = tr("head (each thumbnail:<br>{n} queries down × {n} keys across)", n=n)
    layout = dict(
        xaxis=dict(
            anchor="y",
            domain=[0.0, 1.0],
            tickmode="array",
            tickvals=centres(n_heads),
            ticktext=[f"H{h + 1}" for h in range(n_heads)],
            # in lines that fit a phone's narrow chart: this chart is drawn once at every width (it is clicked)
            title=dict(text=axis_title),
            side="top",
            showgrid=False,
            zeroline=False,
        ),
        yaxis=dict(
            anchor="x",
            domain=[0.0, 1.0],
            tickmode="array",
            tickvals=centres(n_layers),
            ticktext=[f"L{layer + 1}" for layer in range(n_layers)],
            # Translators: an axis title: the rows of the thumbnails are the model's layers
            title=dict(text=tr("layer")),
            showgrid=False,
            zeroline=False,
        ),
        margin=dict(l=10, r=10, t=60, b=10),
        height=90 + 70 * n_layers,
        hovermode="closest",
        hoverdistance=-1,
        dragmode=False,
        clickmode="event+select",
    )
    return figure([image, markers], layout)


def highlight_shapes(heads: Sequence[tuple[int, int]], n_tokens: int, max_cells: int = THUMB_CELLS) -> list[dict]:
    """Frames around the chosen heads (layer, head), 0-based, for an `overview_figure`'s layout.shapes."""
    m = min(n_tokens, max_cells)
    scale = max(1, -(-THUMB_PIXELS // m))
    step, size = (m + 1) * scale, m * scale
    return [
        dict(
            type="rect",
            x0=head * step - 0.5,
            x1=head * step - 0.5 + size,
            y0=layer * step - 0.5,
            y1=layer * step - 0.5 + size,
            line=dict(color=colour, width=3),
        )
        for (layer, head), colour in zip(heads, HIGHLIGHT_COLOURS)
    ]


def query_key_headers(left_anchor: str, right_anchor: str) -> list[dict]:
    """The two column headers of a query → key line figure: "attending (query)" over x = 0, "attended to
    (key)" over x = 1, each anchored as given ("left", "center", "right")."""
    header = dict(y=1, yref="paper", yanchor="bottom", yshift=6, showarrow=False)
    return [
        dict(x=0, text=tr("attending (query)"), xanchor=left_anchor, **header),
        dict(x=1, text=tr("attended to (key)"), xanchor=right_anchor, **header),
    ]


def position_labels(tokens: Sequence[str], positions: Sequence[int] | None = None) -> list[str]:
    """Unique, escaped axis labels "3 · it" (plotly would merge two categories both called "the").

    positions: each token's place in the full input (default 0, 1, ...), kept when some are hidden.
    """
    positions = range(len(tokens)) if positions is None else positions
    return [f"{i} · {tok}" for i, tok in zip(positions, safe_labels(tokens))]


def weight_hover() -> str:
    """A weight heatmap's hover template, its words in the session's language: query, key and weight."""
    # Translators: the hover of a heatmap cell: "query 3 · it", "→ key 5 · the", "weight 0.412"
    query, key, weight = tr("query"), tr("key"), tr("weight")
    return f"{query} %{{y}}<br>→ {key} %{{x}}<br>{weight} %{{z:.3f}}"


def head_heatmap(
    weights: np.ndarray,
    tokens: Sequence[str],
    *,
    original: np.ndarray | None = None,
    positions: Sequence[int] | None = None,
    title: str | None = None,
    height: int | None = None,
) -> go.Figure:
    """The full labelled heatmap of one head: rows are queries, columns keys, colour fixed to 0..1.

    Shapes: weights (n, n); tokens n strings; original (n, n), the weights before [CLS]/[SEP] were
    dropped and the rows rescaled (shown in the hover beside the rescaled weight); positions n ints,
    the tokens' places in the full input. Cells carry their numbers only, so a 256-token head stays light.
    """
    n = weights.shape[0]
    if weights.shape != (n, n) or len(tokens) != n:
        raise ValueError(f"weights has shape {weights.shape} but there are {len(tokens)} tokens; expected (n, n)")
    labels = position_labels(tokens, positions)
    hover = weight_hover()
    if original is not None:
        rescaled, before = tr("(rescaled)"), tr("original weight")
        hover += f" {rescaled}<br>{before} %{{customdata:.3f}}"
    annotate = n <= ANNOTATE_MAX
    trace = dict(
        type="heatmap",
        z=weights,
        x=labels,
        y=labels,
        zmin=0.0,
        zmax=1.0,
        colorscale=named_colorscale(WEIGHT_COLORSCALE),
        hovertemplate=hover + "<extra></extra>",
        textfont=dict(size=11),
        colorbar=dict(title=dict(text=tr("weight")), thickness=12),
    )
    if original is not None:
        trace["customdata"] = original
    if annotate:
        trace["texttemplate"] = "%{z:.2f}"
    tick_font = dict(size=12 if n <= 40 else 9)
    layout = dict(
        margin=dict(l=10, r=10, t=40 if title else 10, b=10),
        xaxis=dict(
            title=dict(text=tr("key (attended to)")), type="category", tickangle=-60, tickfont=tick_font, showgrid=False
        ),
        yaxis=dict(
            title=dict(text=tr("query (attending)")),
            type="category",
            autorange="reversed",
            tickfont=tick_font,
            showgrid=False,
        ),
        height=height or int(np.clip(26 * n + 160, 360, 900)),
    )
    layout["title"] = dict(text=title) if title is not None else {}  # {}: no title (as update_layout(title=None))
    return figure([trace], layout)


LABELS_MAX = 60  # the token-to-token view names at most about this many tokens per side
WIDTH_BUCKETS = ((0.0, 0.15, 1.0), (0.15, 0.3, 2.5), (0.3, 0.5, 4.5), (0.5, 0.75, 7.0), (0.75, 1.01, 10.0))


def bucket_lines(pairs: np.ndarray, ys: np.ndarray, width: float, colour: str, hi: float) -> dict:
    """One trace of left-to-right lines, one per (query, key) pair of a weight bucket, wider and more opaque
    for a heavier bucket (`hi`: its top weight). Shapes: pairs (p,), ys (3p,): left y, right y, NaN per pair
    (NaN breaks the line between pairs)."""
    return dict(
        type="scatter",
        x=np.tile([0.0, 1.0, np.nan], len(pairs)),
        y=ys,
        mode="lines",
        hoverinfo="skip",
        showlegend=False,
        line=dict(width=width, color=colour),
        opacity=min(1.0, 0.25 + hi * 0.75),
    )


def token_lines_figure(
    weights: np.ndarray,
    tokens: Sequence[str],
    *,
    threshold: float = LINE_THRESHOLD,
    focus: int | None = None,
    positions: Sequence[int] | None = None,
    colour: str = "#1f77b4",
    title: str | None = None,
) -> go.Figure:
    """Token to token: a line from each query (left) to every key (right) it gives >= threshold weight.

    Shapes: weights (n, n), rows are queries; tokens n strings; focus = one query's row, or None for all;
    positions n ints, the tokens' places in the full input. Line width and opacity grow with the weight;
    one trace per width bucket keeps it fast. Past LABELS_MAX tokens only every k-th token is named
    (plus the focused one and the keys it reads); the hover names them all.
    """
    n = weights.shape[0]
    if weights.shape != (n, n) or len(tokens) != n:
        raise ValueError(f"weights has shape {weights.shape} but there are {len(tokens)} tokens; expected (n, n)")
    rows = np.arange(n) if focus is None else np.array([focus])
    data = []
    for lo, hi, width in WIDTH_BUCKETS:
        block = weights[rows]  # (r, n)
        i, j = np.nonzero((block >= max(lo, threshold)) & (block < hi))  # one line per (query, key) pair
        if i.size:
            ys = np.column_stack([rows[i], j, np.full(i.size, np.nan)]).ravel().astype(float)
            data.append(bucket_lines(rows[i], ys, width, colour, hi))
    labels = safe_labels(tokens)
    pos = list(range(n)) if positions is None else list(positions)
    top = weights.argmax(axis=1)  # (n,)
    hover = [
        tr(
            "'{query}' (position {query_position}) gives most weight to '{key}' (position {key_position}): {weight}",
            query=labels[i],
            query_position=pos[i],
            key=labels[top[i]],
            key_position=pos[top[i]],
            weight=num(weights[i, top[i]], ".2f"),
        )
        for i in range(n)
    ]
    received = weights.sum(axis=0)  # (n,)
    hover_right = [
        tr(
            "'{key}' (position {position}) receives {total} in total",
            key=labels[j],
            position=pos[j],
            total=num(received[j], ".2f"),
        )
        for j in range(n)
    ]
    named_left = np.arange(n) % -(-n // LABELS_MAX) == 0  # every k-th token, k = ceil(n / LABELS_MAX)
    named_right = named_left.copy()
    if focus is not None:
        named_left[focus] = True
        named_right |= weights[focus] >= threshold
    font = dict(size=13 if n <= 40 else 10)
    dim = np.where((np.arange(n) == focus) | (focus is None), 1.0, 0.35)
    for x, named, side, hovertext, opacity in (
        (0, named_left, "middle left", hover, dim),
        (1, named_right, "middle right", hover_right, 1.0),
    ):
        data.append(
            dict(
                type="scatter",
                x=np.full(n, x),
                y=np.arange(n),
                mode="markers+text",
                text=[lab if show else "" for lab, show in zip(labels, named)],
                textposition=side,
                textfont=font,
                hovertext=hovertext,
                hoverinfo="text",
                showlegend=False,
                marker=dict(size=6 if n <= 60 else 3, color="#555", opacity=opacity),
            )
        )
    layout = dict(
        margin=dict(l=10, r=10, t=70 if title else 40, b=10),
        hovermode="closest",
        xaxis=dict(range=[-0.6, 1.6], visible=False, fixedrange=True),
        yaxis=dict(range=[n - 0.5, -0.5], visible=False),
        height=int(np.clip(24 * n + 80, 300, 1000)),
        annotations=query_key_headers("center", "center"),  # outward, they were cut at the edges
    )
    layout["title"] = dict(text=title) if title is not None else {}  # {}: no title (as update_layout(title=None))
    return figure(data, layout)
