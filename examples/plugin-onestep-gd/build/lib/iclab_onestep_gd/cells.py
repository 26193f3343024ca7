r"""One cell per seed: ``prompts`` Gaussian regression prompts (x ~ N(0, I_d), w ~ N(0, I_d/d), y = wᵀx + σε) and
the squared error of four predictions of the query's label:

- the linear self-attention layer of arXiv:2212.07677, Prop. 1, on tokens z_i = (x_i, y_i), query z_q = (x_q, 0):
  $\hat y = e_y^\top \frac{1}{n}\sum_i W_{PV} z_i z_i^\top W_{KQ} z_q$ with $W_{KQ} = \mathrm{diag}(I_d, 0)$ and
  $W_{PV} = \eta\, e_y e_y^\top$;
- one GD step from w = 0 on $\frac{1}{2n}\sum_i (w^\top x_i - y_i)^2$: $w_1 = \frac{\eta}{n}\sum_i y_i x_i$;
- ordinary least squares, and the zero predictor.
"""

import torch

from iclab.budget import Need
from iclab.data import generator_for

from iclab_onestep_gd.config import OneStepConfig


def cells(cfg: OneStepConfig) -> list[dict]:
    return [{"part": "risk", "seed": cfg.seed + s} for s in range(cfg.seeds)]


def shared(cfg: OneStepConfig) -> None:
    return None


def budget(cfg: OneStepConfig) -> list[Need]:
    per_prompt = (cfg.n + 1) * (cfg.d + 1) * 8
    return [
        Need({"prompts": cfg.prompts, "n": cfg.n}, memory=4.0 * cfg.prompts * per_prompt, seconds=1e-6 * cfg.prompts)
    ]


def _attention_prediction(x, y, xq, eta: float):  # (B, n, d), (B, n), (B, d) -> (B,)
    b, n, d = x.shape
    z = torch.cat([x, y[..., None]], dim=-1)  # (B, n, d+1) tokens
    zq = torch.cat([xq, torch.zeros(b, 1, dtype=x.dtype)], dim=-1)  # (B, d+1) query token, label 0
    w_kq = torch.diag(torch.cat([torch.ones(d, dtype=x.dtype), torch.zeros(1, dtype=x.dtype)]))  # (d+1, d+1)
    w_pv = torch.zeros(d + 1, d + 1, dtype=x.dtype)
    w_pv[d, d] = eta
    scores = torch.einsum("bnk,kl,bl->bn", z, w_kq, zq) / n  # (B, n) linear attention, no softmax
    out = torch.einsum("bn,bnk,lk->bl", scores, z, w_pv)  # (B, d+1)
    return out[:, d]


def run_cell(cfg: OneStepConfig, cell: dict, shared_value) -> dict:
    g = generator_for(cell["seed"], "onestep-gd")
    b, n, d = cfg.prompts, cfg.n, cfg.d
    w = torch.randn(b, d, generator=g, dtype=torch.float64) / d**0.5  # (B, d)
    x = torch.randn(b, n + 1, d, generator=g, dtype=torch.float64)  # (B, n+1, d), the last is the query
    y = torch.einsum("bnd,bd->bn", x, w) + cfg.noise * torch.randn(b, n + 1, generator=g, dtype=torch.float64)
    xs, ys, xq, yq = x[:, :n], y[:, :n], x[:, n], y[:, n]
    w_gd = cfg.eta / n * torch.einsum("bn,bnd->bd", ys, xs)  # (B, d) one GD step from 0
    w_ols = torch.linalg.lstsq(xs, ys[..., None]).solution[..., 0]  # (B, d)
    attn = _attention_prediction(xs, ys, xq, cfg.eta)
    gd = torch.einsum("bd,bd->b", w_gd, xq)
    ols = torch.einsum("bd,bd->b", w_ols, xq)
    return {
        "risk_attention": float(((attn - yq) ** 2).mean()),
        "risk_gd": float(((gd - yq) ** 2).mean()),
        "risk_ols": float(((ols - yq) ** 2).mean()),
        "risk_zero": float((yq**2).mean()),
        "max_gap": float((attn - gd).abs().max()),
    }
