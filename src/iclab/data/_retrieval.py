r"""Max-retrieval sets and small CLRS-style algorithmic tasks for size generalisation, arXiv:2410.01104 ("Softmax is
not enough"; docs/papers/dispersion.md §3.7–3.8).

* :class:`MaxRetrieval` (App. A, note §3.7): ``n ~ U{n_min..n_max}`` items per set, item ``i`` has a priority
  :math:`p_i\sim U(0,1)` and a class :math:`c_i\sim U\{0..C-1\}`, features :math:`x_i=[p_i,\mathrm{onehot}(c_i)]`; one
  query scalar :math:`q\sim U(0,1)` (no task information); target :math:`c_{\arg\max_i p_i}`. Training: 5–16 items;
  test: ``MaxRetrieval.at_size(n)``. Sets are right-padded to ``n_max`` under a key mask.
* :class:`AlgorithmicTask`, in the spirit of CLRS-Text (note §3.8, §5.5): tokens are values ``k in {0..vocab-1}``
  encoded as ``[k/(vocab-1), onehot(k)]``; a label per position (classification over ``vocab``, exact match):
  ``minimum`` (every position outputs the set's minimum), ``sorting`` (CLRS represents a sorted order by successor
  pointers: each position outputs the next larger value present, the maximum outputs itself) and ``running_max``
  (a causal trace: position ``i`` outputs :math:`\max_{j\le i} x_j`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import torch

from iclab.config import Config, check_choice, check_int

__all__ = ["RetrievalBatch", "MaxRetrieval", "SequenceBatch", "AlgorithmicTask", "ALGORITHMIC_TASKS"]

ALGORITHMIC_TASKS = ("minimum", "sorting", "running_max")


class _TensorBatch:
    def to(self, device):
        return type(self)(**{f.name: getattr(self, f.name).to(device) for f in fields(self)})

    def index(self, idx):
        return type(self)(**{f.name: getattr(self, f.name)[idx] for f in fields(self)})

    def __len__(self) -> int:
        return getattr(self, fields(self)[0].name).shape[0]


@dataclass
class RetrievalBatch(_TensorBatch):
    items: torch.Tensor  # (B, n, 1 + C) [priority, onehot(class)], zeros where padded
    query: torch.Tensor  # (B, 1)
    mask: torch.Tensor  # (B, n) bool, True = real item
    target: torch.Tensor  # (B,) long, class of the max-priority item
    priority: torch.Tensor  # (B, n), -1 where padded
    classes: torch.Tensor  # (B, n) long


def _sizes(batch: int, lo: int, hi: int, generator) -> torch.Tensor:
    if lo == hi:
        return torch.full((batch,), hi, dtype=torch.long)
    return torch.randint(lo, hi + 1, (batch,), generator=generator)


@dataclass(frozen=True)
class MaxRetrieval(Config):
    """Max-retrieval sets (App. A of arXiv:2410.01104; docs/papers/dispersion.md §3.7). Fields: ``n_min``/``n_max`` set sizes (uniform), ``n_classes`` (C = 10)."""

    n_min: int = 5
    n_max: int = 16
    n_classes: int = 10

    def __post_init__(self) -> None:
        check_int("n_min", self.n_min, 1)
        check_int("n_max", self.n_max, self.n_min)
        check_int("n_classes", self.n_classes, 2)

    @staticmethod
    def at_size(n: int, n_classes: int = 10) -> "MaxRetrieval":
        return MaxRetrieval(n, n, n_classes)

    @property
    def d_item(self) -> int:
        return 1 + self.n_classes

    def sample(self, batch: int, generator: torch.Generator) -> RetrievalBatch:
        check_int("batch", batch, 1)
        n, C = self.n_max, self.n_classes
        sizes = _sizes(batch, self.n_min, n, generator)  # (B,)
        mask = torch.arange(n)[None, :] < sizes[:, None]  # (B, n)
        prio = torch.rand(batch, n, generator=generator)  # (B, n)
        cls = torch.randint(C, (batch, n), generator=generator)  # (B, n)
        query = torch.rand(batch, 1, generator=generator)  # (B, 1)
        prio = torch.where(mask, prio, torch.full_like(prio, -1.0))
        items = torch.cat([prio.clamp(min=0)[..., None], torch.nn.functional.one_hot(cls, C).float()], -1)
        items = items * mask[..., None]  # (B, n, 1 + C)
        target = torch.gather(cls, 1, prio.argmax(1, keepdim=True))[:, 0]  # (B,)
        return RetrievalBatch(items, query, mask, target, prio, cls)


@dataclass
class SequenceBatch(_TensorBatch):
    x: torch.Tensor  # (B, n, 1 + vocab) [k/(vocab-1), onehot(k)], zeros where padded
    mask: torch.Tensor  # (B, n) bool
    target: torch.Tensor  # (B, n) long, -100 where padded
    values: torch.Tensor  # (B, n) long


@dataclass(frozen=True)
class AlgorithmicTask(Config):
    """A CLRS-style task (module docstring). Fields: ``task`` (minimum | sorting | running_max), ``n_min``/``n_max``
    sequence lengths (uniform), ``vocab`` number of distinct values."""

    task: str = "minimum"
    n_min: int = 4
    n_max: int = 16
    vocab: int = 32

    def __post_init__(self) -> None:
        check_choice("task", self.task, ALGORITHMIC_TASKS)
        check_int("n_min", self.n_min, 1)
        check_int("n_max", self.n_max, self.n_min)
        check_int("vocab", self.vocab, 2)

    @property
    def causal(self) -> bool:
        return self.task == "running_max"

    @property
    def d_in(self) -> int:
        return 1 + self.vocab

    def at_size(self, n: int) -> "AlgorithmicTask":
        return AlgorithmicTask(self.task, n, n, self.vocab)

    def sample(self, batch: int, generator: torch.Generator) -> SequenceBatch:
        check_int("batch", batch, 1)
        n, V = self.n_max, self.vocab
        sizes = _sizes(batch, self.n_min, n, generator)
        mask = torch.arange(n)[None, :] < sizes[:, None]  # (B, n)
        vals = torch.randint(V, (batch, n), generator=generator)  # (B, n)
        big, small = torch.full_like(vals, V), torch.full_like(vals, -1)
        if self.task == "minimum":
            tgt = torch.where(mask, vals, big).amin(1, keepdim=True).expand(batch, n)
        elif self.task == "running_max":
            tgt = torch.cummax(torch.where(mask, vals, small), 1).values
        else:  # successor value: min over visible x_j > x_i, or x_i itself for the maximum
            cand = torch.where(
                mask[:, None, :] & (vals[:, None, :] > vals[:, :, None]), vals[:, None, :], big[:, None, :]
            )  # (B, n_i, n_j)
            succ = cand.amin(-1)
            tgt = torch.where(succ == V, vals, succ)
        tgt = torch.where(mask, tgt, torch.full_like(tgt, -100))
        x = torch.cat([(vals.float() / (V - 1))[..., None], torch.nn.functional.one_hot(vals, V).float()], -1)
        x = x * mask[..., None]  # (B, n, 1 + V)
        return SequenceBatch(x, mask, tgt, vals)
