r"""The Fig. 4 adaptive-temperature code of arXiv:2410.01104 made visible (docs/papers/dispersion.md §3.5, §4.4): on
rows of Gaussian logits of several lengths and scales, the inverse temperature that
:func:`iclab.attention.adaptive_softmax` actually applied, read back from its output
(:math:`\beta = (\log a_i - \log a_j)/(e_i - e_j)` for ``out = softmax(β e)``), beside :math:`\max(P(H), 1)` of the
row's entropy from the NumPy closed form, and the entropy before and after. A check of one formula against another
implementation, shown in the report — not a claim of the paper.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from iclab.attention import adaptive_softmax
from iclab.data import generator_for
from iclab.theory.dispersion import beta_of_entropy, softmax_entropy

__all__ = ["fig4_rows"]

SIZES = (16, 64, 256, 1024, 4096)
SCALES = np.logspace(-1.0, 1.4, 36)  # logit standard deviations: entropies from ~0 to ~ln n


def fig4_rows(seed: int = 0) -> pd.DataFrame:
    """One row per (n, scale): entropy H of softmax(e), β applied by ``adaptive_softmax``, ``max(P(H), 1)``
    (``beta_formula``) and the entropy after."""
    g = generator_for(seed, "fig4")
    out = []
    for n in SIZES:
        z = torch.randn(n, generator=g, dtype=torch.float64)
        for s in SCALES:
            e = s * z  # (n,)
            a = adaptive_softmax(e[None, None])[0, 0]  # (n,)
            i, j = int(e.argmax()), int(e.argmin())
            beta = float((a[i].log() - a[j].log()) / (e[i] - e[j]))
            H = float(softmax_entropy(e.numpy()))
            out.append(
                {
                    "n": n,
                    "scale": float(s),
                    "H": H,
                    "beta_applied": beta,
                    "beta_formula": float(beta_of_entropy(H)),
                    "H_after": float(-(a * a.clamp_min(1e-300).log()).sum()),
                }
            )
    return pd.DataFrame(out)
