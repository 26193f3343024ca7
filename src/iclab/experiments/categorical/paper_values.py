"""The authors' numbers for the synthetic study of Wang et al., arXiv:2405.17248: the outputs kept in their notebook
``plot_training_data_results.ipynb`` behind the training-set-size and number-of-blocks figures (C = 25, d = 10,
N = 125, softmax kernel, early stopping, mean over seeds; docs/papers/categorical.md §5.2)."""

from __future__ import annotations

__all__ = ["PAPER_L_SWEEP", "PAPER_BLOCKS"]

# L -> (GD acc, TF acc, GD NLL, TF NLL), two blocks
PAPER_L_SWEEP = {
    2048: (0.718, 0.524, 0.971, 1.743),
    4096: (0.723, 0.609, 0.945, 1.434),
    8192: (0.718, 0.670, 0.944, 1.165),
    12288: (0.723, 0.687, 0.939, 1.079),
    16384: (0.722, 0.700, 0.936, 1.021),
    20480: (0.724, 0.704, 0.933, 1.001),
    24576: (0.719, 0.712, 0.930, 0.972),
    32768: (0.727, 0.720, 0.934, 0.968),
}
# blocks -> (GD acc, GD NLL, TF acc, TF NLL) at L = 2048
PAPER_BLOCKS = {
    1: (0.702, 1.058, 0.575, 1.520),
    2: (0.718, 0.971, 0.524, 1.743),
    3: (0.729, 0.943, 0.474, 1.847),
    4: (0.731, 0.924, 0.479, 1.847),
    5: (0.728, 0.916, 0.481, 1.845),
    6: (0.727, 0.921, 0.483, 1.838),
}
