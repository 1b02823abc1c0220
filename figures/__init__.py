"""Pure figure builders: numpy arrays in, plotly Figures out. No streamlit here."""
