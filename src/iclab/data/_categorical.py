r"""Categorical in-context classification prompts of Wang et al., arXiv:2405.17248 (docs/papers/categorical.md
§5.1, §5.4).

``CategoricalICL`` is the authors' "high-dimensional" synthetic generator (§5.1): per context, ``k`` of
the ``C`` classes are active, with cluster centres :math:`\mu_j\sim N(0, I_d)` and widths
:math:`\sigma_j^2 = -\min_{j'\ne j}\|\mu_j-\mu_{j'}\|^2/\ln(\mathrm{dist})`; the latent function is
:math:`f(x)=\lambda\sum_j w_{c_j}\exp(-\|x-\mu_j\|^2/\sigma_j^2)` and every label (context and query) is drawn
from :math:`\mathrm{softmax}(W_e^{\top} f(x))` over all ``C`` classes. ``W_e`` (``d' x C``, entries N(0, 1)) is
drawn once from ``embedding_seed`` and shared by every context (or per context with ``unique_embeddings``).

``FeatureClassPrompts`` builds ``n_way``-way, ``shots``-shot contexts from a bank of real feature vectors
(§5.4): pick ``n_way`` distinct classes from an allowed set, ``shots`` examples each, relabel the classes
0..n_way-1 in random order, shuffle the context, and draw ``n_queries`` further examples of those classes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from iclab.config import Config, check_choice, check_int, check_positive
from iclab.errors import ConfigError

__all__ = ["CategoricalBatch", "CategoricalICL", "FeatureClassPrompts"]


@dataclass
class CategoricalBatch:
    """A batch of categorical ICL prompts.

    Fields: ``x (B, N, d)`` context covariates; ``y (B, N)`` context labels in ``0..C-1``; ``x_query (B, Q, d)``;
    ``y_query (B, Q)``; ``probs_query (B, Q, C)`` the generating class probabilities (None for real data);
    ``n_classes`` the number of classes ``C`` the labels index.
    """

    x: torch.Tensor
    y: torch.Tensor
    x_query: torch.Tensor
    y_query: torch.Tensor
    n_classes: int
    probs_query: torch.Tensor | None = None

    def _map(self, fn) -> "CategoricalBatch":
        return CategoricalBatch(
            fn(self.x),
            fn(self.y),
            fn(self.x_query),
            fn(self.y_query),
            self.n_classes,
            None if self.probs_query is None else fn(self.probs_query),
        )

    def to(self, device) -> "CategoricalBatch":
        return self._map(lambda t: t.to(device))

    def index(self, idx) -> "CategoricalBatch":
        return self._map(lambda t: t[idx])

    def double(self) -> "CategoricalBatch":
        return self._map(lambda t: t.double() if t.is_floating_point() else t)

    @property
    def batch_size(self) -> int:
        return self.x.shape[0]


@dataclass(frozen=True)
class CategoricalICL(Config):
    """Synthetic categorical ICL prompts (docs/papers/categorical.md §5.1; defaults = the authors' main setting).

    Fields:
        n_classes: C, number of classes (25).
        d: covariate dimension (10).
        d_embed: d', class-embedding dimension (5).
        n_context: N, context points per prompt (125).
        n_clusters: k active classes / RBF centres per prompt (5), at most C.
        dist: RBF value of a centre at its nearest other centre, in (0, 1) (0.1).
        scale: lambda, the latent-function scale (10, torch argparse default).
        n_queries: query points per prompt (1).
        covariate: ``uniform`` (x ~ U[-1, 1]^d, the paper) or ``gaussian`` (x ~ N(0, I_d), rotation-invariant,
            for the stationarity check, docs/papers/categorical.md §4.3).
        embedding_seed: seed of the shared data embedding W_e (42, as in the torch code).
        unique_embeddings: draw a fresh W_e per prompt (the code's ``unique_w_e``).
    """

    n_classes: int = 25
    d: int = 10
    d_embed: int = 5
    n_context: int = 125
    n_clusters: int = 5
    dist: float = 0.1
    scale: float = 10.0
    n_queries: int = 1
    covariate: str = "uniform"
    embedding_seed: int = 42
    unique_embeddings: bool = False

    def __post_init__(self) -> None:
        check_int("n_classes", self.n_classes, 2)
        check_int("d", self.d, 1)
        check_int("d_embed", self.d_embed, 1)
        check_int("n_context", self.n_context, 1)
        check_int("n_clusters", self.n_clusters, 1)
        if self.n_clusters > self.n_classes:
            raise ConfigError("n_clusters", self.n_clusters, f"an integer <= n_classes={self.n_classes}")
        if not isinstance(self.dist, (int, float)) or not 0.0 < self.dist < 1.0:
            raise ConfigError("dist", self.dist, "a number in (0, 1)")
        check_positive("scale", self.scale)
        check_int("n_queries", self.n_queries, 1)
        check_choice("covariate", self.covariate, ("uniform", "gaussian"))
        check_int("embedding_seed", self.embedding_seed, 0)
        check_choice("unique_embeddings", self.unique_embeddings, (True, False))

    def class_embeddings(self, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """The shared data embedding ``W_e`` of shape ``(d', C)``, entries N(0, 1), from ``embedding_seed``."""
        g = torch.Generator().manual_seed(self.embedding_seed)
        return torch.randn(self.d_embed, self.n_classes, generator=g, dtype=torch.float64).to(dtype)

    def latent(self, x: torch.Tensor, w: torch.Tensor, mu: torch.Tensor, sigma2: torch.Tensor) -> torch.Tensor:
        """``f(x) = scale * sum_j w_j exp(-|x - mu_j|^2 / sigma_j^2)``.

        Shapes: ``x (B, n, d)``, ``w (B, k, d')``, ``mu (B, k, d)``, ``sigma2 (B, k)`` -> ``(B, n, d')``.
        """
        sq = ((x[:, :, None, :] - mu[:, None, :, :]) ** 2).sum(-1)  # (B, n, k)
        phi = torch.exp(-sq / sigma2[:, None, :])  # (B, n, k)
        return self.scale * phi @ w  # (B, n, d')

    def sample(
        self, batch: int, generator: torch.Generator | None = None, dtype: torch.dtype = torch.float32
    ) -> CategoricalBatch:
        """Draw ``batch`` prompts (docs/papers/categorical.md §5.1, steps 1-6), vectorised over prompts."""
        check_int("batch", batch, 1)
        B, N, Q, d, k, C = batch, self.n_context, self.n_queries, self.d, self.n_clusters, self.n_classes
        if self.covariate == "uniform":
            xs = 2.0 * torch.rand(B, N + Q, d, generator=generator, dtype=torch.float64) - 1.0  # (B, N+Q, d)
        else:
            xs = torch.randn(B, N + Q, d, generator=generator, dtype=torch.float64)  # (B, N+Q, d)
        if self.unique_embeddings:
            W = torch.randn(B, self.d_embed, C, generator=generator, dtype=torch.float64)  # (B, d', C)
        else:
            W = self.class_embeddings(torch.float64).expand(B, -1, -1)  # (B, d', C)
        active = torch.rand(B, C, generator=generator, dtype=torch.float64).argsort(-1)[:, :k]  # (B, k)
        w_active = torch.gather(W, 2, active[:, None, :].expand(-1, self.d_embed, -1)).transpose(1, 2)  # (B, k, d')
        mu = torch.randn(B, k, d, generator=generator, dtype=torch.float64)  # (B, k, d)
        if k > 1:
            dmu = ((mu[:, :, None, :] - mu[:, None, :, :]) ** 2).sum(-1)  # (B, k, k)
            dmu = dmu + torch.diag(torch.full((k,), math.inf, dtype=torch.float64))
            sigma2 = -dmu.amin(-1) / math.log(self.dist)  # (B, k)
        else:
            sigma2 = torch.ones(B, 1, dtype=torch.float64)
        f = self.latent(xs, w_active, mu, sigma2)  # (B, N+Q, d')
        probs = torch.softmax(f @ W, dim=-1)  # (B, N+Q, C)
        ys = torch.multinomial(probs.reshape(-1, C), 1, generator=generator).reshape(B, N + Q)  # (B, N+Q)
        return CategoricalBatch(
            xs[:, :N].to(dtype), ys[:, :N], xs[:, N:].to(dtype), ys[:, N:], C, probs[:, N:].to(dtype)
        )


@dataclass(frozen=True)
class FeatureClassPrompts:
    """``n_way``-way ``shots``-shot in-context classification over a bank of real features (docs/papers/categorical.md
    §5.4).

    Fields:
        features: ``(M, d)`` feature vectors.
        labels: ``(M,)`` integer class of each feature.
        classes: the classes contexts may use (e.g. the training or the unseen test classes).
        n_way: classes per context (5); shots: examples per class in the context (10); n_queries (1).
    """

    features: torch.Tensor
    labels: torch.Tensor
    classes: tuple[int, ...]
    n_way: int = 5
    shots: int = 10
    n_queries: int = 1
    _pools: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.features.ndim != 2 or self.labels.ndim != 1 or self.labels.shape[0] != self.features.shape[0]:
            raise ConfigError(
                "features",
                tuple(self.features.shape),
                f"a (M, d) tensor with one label per row (labels {tuple(self.labels.shape)})",
            )
        check_int("n_way", self.n_way, 2)
        check_int("shots", self.shots, 1)
        check_int("n_queries", self.n_queries, 1)
        if len(self.classes) < self.n_way:
            raise ConfigError("classes", len(self.classes), f"at least n_way={self.n_way} classes")
        need = self.shots + self.n_queries
        pools = []
        for c in self.classes:
            idx = torch.nonzero(self.labels == c).flatten()
            if idx.numel() < need:
                raise ConfigError(
                    "classes", c, f"classes with >= shots + n_queries = {need} examples (class {c} has {idx.numel()})"
                )
            pools.append(idx)
        # a (n_classes, m_max) index table padded per class, with a mask of the real entries: every example of
        # every class can be drawn (classes of unequal size are not truncated to the smallest)
        m = max(p.numel() for p in pools)
        table = torch.zeros(len(pools), m, dtype=torch.long)
        valid = torch.zeros(len(pools), m, dtype=torch.bool)
        for i, p in enumerate(pools):
            table[i, : p.numel()], valid[i, : p.numel()] = p, True
        object.__setattr__(self, "_pools", (table, valid))

    def sample(self, batch: int, generator: torch.Generator | None = None) -> CategoricalBatch:
        """Draw ``batch`` contexts: N = n_way * shots context points, labels relabelled at random."""
        table, valid = self._pools  # (K, m) example rows, (K, m) real entries
        K, m = table.shape
        B, W, S, Q = batch, self.n_way, self.shots, self.n_queries
        cls = torch.rand(B, K, generator=generator).argsort(-1)[:, :W]  # (B, W) positions in classes
        keys = torch.rand(B, W, m, generator=generator).masked_fill(~valid[cls], 2.0)  # padding sorts last
        pick = keys.argsort(-1)[:, :, : S + Q]  # (B, W, S+Q) distinct real examples (w/o replacement)
        rows = table[cls[:, :, None], pick]  # (B, W, S+Q) feature rows
        lab = torch.arange(W).expand(B, W)  # (B, W): relabelled 0..W-1 (classes are already in random order)
        ctx_rows = rows[:, :, :S].reshape(B, W * S)  # (B, N)
        ctx_lab = lab[:, :, None].expand(B, W, S).reshape(B, W * S)  # (B, N)
        perm = torch.rand(B, W * S, generator=generator).argsort(-1)  # (B, N) shuffle the context
        ctx_rows, ctx_lab = ctx_rows.gather(1, perm), ctx_lab.gather(1, perm)
        q_cls = torch.randint(W, (B, Q), generator=generator)  # (B, Q) class of each query
        q_rows = rows[torch.arange(B)[:, None], q_cls, S + torch.arange(Q)]  # (B, Q): held-back examples
        x = self.features[ctx_rows]  # (B, N, d)
        return CategoricalBatch(x, ctx_lab, self.features[q_rows], q_cls, W)
