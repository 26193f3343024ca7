r"""One-layer in-context-regression attention with the (V, M) reparametrisation of arXiv:2511.01292 (Demir &
Doğan, Eqs. 1–7; docs/papers/temperature.md §3.2–3.3).

With tokens ``Z`` (Eq. 3, query label slot 0) and :math:`\mathbf M=\mathbf K^\top\mathbf Q`, only four blocks
matter (Eq. 7): :math:`\mathbf v_{21}\in\mathbb R^d, v_{22}` (last row of V) and
:math:`\mathbf M_{11}\in\mathbb R^{d\times d},\mathbf m_{21}\in\mathbb R^d`. The query's scores over the ``l``
keys are :math:`a_i=\mathbf x_i^\top\mathbf M_{11}\mathbf x_l+y_i\mathbf m_{21}^\top\mathbf x_l`, the values
:math:`u_i=\mathbf v_{21}^\top\mathbf x_i+v_{22}y_i`, and :math:`\hat y=\sum_i \mathrm{norm}(\mathbf a)_i\,u_i` with
any normaliser of :mod:`iclab.attention` (``approx_softmax``/``softmax`` with temperature τ, ``linear``).
For ``approx_softmax`` this is the explicit predictor of Eq. 10,
:math:`\hat y=b_{\rm Att}+\tau^{-1}\hat{\mathbf w}_{\rm Att}^\top\mathbf x_l` (:meth:`ICLAttention.decompose`;
derivation in docs/papers/temperature.md §4.2). :meth:`ICLAttention.from_bayes_mimicking` sets the weights of
Lemma 4.1 (v1; Prop. 4.4 in v2), Eq. 11 (docs/papers/temperature.md §3.5).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from iclab.attention import check_tau, normalise
from iclab.data import GaussianRegression
from iclab.errors import ConfigError

__all__ = ["ICLAttention", "bayes_mimicking_weights", "pretraining_covariance"]


def pretraining_covariance(
    train: GaussianRegression,
    m: int,
    generator: torch.Generator | None = None,
    chunk: int = 500,
    centring: str = "global",
    draw_dtype: torch.dtype = torch.float64,
) -> np.ndarray:
    r"""The pretraining covariance :math:`\hat{\boldsymbol\Sigma}=\hat{\mathbf X}^\top\hat{\mathbf X}/(ml)` of
    Eq. 11 from the centred inputs of ``m`` prompts of ``train`` (a GaussianRegression, ``l = n+1`` tokens each),
    accumulated in chunks; ``(d, d)``.

    ``centring="global"`` subtracts the mean of all ``ml`` tokens (E Σ̂ = Σx; this reproduces the independent
    check of docs/papers/temperature.md §4.11); ``"prompt"`` subtracts each prompt's own mean, as the attention's
    C_xx does (E Σ̂ = (1 − 1/l) Σx; docs/papers/temperature.md §4.10). ``draw_dtype=torch.float32`` draws the
    normals in single precision (about 3× faster; they are accumulated in float64)."""
    if not isinstance(m, int) or m < 1:
        raise ConfigError("m", m, "an integer >= 1 (pretraining prompts)")
    if centring not in ("global", "prompt"):
        raise ConfigError("centring", centring, "'global' or 'prompt'")
    d, l = int(train.d), train.l
    mom = train.moments()
    half = torch.from_numpy(np.linalg.cholesky(mom["cov_x"]))  # (d, d)
    acc = torch.zeros(d, d, dtype=torch.float64)
    total = torch.zeros(d, dtype=torch.float64)
    done = 0
    while done < m:  # only the inputs are needed: x = mu_x + g L^T, and centring removes mu_x
        b = min(chunk, m - done)
        g = torch.randn(b, l, d, generator=generator, dtype=draw_dtype).double()  # (b, l, d)
        if centring == "prompt":
            g = g - g.mean(1, keepdim=True)
        g = g.reshape(-1, d)  # (b*l, d)
        acc += g.T @ g
        total += g.sum(0)
        done += b
    mean = total / (m * l)  # (d,): zero for per-prompt centring
    cov = acc / (m * l) - torch.outer(mean, mean)
    return (half @ cov @ half.T).numpy()


def bayes_mimicking_weights(sigma_hat: Any, l: int, sigma: float, mu_w: Any = None, cov_w: Any = None) -> dict:
    r"""Bayes-mimicking weights, Lemma 4.1 (v1; Prop. 4.4 in v2), Eq. 11 of arXiv:2511.01292
    (docs/papers/temperature.md §3.5), with the **train** noise/prior and pretraining covariance Σ̂:
    :math:`\mathbf M_{11}=d(\hat{\boldsymbol\Sigma}+\frac{\sigma^2}{l}\boldsymbol\Sigma_w^{-1})^{-1}`,
    :math:`\mathbf m_{21}=0`, :math:`\mathbf v_{21}=\frac{\sigma^2}{dl}\hat{\boldsymbol\Sigma}^{-1}\boldsymbol\Sigma_w^{-1}\boldsymbol\mu_w`,
    :math:`v_{22}=1/d`. Returns NumPy ``{"M11", "m21", "v21", "v22"}``."""
    from iclab.data import as_covariance, as_mean

    S = as_covariance("sigma_hat", sigma_hat, np.shape(sigma_hat)[0])
    d = S.shape[0]
    mu, cw = as_mean("mu_w", mu_w, d), as_covariance("cov_w", cov_w, d)
    prec = np.linalg.inv(cw)
    M11 = d * np.linalg.inv(S + sigma**2 / l * prec)
    v21 = sigma**2 / (d * l) * np.linalg.solve(S, prec @ mu)
    return {"M11": M11, "m21": np.zeros(d), "v21": v21, "v22": 1.0 / d}


class ICLAttention(nn.Module):
    """One attention layer reading the query's label slot (Eqs. 4–7); ``forward(batch) -> y_hat (B,)``.

    Args:
        d: input dimension.
        attention: normaliser name from the registry (``approx_softmax``, ``softmax``, ``linear``, …).
        tau: inference temperature (ignored — must be 1 — for ``linear``).
        dtype: parameter dtype (float64 for theory checks).
        query_key: whether the query column is also a key (Eq. 5 sums over all ``l`` columns: yes, with label 0;
            docs/papers/temperature.md §4.9).
            ``False`` masks it out, so the statistics run over the ``n`` context pairs only.
    Parameters ``v21 (d,)``, ``v22 ()``, ``M11 (d, d)``, ``m21 (d,)`` are ``nn.Parameter``s (trainable).
    """

    def __init__(
        self,
        d: int,
        attention: str = "approx_softmax",
        tau: float = 1.0,
        dtype: torch.dtype = torch.float64,
        init_scale: float = 0.0,
        generator: torch.Generator | None = None,
        query_key: bool = True,
    ):
        super().__init__()
        if not isinstance(d, int) or d < 1:
            raise ConfigError("d", d, "an integer >= 1")
        from iclab.attention import get_normaliser

        check_tau(tau)
        get_normaliser(attention, tau=float(tau))  # validated now (linear attention accepts only tau = 1)
        self.d, self.attention, self.tau, self.query_key = d, attention, float(tau), bool(query_key)

        def p(*shape):
            return nn.Parameter(init_scale * torch.randn(shape, generator=generator, dtype=dtype) / max(d, 1))

        self.v21, self.v22, self.M11, self.m21 = p(d), p(), p(d, d), p(d)

    @classmethod
    def from_weights(cls, M11: Any, v21: Any, v22: float, m21: Any = None, **kw) -> "ICLAttention":
        """A module holding the given blocks (NumPy or torch)."""
        M = torch.as_tensor(np.asarray(M11), dtype=torch.float64)
        d = M.shape[0]
        if M.shape != (d, d):
            raise ConfigError("M11", f"shape {tuple(M.shape)}", "a square (d, d) matrix")
        mod = cls(d, **kw)
        with torch.no_grad():
            for name, val, shape in (("M11", M11, (d, d)), ("v21", v21, (d,)), ("m21", m21, (d,)), ("v22", v22, ())):
                t = torch.zeros(shape) if val is None else torch.as_tensor(np.asarray(val), dtype=torch.float64)
                if tuple(t.shape) != shape:
                    raise ConfigError(name, f"shape {tuple(t.shape)}", f"shape {shape}")
                getattr(mod, name).copy_(t)
        return mod

    @classmethod
    def from_bayes_mimicking(
        cls,
        train,
        m: int,
        generator: torch.Generator | None = None,
        l: int | None = None,
        centring: str = "global",
        **kw,
    ) -> "ICLAttention":
        """Lemma 4.1 (Eq. 11): Σ̂ from ``m`` pretraining prompts of ``train`` (optionally with ``l`` columns;
        ``centring`` as in :func:`pretraining_covariance`), then :func:`bayes_mimicking_weights` with the train noise
        and task prior; pretraining temperature 1."""
        if l is not None:
            train = train.with_n(l - 1)
        mom = train.moments()
        S = pretraining_covariance(train, m, generator, centring=centring)
        return cls.from_weights(**bayes_mimicking_weights(S, train.l, mom["sigma"], mom["mu_w"], mom["cov_w"]), **kw)

    def weights(self) -> dict[str, np.ndarray | float]:
        """The four blocks as NumPy (for :mod:`iclab.theory.temperature`)."""
        return {k: getattr(self, k).detach().cpu().double().numpy() for k in ("M11", "m21", "v21")} | {
            "v22": float(self.v22.detach())
        }

    def scores_values(self, batch) -> tuple[torch.Tensor, torch.Tensor]:
        """Query scores ``a (B, l)`` and values ``u (B, l)`` (Eq. 10; the query label slot is 0)."""
        x = batch.x.to(self.M11.dtype)  # (B, l, d)
        y = batch.y.to(self.M11.dtype).clone()
        y[:, -1] = 0.0  # (B, l)
        xq = x[:, -1]  # (B, d)
        mq = xq @ self.M11.T  # (B, d): M11 x_l
        a = (x @ mq.unsqueeze(-1)).squeeze(-1) + y * (xq @ self.m21).unsqueeze(-1)  # (B, l)
        u = x @ self.v21 + self.v22 * y  # (B, l)
        return a, u

    def forward(self, batch, tau: float | None = None) -> torch.Tensor:
        r""":math:`\hat y=E_{d+1,l}` (Eq. 5): normalised query scores times values, ``(B,)``."""
        tau = self.tau if tau is None else tau
        a, u = self.scores_values(batch)  # (B, l), (B, l)
        params = {"tau": tau}  # linear attention accepts only tau = 1 (it has no temperature)
        mask = None
        if not self.query_key:
            mask = torch.ones(a.shape[-1], dtype=torch.bool, device=a.device)
            mask[-1] = False  # (l,): the query is not a key
        w = normalise(self.attention, a.unsqueeze(1), mask=mask, **params).squeeze(1)  # (B, l)
        return (w * u).sum(-1)

    def decompose(self, batch) -> tuple[torch.Tensor, torch.Tensor]:
        r"""Explicit predictor of Eq. 10 for ``approx_softmax``: ``(b_Att (B,), w_Att (B, d))`` with
        :math:`\hat y=b_{\rm Att}+\tau^{-1}\hat{\mathbf w}_{\rm Att}^\top\mathbf x_l`,
        :math:`b_{\rm Att}=\mathbf v_{21}^\top\mathbf s_x+v_{22}s_y`,
        :math:`\hat{\mathbf w}_{\rm Att}=\mathbf M_{11}^\top(\mathbf C_{xx}\mathbf v_{21}+v_{22}\mathbf C_{xy})+
        \mathbf m_{21}(\mathbf C_{xy}^\top\mathbf v_{21}+v_{22}C_{yy})`, the statistics centred over all ``l``
        columns (docs/papers/temperature.md §4.2)."""
        if self.attention != "approx_softmax":
            from iclab.errors import UnsupportedModelError

            raise UnsupportedModelError(f"decompose() is the approx_softmax predictor, not {self.attention!r}")
        x = batch.x.to(self.M11.dtype)  # (B, l, d)
        y = batch.y.to(self.M11.dtype).clone()
        y[:, -1] = 0.0  # (B, l)
        if not self.query_key:
            x, y = x[:, :-1], y[:, :-1]
        sx, sy = x.mean(1), y.mean(1)  # (B, d), (B,)
        xc, yc = x - sx.unsqueeze(1), y - sy.unsqueeze(1)  # centred columns
        uc = xc @ self.v21 + self.v22 * yc  # (B, l): centred values
        b = sx @ self.v21 + self.v22 * sy  # (B,)
        inner = (xc * uc.unsqueeze(-1)).mean(1)  # (B, d) = C_xx v21 + v22 C_xy, O(l d) per prompt
        w = inner @ self.M11 + (yc * uc).mean(1, keepdim=True) * self.m21  # (B, d)
        return b, w
