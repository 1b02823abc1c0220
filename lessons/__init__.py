"""Teaching material built on the attention mechanism: examples, puzzles, pitfalls, the head library,
the scaling sweep and the training experiment.

Imports `attention` (the mechanism); `attention` never imports this package.
"""
