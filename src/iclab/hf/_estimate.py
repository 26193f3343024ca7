r"""Estimate the attention temperature of a real transformer, for the LLM experiment of arXiv:2511.01292 (§5.2,
Fig. 3), whose rule for it is not published (docs/papers/temperature.md §5.4).

Two estimators, both reported:

* (b) the per-layer **moment rule** — by default the spread rule :math:`\tau_\ell=\sigma_\ell^{\rm shifted}/
  \sigma_\ell^{\rm clean}` of within-row score standard deviations (docs/papers/temperature.md §5.4), which is
  well posed for any sign of the mean score; the Var/mean reading is kept as ``rule="var/mean"``. Both probe the
  pre-softmax scores at the answer-generating query position on clean and on shifted (e.g. noisy-demonstration)
  prompts; Var/mean: with :math:`\rho_\ell = \mathrm{Var}(s)/\mathrm{mean}(s)` pooled
  over heads, rows and keys of layer ℓ, set :math:`\tau_\ell = \rho_\ell^{\rm shifted}/\rho_\ell^{\rm clean}`
  (τ_ℓ = 1 on clean prompts). This mirrors τ_opt = E[r²]/E[y r] of Theorem 4.3 (v0/v1 Theorem 4.7) being a ratio of
  moments (docs/papers/temperature.md §4.4); the exact rule of the paper is unknown, and the Var/mean reading is ill
  posed where the mean score is negative (§6.6). Ratios that are not finite and positive (a mean near 0, signs that
  differ) fall back to 1 and are flagged; the rest are clipped to ``clip``.
* (a) a **grid search** over one global τ (default {0.5, 0.75, 1, 1.25, 1.5, 2, 3}) on a held-out split, scored by a
  user callback ``score(model) -> float`` (higher is better, e.g. exact match).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, Literal, Sequence

import numpy as np

from iclab.config import check_int
from iclab.domain import array, number
from iclab.errors import ConfigError
from iclab.hf._arguments import check_bool
from iclab.hf._probes import ScoreMoments, _check_key_start, _check_positions, probe_prompts
from iclab.hf._prompt_length import check_prompts
from iclab.hf._tau_setting import model_shape
from iclab.hf._temperature import ModelT, with_temperature

if TYPE_CHECKING:  # annotations only: importing iclab.hf does not import transformers
    import torch
    from transformers import PreTrainedTokenizerBase

__all__ = [
    "TauEstimate",
    "DEFAULT_TAU_GRID",
    "moment_rule_tau",
    "spread_rule_tau",
    "best_tau_index",
    "grid_search_tau",
    "estimate_tau",
]

DEFAULT_TAU_GRID = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0)


@dataclasses.dataclass
class TauEstimate:
    """Both estimates. ``layer_tau (L,)``: moment rule after fallback/clipping; ``ratio (L,)``: raw ρ ratios;
    ``valid (L,)``: ratio finite and > 0; ``rho_clean``/``rho_shifted (L,)``; ``grid``/``grid_scores``: the grid
    search (empty without a score callback); ``best_tau``: its argmax (None without); ``moment_score``: the score of
    the per-layer moment τ (None without a callback)."""

    layer_tau: np.ndarray
    ratio: np.ndarray
    valid: np.ndarray
    rho_clean: np.ndarray
    rho_shifted: np.ndarray
    grid: tuple[float, ...] = ()
    grid_scores: tuple[float, ...] = ()
    best_tau: float | None = None
    moment_score: float | None = None

    def summary(self) -> dict[str, Any]:
        """JSON-able summary."""
        return {
            "layer_tau": self.layer_tau.tolist(),
            "ratio": self.ratio.tolist(),
            "valid": self.valid.tolist(),
            "rho_clean": self.rho_clean.tolist(),
            "rho_shifted": self.rho_shifted.tolist(),
            "mean_layer_tau": float(np.mean(self.layer_tau)),
            "grid": list(self.grid),
            "grid_scores": list(self.grid_scores),
            "best_tau": self.best_tau,
            "moment_score": self.moment_score,
        }


def moment_rule_tau(
    clean: ScoreMoments, shifted: ScoreMoments, clip: tuple[float, float] = (0.25, 8.0)
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-layer τ_ℓ = ρ_ℓ^shifted / ρ_ℓ^clean, the Var/mean reading of the moment rule (docs/papers/temperature.md
    §5.4, §6.6); returns ``(tau (L,), ratio (L,), valid (L,))``.

    Arguments: ``clean``, ``shifted`` :class:`ScoreMoments` of one model, with one layer count L; ``clip`` a pair
    ``(lo, hi)`` of finite numbers (not booleans) with 0 < lo <= 1 <= hi."""
    clip = _check_moments(clean, shifted, clip)
    return _ratio_tau(shifted.rho(), clean.rho(), clip)


def spread_rule_tau(
    clean: ScoreMoments, shifted: ScoreMoments, clip: tuple[float, float] = (0.25, 8.0)
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Per-layer :math:`\tau_\ell = \sigma_\ell^{\rm shifted} / \sigma_\ell^{\rm clean}`, σ the within-row standard
    deviation of the pre-softmax scores (docs/papers/temperature.md §5.4): the temperature that gives the shifted
    prompts' logits the spread of the clean ones. Well posed for any sign of the mean score (softmax ignores a
    shift); returns ``(tau (L,), ratio (L,), valid (L,))`` like :func:`moment_rule_tau`.

    Arguments: ``clean``, ``shifted`` :class:`ScoreMoments` of one model, with one layer count L; ``clip`` a pair
    ``(lo, hi)`` of finite numbers (not booleans) with 0 < lo <= 1 <= hi."""
    clip = _check_moments(clean, shifted, clip)
    return _ratio_tau(shifted.layer_row_sd(), clean.layer_row_sd(), clip)


def _check_clip(clip) -> tuple[float, float]:
    """``clip`` as two floats ``(lo, hi)``: finite numbers with 0 < lo <= 1 <= hi."""
    allowed = "a pair (lo, hi) of finite numbers with 0 < lo <= 1 <= hi"
    if isinstance(clip, (str, bytes)) or not isinstance(clip, (Sequence, np.ndarray)) or len(clip) != 2:
        raise ConfigError("clip", clip, allowed)
    try:
        lo, hi = number("clip", clip[0], above=0, high=1), number("clip", clip[1], low=1)
    except ConfigError:
        raise ConfigError("clip", clip, allowed) from None
    return lo, hi


def _check_moments(clean, shifted, clip) -> tuple[float, float]:
    """The checked ``clip``, after ``clean`` and ``shifted`` are :class:`ScoreMoments` with one layer count."""
    for name, m in (("clean", clean), ("shifted", shifted)):
        if not isinstance(m, ScoreMoments):
            raise ConfigError(name, f"<{type(m).__name__}>", "the ScoreMoments of a probe (probe_prompts)")
    L, L2 = len(np.atleast_1d(clean.layer_mean)), len(np.atleast_1d(shifted.layer_mean))
    if L != L2:
        raise ConfigError("shifted", f"moments of {L2} layers", f"the layer count of clean ({L}): one model")
    return _check_clip(clip)


def _ratio_tau(
    shifted: np.ndarray, clean: np.ndarray, clip: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The one fallback-and-clip rule of both moment rules: ``ratio = shifted / clean (L,)``, ``valid`` where it is
    finite and > 0, ``tau`` = the ratio clipped to ``clip`` (checked) where valid, else 1."""
    lo, hi = clip
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = shifted / clean  # (L,)
    valid = np.isfinite(ratio) & (ratio > 0)
    tau = np.where(valid, np.clip(np.where(valid, ratio, 1.0), lo, hi), 1.0)
    return tau, ratio, valid


def best_tau_index(grid: Sequence[float], scores: Sequence[float]) -> int:
    """Index of the highest score; ties go to the τ closest to 1 (the stock model), in log scale.

    Arguments: ``grid`` a non-empty 1-D sequence of finite numbers > 0 (temperatures; not booleans); ``scores`` finite
    numbers of the same shape, one per temperature."""
    g = array("grid", grid, above=0, why="temperatures")
    s = array("scores", scores, why="one score per temperature")
    if g.ndim != 1 or s.shape != g.shape:
        raise ConfigError("grid/scores", (g.shape, s.shape), "a non-empty grid with one score per temperature")
    return max(range(len(g)), key=lambda i: (s[i], -abs(np.log(g[i]))))


def grid_search_tau(
    model: ModelT, score: Callable[[ModelT], float], grid: Sequence[float] = DEFAULT_TAU_GRID, progress: bool = False
) -> tuple[float, list[float]]:
    """Global τ maximising ``score(model)`` (evaluated under :func:`with_temperature`); returns ``(best, scores)``.
    Ties go to the τ closest to 1 (the stock model).

    Arguments: ``grid`` a non-empty 1-D sequence of finite numbers > 0 (not booleans or strings) and ``score`` a
    callable ``score(model) -> float`` (higher is better; what it returns is its own), both checked first; ``model`` a
    Hugging Face model :func:`~iclab.hf.set_temperature` takes (checked at the first temperature); ``progress`` a bool
    (a tqdm bar)."""
    from tqdm.auto import tqdm

    grid, score = _check_grid(grid), _check_score(score)
    check_bool("progress", progress)
    scores = []
    for t in tqdm(grid, disable=not progress, desc="tau grid", unit="tau"):
        with with_temperature(model, t):
            scores.append(float(score(model)))
    return grid[best_tau_index(grid, scores)], scores


def _check_grid(grid) -> list[float]:
    """``grid`` as a list of floats: a non-empty 1-D sequence of finite temperatures > 0, no booleans or strings."""
    allowed = "a non-empty list of finite temperatures > 0 (numbers, not booleans or strings)"
    if isinstance(grid, (str, bytes)) or not isinstance(grid, (Sequence, np.ndarray)):
        raise ConfigError("grid", grid, allowed)
    if any(isinstance(t, (bool, np.bool_)) for t in np.asarray(grid, dtype=object).reshape(-1)):
        raise ConfigError("grid", grid, allowed)
    try:
        return [float(t) for t in array("grid", grid, ndim=1, above=0, why="temperatures")]
    except ConfigError:
        raise ConfigError("grid", grid, allowed) from None


def _check_score(score):
    """``score`` unchanged: a callable ``score(model) -> float``."""
    if not callable(score):
        raise ConfigError("score", score, "a callable score(model) -> float, higher is better")
    return score


def estimate_tau(
    model: ModelT,
    tokenizer: PreTrainedTokenizerBase,
    clean_prompts: Sequence[str],
    shifted_prompts: Sequence[str],
    *,
    score: Callable[[ModelT], float] | None = None,
    grid: Sequence[float] = DEFAULT_TAU_GRID,
    positions: Literal["last"] | int | Sequence[int] | torch.Tensor = "last",
    key_start: int = 0,
    batch_size: int = 8,
    clip: tuple[float, float] = (0.25, 8.0),
    progress: bool = False,
    rule: Literal["spread", "var/mean"] = "spread",
) -> TauEstimate:
    """Moment-rule τ per layer from clean vs shifted prompts (``rule="spread"``: :func:`spread_rule_tau`, well posed
    for any sign of the scores; ``"var/mean"``: :func:`moment_rule_tau`), plus (with ``score``) the held-out grid
    search and the score of the moment τ. ``score(model)`` must evaluate on a split disjoint from the probe prompts.

    Arguments: ``rule`` ``"spread"`` or ``"var/mean"``; ``model`` and ``tokenizer`` as :func:`probe_prompts` takes them;
    ``clean_prompts`` and ``shifted_prompts`` non-empty sequences of non-blank strings, each at least one token and at
    most :func:`max_tokens` (:func:`check_prompts`), both checked before the first forward; ``positions``,
    ``key_start``, ``batch_size`` and ``progress`` as :func:`probe_prompts` (``key_start`` against the shortest prompt
    of both sets); ``clip`` a pair ``(lo, hi)`` of finite numbers with 0 < lo <= 1 <= hi; ``score`` None or a callable
    ``score(model) -> float``; ``grid`` as :func:`grid_search_tau` (checked with or without a ``score``). Every
    argument is checked before the first forward pass."""
    if not isinstance(rule, str) or rule not in ("spread", "var/mean"):
        raise ConfigError("rule", rule, "'spread' (τ_ℓ = σ_shifted/σ_clean) or 'var/mean' (ρ ratio)")
    clip, grid = _check_clip(clip), _check_grid(grid)
    if score is not None:
        _check_score(score)
    check_int("batch_size", batch_size, 1)
    check_bool("progress", progress)
    positions = _check_positions(positions)
    model_shape(model)  # a Hugging Face model, else UnsupportedModelError
    for field, prompts in (("clean_prompts", clean_prompts), ("shifted_prompts", shifted_prompts)):
        if isinstance(prompts, (str, bytes)) or not isinstance(prompts, Sequence):
            raise ConfigError(field, prompts, "a non-empty list of prompts")
    clean_counts = check_prompts(model, tokenizer, list(clean_prompts), "clean_prompts")  # before the first forward
    shifted_counts = check_prompts(model, tokenizer, list(shifted_prompts), "shifted_prompts")
    _check_key_start(min(clean_counts + shifted_counts), positions, key_start)
    kw = dict(positions=positions, key_start=key_start, batch_size=batch_size, progress=progress)
    clean = probe_prompts(model, tokenizer, list(clean_prompts), **kw)
    shifted = probe_prompts(model, tokenizer, list(shifted_prompts), **kw)
    tau, ratio, valid = (spread_rule_tau if rule == "spread" else moment_rule_tau)(clean, shifted, clip)
    out = TauEstimate(layer_tau=tau, ratio=ratio, valid=valid, rho_clean=clean.rho(), rho_shifted=shifted.rho())
    if score is not None:
        out.best_tau, scores = grid_search_tau(model, score, grid, progress)
        out.grid, out.grid_scores = tuple(grid), tuple(scores)
        with with_temperature(model, tau):
            out.moment_score = float(score(model))
    return out
