r"""Gaussian in-context linear-regression prompts and their distribution shifts: the data model of arXiv:2511.01292
(Demir & Doğan, Eq. 2; docs/papers/temperature.md §3.1).

A prompt holds ``n`` labelled pairs and one query (``l = n + 1`` rows):
:math:`\mathbf x_i\sim\mathcal N(\boldsymbol\mu_x,\boldsymbol\Sigma_x)`,
:math:`\mathbf w\sim\mathcal N(\boldsymbol\mu_w,\boldsymbol\Sigma_w)` (one task per prompt, shared by all
rows), :math:`y_i=\mathbf w^\top\mathbf x_i+\epsilon_i`, :math:`\epsilon_i\sim\mathcal N(0,\sigma^2)`.
The query's true noisy label is kept as the *target* ``y[:, -1]``; models must not read it — the token matrix
of Eq. 3 (:func:`token_matrix`) puts 0 in the query's label slot. Shifts (the paper's Cases I–III, §4.2;
docs/papers/temperature.md §3.8) are constructors returning new distributions:
:meth:`GaussianRegression.with_input_mean`, ``with_input_cov``, ``with_task``, ``with_noise``, ``with_n``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from iclab.errors import ConfigError

__all__ = ["GaussianRegression", "RegressionBatch", "token_matrix", "mean_along_ones", "as_covariance", "as_mean"]


@dataclass
class RegressionBatch:
    """A batch of regression prompts.

    Fields:
        x: ``(B, n+1, d)`` inputs; the last row is the query.
        y: ``(B, n+1)`` noisy labels; ``y[:, -1]`` is the query's true label (the target, hidden from models).
        w: ``(B, d)`` the task vector of each prompt.
    """

    x: torch.Tensor  # (B, l, d)
    y: torch.Tensor  # (B, l)
    w: torch.Tensor  # (B, d)

    def to(self, device: str | torch.device) -> "RegressionBatch":
        return RegressionBatch(self.x.to(device), self.y.to(device), self.w.to(device))

    def index(self, idx: Any) -> "RegressionBatch":
        return RegressionBatch(self.x[idx], self.y[idx], self.w[idx])

    def double(self) -> "RegressionBatch":
        """The batch in float64 (drawn in float32 for speed, computed in float64)."""
        return RegressionBatch(self.x.double(), self.y.double(), self.w.double())

    def __len__(self) -> int:
        return self.x.shape[0]

    @property
    def context_x(self) -> torch.Tensor:  # (B, n, d)
        return self.x[:, :-1]

    @property
    def context_y(self) -> torch.Tensor:  # (B, n)
        return self.y[:, :-1]

    @property
    def query_x(self) -> torch.Tensor:  # (B, d)
        return self.x[:, -1]

    @property
    def target(self) -> torch.Tensor:  # (B,)
        return self.y[:, -1]


def token_matrix(batch: RegressionBatch) -> torch.Tensor:
    """Token matrix of Eq. 3: ``Z = [[x_1 … x_l], [y_1 … y_{l-1}, 0]]`` of shape ``(B, d+1, l)``."""
    y = batch.y.clone()  # (B, l)
    y[:, -1] = 0.0
    return torch.cat([batch.x.transpose(1, 2), y.unsqueeze(1)], dim=1)  # (B, d+1, l)


def mean_along_ones(d: int, norm: float) -> np.ndarray | None:
    r"""A mean vector of Euclidean norm ``norm`` along :math:`(1,\dots,1)/\sqrt d`, ``(d,)``; None when ``norm`` is 0.

    The direction of every mean shift of the ``temperature`` experiment, e.g. :math:`\boldsymbol\mu_w=\mathbf 1/\sqrt d`
    for the task shift (docs/papers/temperature.md §5.1)."""
    return None if norm == 0 else np.full(d, norm / math.sqrt(d))


def as_mean(field: str, value: Any, d: int) -> np.ndarray:
    """A mean vector ``(d,)`` from a user value: ``None`` -> 0; a float -> that value in every coordinate; a ``(d,)``
    array/tensor as is. Anything else is a ConfigError naming ``field``."""
    if value is None:
        return np.zeros(d)
    arr = np.asarray(value.detach().cpu() if isinstance(value, torch.Tensor) else value, dtype=float)
    if arr.ndim == 0:
        arr = np.full(d, float(arr))
    if arr.shape != (d,):
        raise ConfigError(field, f"shape {arr.shape}", f"None, a float or a vector of shape ({d},)")
    if not np.all(np.isfinite(arr)):
        raise ConfigError(field, "non-finite entries", "finite values")
    return arr


def as_covariance(field: str, value: Any, d: int) -> np.ndarray:
    """A covariance ``(d, d)`` from a user value: ``None`` -> I; a float c -> c·I; a ``(d,)`` vector -> diag; a ``(d, d)``
    symmetric positive-definite matrix. Anything else is a ConfigError naming ``field``."""
    if value is None:
        return np.eye(d)
    arr = np.asarray(value.detach().cpu() if isinstance(value, torch.Tensor) else value, dtype=float)
    if arr.ndim == 0:
        arr = np.full(d, float(arr))
    if arr.ndim == 1:
        if arr.shape != (d,):
            raise ConfigError(field, f"shape {arr.shape}", f"None, a float, a ({d},) diagonal or a ({d}, {d}) matrix")
        arr = np.diag(arr)
    if arr.shape != (d, d):
        raise ConfigError(field, f"shape {arr.shape}", f"None, a float, a ({d},) diagonal or a ({d}, {d}) matrix")
    if not np.all(np.isfinite(arr)) or not np.allclose(arr, arr.T, rtol=1e-10, atol=1e-12):
        raise ConfigError(field, "a non-symmetric or non-finite matrix", "a symmetric positive-definite matrix")
    if np.linalg.eigvalsh(arr).min() <= 0:
        raise ConfigError(
            field,
            f"min eigenvalue {np.linalg.eigvalsh(arr).min():.3g}",
            "a positive-definite covariance (all eigenvalues > 0)",
        )
    return arr


@dataclass(frozen=True, eq=False)
class GaussianRegression:
    """Gaussian in-context regression prompts (Eq. 2) with ``n`` context pairs and one query.

    Fields:
        d: input dimension.
        n: context pairs; every prompt has ``l = n + 1`` rows including the query.
        mu_x, mu_w: means of x and w — ``None`` (0), a float (that value in every coordinate) or a ``(d,)`` vector.
        cov_x, cov_w: covariances — ``None`` (I), a float c (c·I), a ``(d,)`` diagonal or a ``(d, d)`` PD matrix.
        sigma: label-noise standard deviation (>= 0).
        dtype: floating dtype of sampled tensors (float64 by default, for theory checks).

    The normalised NumPy moments are available as :meth:`moments` (for ``iclab.theory``).
    """

    d: int
    n: int
    mu_x: Any = None
    cov_x: Any = None
    mu_w: Any = None
    cov_w: Any = None
    sigma: float = 0.0
    dtype: torch.dtype = torch.float64

    def __post_init__(self) -> None:
        for name, low in (("d", 1), ("n", 0)):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < low:
                raise ConfigError(name, v, f"an integer >= {low}")
        if (
            not isinstance(self.sigma, (int, float, np.floating))
            or isinstance(self.sigma, bool)
            or not np.isfinite(self.sigma)
            or self.sigma < 0
        ):
            raise ConfigError("sigma", self.sigma, "a finite noise level >= 0")
        if self.dtype not in (torch.float32, torch.float64):
            raise ConfigError("dtype", self.dtype, "torch.float32 or torch.float64")
        d = int(self.d)
        m = {
            "mu_x": as_mean("mu_x", self.mu_x, d),
            "mu_w": as_mean("mu_w", self.mu_w, d),
            "cov_x": as_covariance("cov_x", self.cov_x, d),
            "cov_w": as_covariance("cov_w", self.cov_w, d),
        }
        object.__setattr__(self, "_moments", m)
        chol = {k: np.linalg.cholesky(m[k]) for k in ("cov_x", "cov_w")}
        object.__setattr__(self, "_chol", chol)
        # a diagonal factor scales each coordinate: g @ L.T is g * diag(L) exactly (the other products are zeros)
        object.__setattr__(
            self, "_diagonal", {k: bool(np.count_nonzero(c - np.diag(np.diag(c))) == 0) for k, c in chol.items()}
        )

    @property
    def l(self) -> int:  # noqa: E743 - the paper's name
        """Columns per prompt including the query, ``n + 1``."""
        return int(self.n) + 1

    def moments(self) -> dict[str, np.ndarray | float]:
        """``{"mu_x": (d,), "cov_x": (d,d), "mu_w": (d,), "cov_w": (d,d), "sigma": float}`` as float64 NumPy."""
        m = {k: v.copy() for k, v in self._moments.items()}  # type: ignore[attr-defined]
        m["sigma"] = float(self.sigma)
        return m

    def sample(self, batch: int, generator: torch.Generator | None = None) -> RegressionBatch:
        """Draw ``batch`` prompts (deterministic given the generator); tensors on CPU in ``self.dtype``.

        Normals are drawn directly in ``self.dtype`` (float32 sampling is several times faster, which matters
        when sampling is a large part of a training step); float64 is the default for theory checks. A diagonal
        covariance factor (isotropic prompts) scales the coordinates instead of a matrix product: the same numbers,
        about 5× faster for the inputs."""
        if not isinstance(batch, (int, np.integer)) or batch < 1:
            raise ConfigError("batch", batch, "an integer >= 1")
        d, l, dt = int(self.d), self.l, self.dtype
        mom, chol = self._moments, self._chol  # type: ignore[attr-defined]
        lx, lw = torch.from_numpy(chol["cov_x"]).to(dt), torch.from_numpy(chol["cov_w"]).to(dt)  # (d, d)
        mux, muw = torch.from_numpy(mom["mu_x"]).to(dt), torch.from_numpy(mom["mu_w"]).to(dt)  # (d,)
        gx = torch.randn(batch, l, d, generator=generator, dtype=dt)  # (B, l, d)
        gw = torch.randn(batch, d, generator=generator, dtype=dt)  # (B, d)
        eps = torch.randn(batch, l, generator=generator, dtype=dt)  # (B, l)
        diag = self._diagonal  # type: ignore[attr-defined]
        x = mux + (gx * torch.diagonal(lx) if diag["cov_x"] else gx @ lx.T)  # (B, l, d)
        w = muw + (gw * torch.diagonal(lw) if diag["cov_w"] else gw @ lw.T)  # (B, d)
        y = torch.einsum("bld,bd->bl", x, w) + float(self.sigma) * eps  # (B, l)
        return RegressionBatch(x, y, w)

    # -- shift constructors (Cases I–III of §4.2; docs/papers/temperature.md §3.8) ------------------
    def with_input_mean(self, mu: Any) -> "GaussianRegression":
        """Case I(i): input-mean shift, ``mu_x <- mu``."""
        return dataclasses.replace(self, mu_x=mu)

    def with_input_cov(self, cov: Any) -> "GaussianRegression":
        """Case I(ii): input-covariance shift, ``cov_x <- cov``."""
        return dataclasses.replace(self, cov_x=cov)

    def with_task(self, mu_w: Any = None, cov_w: Any = None) -> "GaussianRegression":
        """Case II: task shift; ``None`` keeps the current value."""
        return dataclasses.replace(
            self, mu_w=self.mu_w if mu_w is None else mu_w, cov_w=self.cov_w if cov_w is None else cov_w
        )

    def with_noise(self, sigma: float) -> "GaussianRegression":
        """Case III: noise shift, ``sigma <- sigma``."""
        return dataclasses.replace(self, sigma=sigma)

    def with_n(self, n: int) -> "GaussianRegression":
        """Another context length (``n`` pairs, ``l = n + 1``)."""
        return dataclasses.replace(self, n=n)

    def __repr__(self) -> str:
        def short(v: Any) -> str:
            return "None" if v is None else (repr(float(v)) if np.ndim(v) == 0 else f"<{np.shape(v)}>")

        return (
            f"GaussianRegression(d={self.d}, n={self.n}, mu_x={short(self.mu_x)}, cov_x={short(self.cov_x)}, "
            f"mu_w={short(self.mu_w)}, cov_w={short(self.cov_w)}, sigma={self.sigma})"
        )
