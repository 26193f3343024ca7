"""scikit-learn's bundled handwritten digits (``load_digits``: 1,797 8x8 images, 10 classes), offline, as raw 64-d
pixel features: the image classes of iclab's offline stand-in for the ImageNet/VGG16 study of Wang et al.,
arXiv:2405.17248 §5.4 (docs/papers/categorical.md §5.4)."""

from __future__ import annotations

import torch

__all__ = ["digits_features"]


def digits_features() -> tuple[torch.Tensor, torch.Tensor, list[str]]:
    """``load_digits`` pixels ``(1797, 64)`` float32, labels ``(1797,)`` and the class names ``"0"`` … ``"9"``."""
    from sklearn.datasets import load_digits

    ds = load_digits()
    return torch.tensor(ds.data, dtype=torch.float32), torch.tensor(ds.target), [str(c) for c in range(10)]
