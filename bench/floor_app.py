"""The floor for bench/bench_playground.py: the least a Streamlit app can do to show what the Playground shows.

One toggle and one annotated 4x4 plotly heatmap whose upper-right cell is masked to 0 when the toggle is
on. Nothing else: what the real app takes beyond this app's figures is what the real app adds.

    streamlit run bench/floor_app.py      # from the project folder, so it reads the same .streamlit/config.toml
"""

import numpy as np
import plotly.graph_objects as go
import streamlit as st


def draw() -> None:
    """The whole app: a toggle, and the heatmap it changes."""
    causal = st.toggle("Causal mask")
    weights = np.full((4, 4), 0.25)
    if causal:
        weights = np.tril(np.ones((4, 4)))
        weights /= weights.sum(axis=1, keepdims=True)
    fig = go.Figure(
        go.Heatmap(
            z=weights,
            zmin=0.0,
            zmax=1.0,
            colorscale="Blues",
            text=[[f"{w:.2f}" for w in row] for row in weights],
            texttemplate="%{text}",
        )
    )
    fig.update_layout(yaxis=dict(autorange="reversed"), height=302, margin=dict(l=10, r=10, t=10, b=10))
    st.plotly_chart(fig, width="stretch")


if __name__ == "__main__":  # as `streamlit run` runs it
    draw()
