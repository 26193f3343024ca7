r"""Orthonormal-feature prompts of arXiv:2609.36448 (data model of arXiv:2310.05249) and their OOD shifts
(docs/papers/ood.md §3.2–3.3).

A prompt holds ``N`` tokens :math:`x_i` and a query :math:`x_q`, each drawn i.i.d. from the columns of a
feature matrix :math:`V=[v_1..v_K]\in\mathbb R^{d\times K}` with probabilities :math:`p_k` (features repeat
within a prompt), labels :math:`y_i=w^\top x_i`, :math:`w\sim\mathcal N(0,I_d)` fresh per prompt (note §3.2).
OOD feature sets U (note §3.3): rotation out of span V by θ, :math:`u_k=\cos\theta\,v_k+\sin\theta\,v_k^\perp`;
per-feature overlaps :math:`\gamma_k=\langle v_k,u_k\rangle`; any alignment :math:`M=V^\top U`; an orthogonal
subspace; features sharing one projection on :math:`\bar v`; queries fixed at :math:`\bar v`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Sequence

import torch

from iclab.config import check_choice, check_int
from iclab.errors import ConfigError

__all__ = [
    "FeatureBatch",
    "FeaturePrompts",
    "feature_basis",
    "rotated_features",
    "overlap_features",
    "aligned_features",
    "in_span_rotation",
    "shared_projection_features",
    "mean_feature",
    "check_gammas",
    "check_orthonormal",
]

_TOL = 1e-6


@dataclass
class FeatureBatch:
    """Prompts of orthonormal features. ``feat``/``qfeat`` index the feature of each token/query (-1: none)."""

    x: torch.Tensor  # (B, N, d) tokens
    y: torch.Tensor  # (B, N) labels w^T x_i
    xq: torch.Tensor  # (B, d) query
    yq: torch.Tensor  # (B,) target w^T x_q
    w: torch.Tensor  # (B, d) task vectors
    feat: torch.Tensor  # (B, N) long
    qfeat: torch.Tensor  # (B,) long

    def to(self, device) -> "FeatureBatch":
        return FeatureBatch(*(getattr(self, f).to(device) for f in self.__dataclass_fields__))

    def index(self, idx) -> "FeatureBatch":
        return FeatureBatch(*(getattr(self, f)[idx] for f in self.__dataclass_fields__))

    def __len__(self) -> int:
        return self.x.shape[0]


def _as_matrix(name: str, features) -> torch.Tensor:
    t = torch.as_tensor(features, dtype=torch.float64)
    if t.ndim != 2 or not torch.isfinite(t).all():
        raise ConfigError(name, tuple(t.shape), "a finite (d, K) matrix whose columns are the features")
    return t


def check_orthonormal(name: str, features: torch.Tensor, tol: float = _TOL) -> None:
    """Raise ConfigError unless ``features`` (d, K) has K <= d orthonormal columns."""
    d, K = features.shape
    if K > d:
        raise ConfigError("K", K, f"at most d={d} orthonormal features in R^{d}")
    err = float((features.T @ features - torch.eye(K, dtype=features.dtype)).abs().max())
    if err > tol:
        raise ConfigError(name, f"(d={d}, K={K}) matrix with max|V^T V - I|={err:.2g}", "orthonormal columns")


def check_gammas(gammas: Sequence[float] | torch.Tensor) -> torch.Tensor:
    """Overlaps γ_k as a float64 tensor; ConfigError unless every γ_k is in [-1, 1]."""
    g = torch.as_tensor(gammas, dtype=torch.float64).reshape(-1)
    if g.numel() == 0 or not torch.isfinite(g).all() or bool((g.abs() > 1).any()):
        raise ConfigError("gamma", tuple(round(float(v), 6) for v in g), "overlaps gamma_k in [-1, 1]")
    return g


@dataclass(frozen=True, eq=False)
class FeaturePrompts:
    r"""Prompt distribution over the feature columns of ``features`` (docs/papers/ood.md §3.2).

    Fields:
        features: (d, K) matrix whose columns are the token features (V for training, U for OOD).
        n_tokens: context length N.
        probs: feature probabilities p_k (None: balanced 1/K).
        counts: ``"multinomial"`` (tokens i.i.d., the paper's setting) or ``"exact"`` (each feature exactly
            N p_k times in random order; N p_k must be integers; used to make collapse cases exact).
        query_vector: (d,) if set, every query is this fixed vector (e.g. :math:`\bar v`), ``qfeat = -1``.
        orthonormal: require orthonormal features (True); OOD sets that share a projection on
            :math:`\bar v` (docs/papers/ood.md §4.7) are unit-norm but not orthogonal and pass False.
    """

    features: torch.Tensor
    n_tokens: int = 40
    probs: tuple[float, ...] | None = None
    counts: str = "multinomial"
    query_vector: torch.Tensor | None = None
    orthonormal: bool = True

    def __post_init__(self) -> None:
        feats = _as_matrix("features", self.features)
        object.__setattr__(self, "features", feats)
        d, K = feats.shape
        if self.orthonormal:
            check_orthonormal("features", feats)
        elif bool(((feats.norm(dim=0) - 1).abs() > _TOL).any()):
            raise ConfigError("features", "columns of norm != 1", "unit-norm columns")
        check_int("n_tokens", self.n_tokens, 1)
        check_choice("counts", self.counts, ("multinomial", "exact"))
        if self.probs is not None:
            p = torch.as_tensor(self.probs, dtype=torch.float64)
            if p.shape != (K,) or bool((p < 0).any()) or abs(float(p.sum()) - 1) > 1e-9:
                raise ConfigError("probs", self.probs, f"{K} non-negative probabilities summing to 1")
        if self.counts == "exact":
            n = self.n_tokens * self.p
            if bool(((n - n.round()).abs() > 1e-9).any()):
                raise ConfigError("n_tokens", self.n_tokens, f"a multiple making N*p_k integers (p={self.p.tolist()})")
        if self.query_vector is not None:
            q = torch.as_tensor(self.query_vector, dtype=torch.float64).reshape(-1)
            if q.shape != (d,):
                raise ConfigError("query_vector", tuple(q.shape), f"a vector of length d={d}")
            object.__setattr__(self, "query_vector", q)

    @property
    def d(self) -> int:
        return self.features.shape[0]

    @property
    def K(self) -> int:
        return self.features.shape[1]

    @property
    def p(self) -> torch.Tensor:
        """Feature probabilities, shape (K,)."""
        if self.probs is None:
            return torch.full((self.K,), 1.0 / self.K, dtype=torch.float64)
        return torch.as_tensor(self.probs, dtype=torch.float64)

    def with_features(self, features, orthonormal: bool = True) -> "FeaturePrompts":
        """The same sampling scheme over another feature set (an OOD shift)."""
        return replace(self, features=features, orthonormal=orthonormal)

    def sample(self, batch: int, generator: torch.Generator | None = None) -> FeatureBatch:
        B, N, K = batch, self.n_tokens, self.K
        p = self.p
        if self.counts == "multinomial":
            feat = torch.multinomial(p.expand(B, K), N, replacement=True, generator=generator)  # (B, N)
        else:
            base = torch.repeat_interleave(torch.arange(K), (N * p).round().long())  # (N,)
            perm = torch.rand(B, N, generator=generator).argsort(dim=1)  # (B, N)
            feat = base[perm]  # (B, N)
        w = torch.randn(B, self.d, generator=generator, dtype=torch.float64)  # (B, d)
        x = self.features.T[feat]  # (B, N, d)
        if self.query_vector is None:
            qfeat = torch.multinomial(p, B, replacement=True, generator=generator)  # (B,)
            xq = self.features.T[qfeat]  # (B, d)
        else:
            qfeat = torch.full((B,), -1, dtype=torch.long)
            xq = self.query_vector.expand(B, -1).clone()  # (B, d)
        y = torch.einsum("bnd,bd->bn", x, w)  # (B, N)
        yq = (xq * w).sum(-1)  # (B,)
        return FeatureBatch(x, y, xq, yq, w, feat, qfeat)


def feature_basis(d: int, K: int, generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """A random orthonormal basis of R^d split as ``(V (d, K), V_perp (d, d-K))`` (QR of a Gaussian,
    docs/papers/ood.md §5.1)."""
    check_int("d", d, 1)
    check_int("K", K, 1)
    if K > d:
        raise ConfigError("K", K, f"at most d={d} orthonormal features in R^{d}")
    q, r = torch.linalg.qr(torch.randn(d, d, generator=generator, dtype=torch.float64))
    q = q * torch.sign(torch.diagonal(r))  # (d, d) unique QR
    return q[:, :K].contiguous(), q[:, K:].contiguous()


def _need_complement(V: torch.Tensor, V_perp: torch.Tensor, k: int) -> None:
    check_orthonormal("features", V)
    if V_perp.shape[1] < k:
        raise ConfigError("d", V.shape[0], f">= {V.shape[1] + k} (needs {k} directions orthogonal to span V)")
    check_orthonormal("complement", torch.cat([V, V_perp], dim=1))


def overlap_features(V: torch.Tensor, V_perp: torch.Tensor, gammas: Sequence[float] | torch.Tensor) -> torch.Tensor:
    r""":math:`u_k=\gamma_k v_k+\sqrt{1-\gamma_k^2}\,v_k^\perp` so that :math:`M=V^\top U=\mathrm{diag}(\gamma)`
    (the paper's fine-tuning sets, docs/papers/ood.md §3.3). Needs d >= 2K."""
    g = check_gammas(gammas)
    V, V_perp = _as_matrix("features", V), _as_matrix("complement", V_perp)
    if g.numel() != V.shape[1]:
        raise ConfigError("gamma", tuple(g.tolist()), f"{V.shape[1]} overlaps (one per feature)")
    _need_complement(V, V_perp, V.shape[1])
    return V * g + V_perp[:, : V.shape[1]] * torch.sqrt(1 - g**2)  # (d, K)


def rotated_features(V: torch.Tensor, V_perp: torch.Tensor, theta: float) -> torch.Tensor:
    r"""Out-of-span rotation by θ (the paper's synthetic shift, docs/papers/ood.md §3.3):
    :math:`U=V\cos\theta+V^\perp_{:K}\sin\theta`, M = cos θ I."""
    K = _as_matrix("features", V).shape[1]
    return overlap_features(V, V_perp, [math.cos(theta)] * K)


def aligned_features(V: torch.Tensor, V_perp: torch.Tensor, M: torch.Tensor) -> torch.Tensor:
    r"""Orthonormal U with a given alignment :math:`M=V^\top U` (K x K, ‖M‖₂ <= 1):
    :math:`U=VM+V^\perp_{:K}(I-M^\top M)^{1/2}` (docs/papers/ood.md §3.3)."""
    V, V_perp = _as_matrix("features", V), _as_matrix("complement", V_perp)
    K = V.shape[1]
    M = torch.as_tensor(M, dtype=torch.float64)
    if M.shape != (K, K) or not torch.isfinite(M).all():
        raise ConfigError("M", tuple(M.shape), f"a finite ({K}, {K}) alignment matrix")
    evals, evecs = torch.linalg.eigh(torch.eye(K, dtype=torch.float64) - M.T @ M)
    if float(evals.min()) < -1e-9:
        raise ConfigError(
            "M",
            f"spectral norm {float(torch.linalg.matrix_norm(M, 2)):.4g}",
            "an alignment with spectral norm <= 1 (singular values are cosines)",
        )
    root = evecs @ torch.diag(evals.clamp(min=0).sqrt()) @ evecs.T  # (K, K)
    if float(root.abs().max()) < 1e-12:  # M orthogonal: U stays in span V
        return V @ M
    _need_complement(V, V_perp, K)
    return V @ M + V_perp[:, :K] @ root  # (d, K)


def in_span_rotation(V: torch.Tensor, i: int, j: int, theta: float) -> torch.Tensor:
    """Rotate the (v_i, v_j) plane by θ inside span V (docs/papers/ood.md §3.3): U = V R, M = R (Givens)."""
    V = _as_matrix("features", V)
    K = V.shape[1]
    for name, idx in (("i", i), ("j", j)):
        if not isinstance(idx, int) or not 0 <= idx < K:
            raise ConfigError(name, idx, f"a feature index in 0..{K - 1}")
    if i == j:
        raise ConfigError("j", j, f"a feature index other than i={i} (a rotation needs a plane)")
    R = torch.eye(K, dtype=torch.float64)
    c, s = math.cos(theta), math.sin(theta)
    R[i, i], R[j, j], R[i, j], R[j, i] = c, c, -s, s
    return V @ R


def mean_feature(V: torch.Tensor) -> torch.Tensor:
    r""":math:`\bar v=\frac1K\sum_k v_k`, shape (d,) (norm 1/√K for orthonormal V)."""
    return _as_matrix("features", V).mean(dim=1)


def shared_projection_features(V: torch.Tensor, V_perp: torch.Tensor, a: float) -> torch.Tensor:
    r"""Collapse case C M = 0 (docs/papers/ood.md §4.7): :math:`u_k=a\,\bar v/\|\bar v\|+\sqrt{1-a^2}\,v_k^\perp`.
    Every u_k has the same projection on span V; the u_k are unit-norm with ⟨u_m,u_k⟩ = a² (not orthonormal)."""
    a = float(check_gammas([a])[0])
    V, V_perp = _as_matrix("features", V), _as_matrix("complement", V_perp)
    _need_complement(V, V_perp, V.shape[1])
    vbar = mean_feature(V)
    return a * (vbar / vbar.norm())[:, None] + math.sqrt(1 - a * a) * V_perp[:, : V.shape[1]]  # (d, K)
