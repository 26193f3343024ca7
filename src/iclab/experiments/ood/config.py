"""Settings of the ``ood`` experiment (arXiv:2609.36448, settings in docs/papers/ood.md §5)."""

from __future__ import annotations

from dataclasses import dataclass

from iclab.config import Config, choices_field, int_field, ints_field, number_field, numbers_field, scale_field
from iclab.errors import ConfigError

__all__ = ["OodConfig", "PRESETS", "DOMAIN_NAMES"]

# the names of ``iclab.data.REGION_DOMAINS`` (kept here so that importing the config does not import torch; a test
# checks that the two agree)
DOMAIN_NAMES = (
    "capital",
    "currency",
    "telephone",
    "population",
    "demonym",
    "province",
    "native",
    "web",
    "area",
    "timezone",
    "borders",
    "language",
)


@dataclass(frozen=True)
class OodConfig(Config):
    """Settings of the ``ood`` experiment (docs/papers/ood.md §5).

    Fields:
        seed: base seed (feature bases, SGD batches, evaluation prompts, the MiniLM split and rotation).
        d: dimension of the pre-training / OOD study (the paper's synthetic setting: d = 8).
        K: number of orthonormal features of that study (the paper: K = 4); needs d >= 2K.
        d_k2: dimension of the K = 2 forgetting study (needs d_k2 >= 4).
        n_tokens: prompt length N; features repeat within a prompt (note §7: N = 40).
        c: loss prefactor c of the per-feature loss (c = 1/2, note §3.5).
        threshold: per-feature stopping level ε/K (0.0025 = 0.01/4, note §3.5).
        batch_size: prompts per plain-SGD step on Q (Q(0) = 0).
        lr: SGD learning rate (also the step of the population-GD theory lines).
        max_steps: step budget of pre-training if the stopping rule is not met.
        ft_max_steps: step budget of each fine-tuning run.
        log_every: the stopping rule is checked (and α/β logged) every ``log_every`` steps.
        sgd_repeats: extra SGD pre-trainings of the K = ``K`` model (other batch seeds, same basis) that give the
            standard errors of α*, the stopping step and the training loss (note §5.2).
        ft_repeats: extra SGD fine-tunings (other batch seeds) at every table point (γ1, γ2) that give the
            standard error of F (note §5.4).
        thetas_deg: out-of-span rotation angles θ of the OOD error curve (degrees).
        ood_prompts: Monte-Carlo prompts per OOD feature set.
        gamma1_table: γ1 values of the K = 2 forgetting table (the derived table, note §5.8, uses 0.5, 0.8; the paper 1).
        gamma2_table: γ2 values of the K = 2 forgetting table.
        dense_gamma2: points of the dense γ2 sweep over [-1, 1] for each table γ1.
        phase_grid: points per axis of the (γ1, γ2) phase diagram over [-1, 1]².
        tiny_layers: depths of the tiny transformers.
        tiny_seeds: tiny transformers trained per depth (replicates: basis, initialisation, batches and evaluation
            prompts from their own seed; replicate 0 from ``seed``). The tiny effect claims take their SE across
            the replicates (at least 3), never over one network's evaluation prompts alone (note §5.5).
        tiny_width: residual width of the tiny transformers (the paper: 16).
        tiny_d: feature dimension of the tiny transformers' K = 2 prompts (needs >= 4).
        tiny_n_tokens: prompt length of the tiny transformers.
        tiny_steps: Adam pre-training steps of each tiny transformer.
        tiny_ft_steps: Adam fine-tuning steps on each OOD set U(γ1, γ2).
        tiny_batch: prompts per Adam step.
        tiny_lr: Adam learning rate.
        tiny_gamma1: γ1 of the tiny transformers' fine-tuning sets.
        tiny_gamma2: γ2 values of the tiny transformers' fine-tuning sets.
        tiny_thetas_deg: rotation angles of the tiny transformers' OOD curve (degrees).
        tiny_eval: evaluation prompts per feature set (the same prompts before and after fine-tuning).
        minilm: run the MiniLM cell (hidden states of a real encoder rotated).
        minilm_layer: rotate the hidden states after this encoder layer (0 = embeddings .. 5).
        minilm_thetas_deg: rotation angles of the MiniLM hidden states (degrees).
        minilm_steps: full-batch Adam steps of the classification head on source features.
        minilm_ft_steps: full-batch Adam steps of the head's fine-tuning on rotated features.
        minilm_domains: sentence domains (templates of countryinfo fields, ``iclab.data.REGION_DOMAINS``) of the
            natural-shift measurement: a head per source domain, scored on every other domain (note §5.9).
        minilm_gap_planes: coordinate planes of the head's input rotated in the weight-gap scenarios (note §5.9).
        minilm_gap_thetas_deg: rotation angles of the weight-gap scenarios (degrees, one full turn).
    """

    seed: int = int_field(0, low=0)
    d: int = int_field(8, low=2)
    K: int = int_field(4, low=2)
    d_k2: int = int_field(4, low=4)
    n_tokens: int = int_field(40)
    c: float = scale_field(0.5)
    threshold: float = scale_field(0.0025)
    batch_size: int = int_field(256)
    lr: float = scale_field(1.0)
    max_steps: int = int_field(5000)
    ft_max_steps: int = int_field(5000)
    log_every: int = int_field(5)
    sgd_repeats: int = int_field(2, low=0)
    ft_repeats: int = int_field(2, low=0)
    thetas_deg: tuple[float, ...] = (0, 15, 30, 45, 60, 75, 90)
    ood_prompts: int = int_field(20000)
    gamma1_table: tuple[float, ...] = numbers_field((0.5, 0.8, 1.0), low=-1, high=1, why="overlaps γ")
    gamma2_table: tuple[float, ...] = numbers_field((-0.9, -0.2, 0.0, 0.5, 0.95), low=-1, high=1, why="overlaps γ")
    dense_gamma2: int = int_field(21, high=10001)
    phase_grid: int = int_field(9, high=1001)  # phase_grid² cells' worth of points
    tiny_layers: tuple[int, ...] = ints_field((1, 2, 3), high=6, why="depths")
    tiny_seeds: int = int_field(1, high=1000)
    tiny_width: int = int_field(16)
    tiny_d: int = int_field(4, low=4)
    tiny_n_tokens: int = int_field(20)
    tiny_steps: int = int_field(1500)
    tiny_ft_steps: int = int_field(300)
    tiny_batch: int = int_field(128)
    tiny_lr: float = scale_field(1e-3)
    tiny_gamma1: float = number_field(1.0, low=-1, high=1, why="an overlap γ")
    tiny_gamma2: tuple[float, ...] = numbers_field((-0.75, 0.0, 0.75), low=-1, high=1, why="overlaps γ")
    tiny_thetas_deg: tuple[float, ...] = (0, 30, 60, 90)
    tiny_eval: int = int_field(4000)
    minilm: bool = True
    minilm_layer: int = int_field(5, low=0, high=5, why="0: embeddings; layers after it see rotated states")
    minilm_thetas_deg: tuple[float, ...] = (0, 30, 60, 90, 180)
    minilm_steps: int = int_field(300)
    minilm_ft_steps: int = int_field(150)
    minilm_domains: tuple[str, ...] = choices_field(DOMAIN_NAMES[:6], DOMAIN_NAMES, distinct=True, at_least=2)
    minilm_gap_planes: int = int_field(48, high=192, why="MiniLM's width is 384")
    minilm_gap_thetas_deg: tuple[float, ...] = tuple(range(0, 360, 15))

    def __post_init__(self) -> None:
        if 2 * self.K > self.d:
            raise ConfigError("d", self.d, f">= 2K = {2 * self.K} (rotation out of span V needs K more directions)")


_LONG = dict(
    ood_prompts=50000,
    phase_grid=13,
    dense_gamma2=41,
    thetas_deg=tuple(range(0, 91, 5)),
    tiny_steps=4000,
    tiny_ft_steps=600,
    tiny_gamma2=(-0.9, -0.75, -0.2, 0.0, 0.5, 0.75, 0.95),
    tiny_thetas_deg=(0, 15, 30, 45, 60, 75, 90),
    tiny_eval=8000,
    minilm_thetas_deg=(0, 15, 30, 45, 60, 90, 120, 150, 180),
    minilm_domains=DOMAIN_NAMES,
)

# Sized once from the reference shipped 2026-12-01 (10 SGD runs, 15 table points) used as a pilot, its spread and
# not its verdicts (issue 38; claims_common.ALPHA_STAR_MIN_RUNS, claims_common.FORGET_F_MIN_POINTS, docs/pilot_minimums.py): 34 SGD
# pre-trainings (1 + sgd_repeats) for alpha-star-vs-gd, and at least 54 (γ1, γ2) table points for forget-F-vs-gd:
# γ2 from -0.9 to 0.8 in steps of 0.1, and 0.95, with the paper's -0.9, -0.2, 0, 0.5, 0.95 among them (3 × 19 =
# 57 points). The tiny transformers: 5 per depth, so the tiny effect claims have an SE across trained networks (the
# references at seeds 0 and 1, one network per depth, gave tiny-depth-amplifies opposite signs, each with a tight SE
# over its evaluation prompts). The reference that judges them is a fresh run, judged alone.
# Sized again (issue 38) from that fresh reference (seed 2, shipped 2026-12-07, 5 networks per depth) used as a
# pilot, its spread and not its verdicts: `iclab plan` on it with --budget 4h picks tiny_seeds = 29, which
# tiny-depth-amplifies needs at its spread (tiny-forgets-anti about 6, tiny-bwt-orthogonal about 12); about
# 2 CPU-hours at its recorded CPU time. The next reference is again a fresh run with a new seed, judged alone.
# That reference (seed 3, shipped 2026-12-07, 29 networks per depth) is in turn the pilot: its row-level
# calibration fixed minimums of 41 and 42 networks for tiny-bwt-orthogonal and tiny-depth-amplifies
# (claims_common), and `iclab plan` on it with --budget 4h picks tiny_seeds = 42, about 2.9 CPU-hours.
# That fresh reference (seed 4, 42 networks per depth) met both minimums, and its own row-level calibration found
# both claims over the line again (8.1 % and 12.7 % at no effect: the per-network F is skewed), so their minimums
# were computed again from it (claims_common.PILOT_TINY_2): 62 and 111 networks. They gate this reference too, so
# neither is judged at 42. `iclab plan` on it with --budget 4h picks tiny_seeds = 62 (tiny-bwt-orthogonal's minimum,
# about 2.9 CPU-hours; tiny-depth-amplifies' 111 is about 5.2), the preset's size now: chosen for the minimum a valid
# test needs, not for an interval to clear (a claim re-sized after every run that leaves it undecided would be judged
# until it clears). The next reference is again a fresh run with a new seed, judged alone.
_PAPER_GAMMA2 = (*(round(-0.9 + 0.1 * i, 1) for i in range(18)), 0.95)

PRESETS = {
    "quick": OodConfig(
        ood_prompts=8000, phase_grid=7, dense_gamma2=11, tiny_steps=800, tiny_ft_steps=200, tiny_eval=3000
    ),
    "full": OodConfig(**_LONG, sgd_repeats=5, ft_repeats=5),
    # the paper's synthetic settings (K = 4, d = 8, ε/K = 0.0025, c = 1/2, θ = π/6 and π/3, K = 2 table with γ1 = 1,
    # tiny transformers of width 16 with 1-3 layers and γ2 = -0.75 / 0 / 0.75; second-hand, docs/papers/ood.md §5.7),
    # with SGD runs per quantity that has a spread, all twelve sentence domains, and the long budgets of full
    "paper": OodConfig(**_LONG, sgd_repeats=33, ft_repeats=9, gamma2_table=_PAPER_GAMMA2, tiny_seeds=62),
}
