r"""The functional-GD transformer for categorical in-context learning of Wang et al., arXiv:2405.17248
(docs/papers/categorical.md §3.3–3.6).

Token ``i`` at block ``k`` is :math:`e_{i,k}=(x_i;\,w_{e,y_i};\,\mathbb E_{f_{i,k}}[w_e];\,f_{i,k})\in\mathbb R^{d+3d'}`
(§3.3), the query token has :math:`0` in the label slot, and :math:`f_{i,0}=0`, so the scratch slot starts
at :math:`\bar w_e`. One block (§3.4) is

* self-attention with two heads over the N context tokens as keys/values (the query is never a key):
  head 1 (the update) with kernel :math:`\kappa` (softmax, RBF or linear, §3.5) and head 2 (erase) with a softmax
  of the score ``erase``: ``"distance"`` (iclab), :math:`-\|q_i-k_j\|^2`, which at the construction
  :math:`q=k=\sqrt{\lambda}x` is an exact Kronecker delta (§4.2), or ``"dot"`` (the authors' code),
  :math:`q_i^\top k_j/\sqrt D` with :math:`q=k=\lambda x`, a delta only where :math:`x_i` maximises
  :math:`x_i^\top x_j`, and, as in their code, divided by N with the linear and RBF kernels (§4.2a); both heads add
  to the residual stream;
* cross-attention from every token onto the C class embeddings :math:`w_{e,c}` (keys = values), softmax over c,
  added to the residual stream.

At the *GD configuration* head 1 adds :math:`\operatorname{diag}(\alpha_k)[w_{e,y_j}-\mathbb E_{f_{j,k}}[w_e]]\kappa(x_j,x_i)`
to :math:`f_i`, head 2 removes :math:`\mathbb E_{f_{i,k}}[w_e]` and the cross-attention writes
:math:`\sum_c w_{e,c}\,\mathrm{softmax}_c(W_e^\top f_{i,k+1})`, so K blocks are K steps of functional GD
(§3.2; checked against :func:`iclab.theory.categorical.functional_gd`) with the distance erase head; with the
authors' dot-product erase head that holds up to K = 2 blocks with the softmax kernel and for one block with the
linear and RBF kernels (§4.2a). The readout is :math:`\mathrm{softmax}(W_e^\top f_{N+1,K})`.

:class:`FunctionalGDModel` is the "GD" model: it learns only the step sizes :math:`\alpha_k\in\mathbb R^{d'}`, one
kernel scale ``s`` and :math:`W_e` (§3.6), and builds every attention matrix from them; its forward runs the same
block in slot form (:func:`gd_slot_forward`: the kernel and erase weights depend on x alone, so they are computed
once and the K blocks act on the d'-wide slots), which equals the token forward to rounding (tested).
:class:`TrainedCategoricalTransformer` has the same forward with every Q, K, V, P matrix of every block learned
(per-block weights, the authors' "Trained TF", §3.6). Both share :func:`categorical_forward`.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from iclab.attention import normalise
from iclab.data import CategoricalBatch
from iclab.errors import ConfigError

__all__ = [
    "KERNELS",
    "ERASE_SCORES",
    "BLOCK_KEYS",
    "categorical_forward",
    "gd_block_params",
    "gd_slot_forward",
    "embed_tokens",
    "FunctionalGDModel",
    "TrainedCategoricalTransformer",
    "categorical_loss",
]

KERNELS = ("softmax", "rbf", "linear")
ERASE_SCORES = ("distance", "dot")  # iclab's exact erase head; the authors' code (docs/papers/categorical.md §4.2a)
# per-block matrices: head 1 (q1, k1, v1, p1), head 2 (q2, k2, v2, p2) are (D, D); cross-attention
# qc (D, d'), kc (d', d'), vc (d', d'), pc (d', D).
BLOCK_KEYS = ("q1", "k1", "v1", "p1", "q2", "k2", "v2", "p2", "qc", "kc", "vc", "pc")


def _slots(d: int, dp: int) -> dict[str, slice]:
    """Index ranges of the four token slots: x, w_e (label), E (scratch), f."""
    return {"x": slice(0, d), "w": slice(d, d + dp), "E": slice(d + dp, d + 2 * dp), "f": slice(d + 2 * dp, d + 3 * dp)}


def _check_args(
    d: int, n_classes: int, d_embed: int, n_blocks: int, kernel: str, erase_lambda: float, erase: str = "distance"
) -> None:
    if erase not in ERASE_SCORES:
        raise ConfigError("erase", erase, "one of " + ", ".join(map(repr, ERASE_SCORES)))
    for name, v, lo in (("d", d, 1), ("n_classes", n_classes, 2), ("d_embed", d_embed, 1), ("n_blocks", n_blocks, 1)):
        if not isinstance(v, int) or isinstance(v, bool) or v < lo:
            raise ConfigError(name, v, f"an integer >= {lo}")
    if kernel not in KERNELS:
        raise ConfigError("kernel", kernel, "one of " + ", ".join(map(repr, KERNELS)))
    if not isinstance(erase_lambda, (int, float)) or not math.isfinite(erase_lambda) or erase_lambda <= 0:
        raise ConfigError("erase_lambda", erase_lambda, "a finite number > 0")


def _check_batch(batch: CategoricalBatch, W_e: torch.Tensor) -> None:
    """Shapes of ``batch`` against each other and the class count of ``W_e (d', C)``."""
    x, xq = batch.x, batch.x_query  # (B, N, d), (B, Q, d)
    B, N, d = x.shape
    if xq.shape[0] != B or xq.shape[2] != d:
        raise ConfigError("x_query", tuple(xq.shape), f"shape (B={B}, Q, d={d}) matching x {tuple(x.shape)}")
    if batch.y.shape != (B, N):
        raise ConfigError("y", tuple(batch.y.shape), f"shape (B, N) = {(B, N)}")
    if batch.n_classes != W_e.shape[1]:
        raise ConfigError("n_classes", batch.n_classes, f"the model's n_classes={W_e.shape[1]}")


def embed_tokens(batch: CategoricalBatch, W_e: torch.Tensor) -> torch.Tensor:
    r"""Initial tokens ``(B, N+Q, d+3d')``: ``(x; w_{e,y}; \bar w_e; 0)`` for context, ``(x; 0; \bar w_e; 0)`` for
    queries (docs/papers/categorical.md §3.3). ``W_e`` has shape ``(d', C)``."""
    _check_batch(batch, W_e)
    x, xq = batch.x, batch.x_query  # (B, N, d), (B, Q, d)
    B, N, d = x.shape
    Q = xq.shape[1]
    dp = W_e.shape[0]
    W_t = W_e.t().to(x.dtype)  # (C, d')
    w_lab = W_t[batch.y]  # (B, N, d')
    w_bar = W_t.mean(0).expand(B, N + Q, dp)  # (B, N+Q, d')
    lab = torch.cat([w_lab, x.new_zeros(B, Q, dp)], 1)  # (B, N+Q, d')
    xs = torch.cat([x, xq], 1)  # (B, N+Q, d)
    return torch.cat([xs, lab, w_bar, x.new_zeros(B, N + Q, dp)], -1)  # (B, N+Q, D)


def _sq_dist(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """``|q_i - k_j|^2`` for ``q (B, T, D)``, ``k (B, N, D)`` -> ``(B, T, N)``, clamped at 0."""
    return ((q * q).sum(-1, keepdim=True) + (k * k).sum(-1)[:, None, :] - 2.0 * q @ k.transpose(1, 2)).clamp_min(0.0)


def _erase_weights(q2: torch.Tensor, k2: torch.Tensor, kernel: str, erase: str, D: int) -> torch.Tensor:
    """Head-2 weights ``(B, T, N)`` from its queries ``q2 (B, T, ·)`` and keys ``k2 (B, N, ·)``: a softmax of
    ``-|q - k|^2`` (``distance``) or of ``q.k / sqrt(D)`` with ``D`` the token width (``dot``, the authors' code,
    which also divides this head by N with the linear and RBF kernels; docs/papers/categorical.md §4.2a)."""
    if erase == "distance":
        return normalise("softmax", -_sq_dist(q2, k2))  # (B, T, N)
    A2 = normalise("softmax", q2 @ k2.transpose(1, 2) / math.sqrt(D))  # (B, T, N)
    return A2 if kernel == "softmax" else A2 / k2.shape[1]


def _block(
    Z: torch.Tensor, n_ctx: int, p: dict[str, torch.Tensor], W_e: torch.Tensor, kernel: str, erase: str = "distance"
) -> torch.Tensor:
    """One block (docs/papers/categorical.md §3.4) on tokens ``Z (B, T, D)`` whose first ``n_ctx`` rows are the context."""
    Zc = Z[:, :n_ctx]  # (B, N, D)
    D = Z.shape[-1]
    q, k, v = Z @ p["q1"], Zc @ p["k1"], Zc @ p["v1"]  # (B, T, D), (B, N, D), (B, N, D)
    if kernel == "softmax":
        A = normalise("softmax", q @ k.transpose(1, 2) / math.sqrt(D))  # (B, T, N)
    elif kernel == "linear":
        A = normalise("linear", q @ k.transpose(1, 2))  # (B, T, N), = scores / N
    else:  # rbf: exp(-|q - k|^2 / 2) / N
        A = torch.exp(-0.5 * _sq_dist(q, k)) / n_ctx  # (B, T, N)
    head1 = (A @ v) @ p["p1"]  # (B, T, D)
    A2 = _erase_weights(Z @ p["q2"], Zc @ p["k2"], kernel, erase, D)  # (B, T, N): ~ delta_{ij} at the construction
    head2 = (A2 @ (Zc @ p["v2"])) @ p["p2"]  # (B, T, D)
    Z = Z + head1 + head2
    W_t = W_e.t().to(Z.dtype)  # (C, d')
    Ac = normalise("softmax", (Z @ p["qc"]) @ (W_t @ p["kc"]).t())  # (B, T, C)
    return Z + (Ac @ (W_t @ p["vc"])) @ p["pc"]  # (B, T, D)


def categorical_forward(
    batch: CategoricalBatch,
    W_e: torch.Tensor,
    blocks: list[dict[str, torch.Tensor]],
    kernel: str,
    return_states: bool = False,
    erase: str = "distance",
) -> torch.Tensor | tuple[torch.Tensor, list[torch.Tensor]]:
    """Logits ``(B, Q, C)`` of the query labels, ``W_e^T f_{N+1,K}``; with ``return_states`` also the list of
    token tensors ``[Z_0, ..., Z_K]`` (each ``(B, N+Q, D)``). ``erase`` is the score of head 2 (:data:`ERASE_SCORES`)."""
    Z = embed_tokens(batch, W_e)  # (B, T, D)
    n_ctx, dp = batch.x.shape[1], W_e.shape[0]
    states = [Z]
    for p in blocks:
        Z = _block(Z, n_ctx, p, W_e, kernel, erase)
        states.append(Z)
    f_q = Z[:, n_ctx:, Z.shape[-1] - dp :]  # (B, Q, d')
    logits = f_q @ W_e.to(Z.dtype)  # (B, Q, C)
    return (logits, states) if return_states else logits


def gd_block_params(
    d: int,
    d_embed: int,
    alpha: torch.Tensor,
    scale: torch.Tensor | float,
    kernel: str,
    erase_lambda: float = 1e5,
    erase: str = "distance",
) -> dict[str, torch.Tensor]:
    """The matrices of one block at the GD configuration (docs/papers/categorical.md §3.4, §3.6), differentiable in ``alpha (d',)``
    and ``scale``: head 1 Q/K read x (softmax/linear: ``Q = s I``, ``K = I``; RBF: ``Q = K = I/s``), V writes
    ``diag(alpha)(w_e - E)`` into f, P = I; head 2 ``Q = K = sqrt(lambda) I`` on x (``distance`` score) or
    ``Q = K = lambda I`` (``dot`` score, the authors' code), V copies E, P = -I on E; cross-attention Q reads f,
    K = V = I, P writes E."""
    dp = d_embed
    D = d + 3 * dp
    sl = _slots(d, dp)
    alpha = torch.as_tensor(alpha)
    dt, dev = alpha.dtype, alpha.device
    scale = torch.as_tensor(scale, dtype=dt, device=dev)
    eye_d, eye_p = torch.eye(d, dtype=dt, device=dev), torch.eye(dp, dtype=dt, device=dev)

    def place(blocks: dict[tuple[str, str], torch.Tensor], rows: int = D, cols: int = D) -> torch.Tensor:
        M = torch.zeros(rows, cols, dtype=dt, device=dev)
        for (r, c), val in blocks.items():
            rs = sl[r] if r else slice(0, rows)
            cs = sl[c] if c else slice(0, cols)
            M = M.index_put(
                (torch.arange(rows, device=dev)[rs][:, None], torch.arange(cols, device=dev)[cs][None, :]), val
            )
        return M

    if kernel == "rbf":
        q1 = place({("x", "x"): eye_d / scale})
        k1 = place({("x", "x"): eye_d / scale})
    else:
        q1 = place({("x", "x"): eye_d * scale})
        k1 = place({("x", "x"): eye_d})
    diag_a = torch.diag(alpha)
    v1 = place({("w", "f"): diag_a, ("E", "f"): -diag_a})
    root = math.sqrt(erase_lambda) if erase == "distance" else erase_lambda
    return {
        "q1": q1,
        "k1": k1,
        "v1": v1,
        "p1": torch.eye(D, dtype=dt, device=dev),
        "q2": place({("x", "x"): root * eye_d}),
        "k2": place({("x", "x"): root * eye_d}),
        "v2": place({("E", "E"): eye_p}),
        "p2": place({("E", "E"): -eye_p}),
        "qc": place({("f", ""): eye_p}, D, dp),
        "kc": eye_p.clone(),
        "vc": eye_p.clone(),
        "pc": place({("", "E"): eye_p}, dp, D),
    }


def _update_weights(xs: torch.Tensor, x: torch.Tensor, kernel: str, scale: torch.Tensor, D: int) -> torch.Tensor:
    """Head-1 weights ``(B, T, N)`` at the GD configuration, from ``xs (B, T, d)`` and context ``x (B, N, d)``
    (docs/papers/categorical.md §3.5); ``D`` is the token width."""
    if kernel == "softmax":
        return normalise("softmax", scale * (xs @ x.transpose(1, 2)) / math.sqrt(D))  # (B, T, N)
    if kernel == "linear":
        return normalise("linear", scale * (xs @ x.transpose(1, 2)))  # (B, T, N)
    return torch.exp(-0.5 * _sq_dist(xs / scale, x / scale)) / x.shape[1]  # (B, T, N)


def gd_slot_forward(
    batch: CategoricalBatch,
    W_e: torch.Tensor,
    alpha: torch.Tensor,
    scale: torch.Tensor | float,
    kernel: str,
    erase: str = "distance",
    erase_lambda: float = 1e5,
) -> torch.Tensor:
    r"""Logits ``(B, Q, C)`` of K blocks at the GD configuration, computed on the slots (docs/papers/categorical.md
    §3.4): with head-1 weights :math:`A` and head-2 weights :math:`A^{(2)}`, both functions of x alone,

    .. math:: f \leftarrow f + A\,[w_{e,y} - E]\operatorname{diag}(\alpha_k),\qquad
              E \leftarrow E - A^{(2)} E + \mathbb E_{f}[w_e]

    (context rows of E; the query's E is never read). Equals :func:`categorical_forward` with
    :func:`gd_block_params` to rounding. Shapes: ``W_e (d', C)``, ``alpha (K, d')``."""
    _check_batch(batch, W_e)
    x, xq = batch.x, batch.x_query  # (B, N, d), (B, Q, d)
    n, dp = x.shape[1], W_e.shape[0]
    D = x.shape[-1] + 3 * dp
    xs = torch.cat([x, xq], 1)  # (B, T, d)
    scale = torch.as_tensor(scale, dtype=x.dtype)
    A = _update_weights(xs, x, kernel, scale, D)  # (B, T, N)
    root = math.sqrt(erase_lambda) if erase == "distance" else erase_lambda
    with torch.no_grad():  # no learned parameter enters the erase head
        A2 = _erase_weights(root * x, root * x, kernel, erase, D)  # (B, N, N)
    W = W_e.to(x.dtype)  # (d', C)
    w_lab = W.t()[batch.y]  # (B, N, d')
    E = W.t().mean(0).expand_as(w_lab)  # (B, N, d'): E_{f=0}[w_e] = mean embedding
    f = xs.new_zeros(xs.shape[0], xs.shape[1], dp)  # (B, T, d')
    for a in alpha:
        f = f + (A @ (w_lab - E)) * a  # (B, T, d')
        E = E - A2 @ E + torch.softmax(f[:, :n] @ W, -1) @ W.t()  # (B, N, d')
    return f[:, n:] @ W  # (B, Q, C)


class FunctionalGDModel(nn.Module):
    """The "GD" model (docs/papers/categorical.md §3.6): learned ``alpha (K, d')`` ~ N(0, 1), kernel scale ``s`` (init 1) and
    ``W_e (d', C)`` ~ N(0, 1); every other matrix is the construction of :func:`gd_block_params`, with the erase
    score ``erase`` (``distance``: exact GD; ``dot``: the authors' code). ``forward`` runs
    :func:`gd_slot_forward`; ``forward(batch, return_states=True)`` runs the token forward and also returns the
    token states."""

    def __init__(
        self,
        d: int,
        n_classes: int,
        d_embed: int = 5,
        n_blocks: int = 1,
        kernel: str = "softmax",
        erase_lambda: float = 1e5,
        generator: torch.Generator | None = None,
        dtype=torch.float32,
        erase: str = "distance",
    ):
        super().__init__()
        _check_args(d, n_classes, d_embed, n_blocks, kernel, erase_lambda, erase)
        self.d, self.n_classes, self.d_embed, self.n_blocks = d, n_classes, d_embed, n_blocks
        self.kernel, self.erase_lambda, self.erase = kernel, float(erase_lambda), erase
        self.alpha = nn.Parameter(torch.randn(n_blocks, d_embed, generator=generator, dtype=dtype))
        self.scale = nn.Parameter(torch.ones((), dtype=dtype))
        self.W_e = nn.Parameter(torch.randn(d_embed, n_classes, generator=generator, dtype=dtype))

    def block_params(self) -> list[dict[str, torch.Tensor]]:
        return [
            gd_block_params(self.d, self.d_embed, self.alpha[k], self.scale, self.kernel, self.erase_lambda, self.erase)
            for k in range(self.n_blocks)
        ]

    def forward(self, batch: CategoricalBatch, return_states: bool = False):
        if return_states:
            return categorical_forward(batch, self.W_e, self.block_params(), self.kernel, True, self.erase)
        return gd_slot_forward(batch, self.W_e, self.alpha, self.scale, self.kernel, self.erase, self.erase_lambda)


class TrainedCategoricalTransformer(nn.Module):
    """The "Trained TF" (docs/papers/categorical.md §3.6): same blocks, every Q, K, V, P of both self-attention heads and of the
    cross-attention learned per block, initialised N(0, (init_scale / K)^2); ``W_e (d', C)`` ~ N(0, 1) is
    shared by the embedding, the cross-attention keys/values and the readout. ``erase`` is the head-2 score form
    (:data:`ERASE_SCORES`)."""

    def __init__(
        self,
        d: int,
        n_classes: int,
        d_embed: int = 5,
        n_blocks: int = 1,
        kernel: str = "softmax",
        init_scale: float = 0.002,
        generator: torch.Generator | None = None,
        dtype=torch.float32,
        erase: str = "distance",
    ):
        super().__init__()
        _check_args(d, n_classes, d_embed, n_blocks, kernel, 1.0, erase)
        self.erase = erase
        if not isinstance(init_scale, (int, float)) or init_scale < 0:
            raise ConfigError("init_scale", init_scale, "a number >= 0")
        self.d, self.n_classes, self.d_embed, self.n_blocks, self.kernel = d, n_classes, d_embed, n_blocks, kernel
        D, dp = d + 3 * d_embed, d_embed
        shapes = {k: (D, D) for k in BLOCK_KEYS[:8]} | {"qc": (D, dp), "kc": (dp, dp), "vc": (dp, dp), "pc": (dp, D)}
        sd = init_scale / n_blocks
        self.blocks = nn.ModuleList(
            [
                nn.ParameterDict(
                    {
                        k: nn.Parameter(sd * torch.randn(*shapes[k], generator=generator, dtype=dtype))
                        for k in BLOCK_KEYS
                    }
                )
                for _ in range(n_blocks)
            ]
        )
        self.W_e = nn.Parameter(torch.randn(d_embed, n_classes, generator=generator, dtype=dtype))

    @classmethod
    def from_gd(cls, gd: FunctionalGDModel) -> "TrainedCategoricalTransformer":
        """A fully parametrised copy of ``gd`` at its GD configuration (the code's ``gd_init``)."""
        dtype = gd.W_e.dtype
        tf = cls(gd.d, gd.n_classes, gd.d_embed, gd.n_blocks, gd.kernel, 0.0, dtype=dtype, erase=gd.erase)
        with torch.no_grad():
            for blk, p in zip(tf.blocks, gd.block_params()):
                for k in BLOCK_KEYS:
                    blk[k].copy_(p[k])
            tf.W_e.copy_(gd.W_e)
        return tf

    def block_params(self) -> list[dict[str, torch.Tensor]]:
        return [dict(b.items()) for b in self.blocks]

    def forward(self, batch: CategoricalBatch, return_states: bool = False):
        return categorical_forward(batch, self.W_e, self.block_params(), self.kernel, return_states, self.erase)


def categorical_loss(model: nn.Module, batch: CategoricalBatch) -> tuple[torch.Tensor, dict[str, float]]:
    """Mean query NLL (cross-entropy) and ``{"acc": top-1 accuracy}`` (docs/papers/categorical.md §3.4, §5.2)."""
    logits = model(batch)  # (B, Q, C)
    nll = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.y_query.reshape(-1))
    acc = (logits.argmax(-1) == batch.y_query).float().mean()
    return nll, {"acc": float(acc)}
