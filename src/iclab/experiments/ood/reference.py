"""Reference numbers the ``ood`` experiment is compared with (docs/papers/ood.md §5.8 and §6).

Two kinds, labelled so in the report: ``PAPER_*`` are numbers of arXiv:2609.36448 known only through a second-hand
summary (unreliable, note §1); ``DERIVED_*`` are iclab's own large-N values from the derived
theory of note §4 (c = 1/2, balanced p, population GD with η = 1, per-feature stopping at 0.0025; note §5.8).
"""

from __future__ import annotations

__all__ = [
    "PAPER_F",
    "DERIVED_F",
    "PAPER_TINY",
    "DERIVED_INSPAN",
    "PAPER_OOD",
    "PAPER_ENCODER_F",
]

# K = 2 forgetting F at (γ1, γ2)
DERIVED_F = {
    (0.5, -0.9): 0.00034,
    (0.5, -0.2): -0.00017,
    (0.5, 0.0): -0.00058,
    (0.5, 0.5): -0.00163,
    (0.5, 0.95): -0.00183,
    (0.8, -0.9): 0.00006,
    (0.8, -0.2): -0.00028,
    (0.8, 0.0): -0.00089,
    (0.8, 0.5): -0.00185,
    (0.8, 0.95): -0.00164,
}
PAPER_F = {(1.0, -0.9): 0.421, (1.0, -0.2): -0.112, (1.0, 0.0): -0.084, (1.0, 0.5): -0.053, (1.0, 0.95): 0.0}
# tiny transformers: F at γ2 = -0.75 / 0 / +0.75, per depth
PAPER_TINY = {1: (0.28, -0.06, 0.15), 2: (0.35, -0.05, 0.18), 3: (0.41, -0.04, 0.22)}
# per-feature OOD loss of an in-span rotation of the (v1, v2) plane by 30° / 60° (K = 4)
DERIVED_INSPAN = {30: (0.0119, 0.0015, 0.0035, 0.0035), 60: (0.038, 0.0065, 0.0084, 0.0084)}
# mean per-feature OOD loss under out-of-span rotation by θ (degrees), K = 4, d = 8
PAPER_OOD = {30: 0.0182, 60: 0.1450, 90: 0.375}
# real encoder (BERT-base, MRPC): source forgetting at θ = π/2 and θ = π
PAPER_ENCODER_F = {90: -0.03, 180: 0.25}
