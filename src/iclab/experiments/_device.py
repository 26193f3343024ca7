"""The torch device of an experiment, validated once in the driver before any cell runs (a missing GPU is one
clear error there, not a failure inside every cell)."""

from __future__ import annotations

from typing import Any

from iclab.errors import ConfigError

__all__ = ["check_device", "check_config_device"]


def check_device(device: str) -> None:
    """``cpu``, ``cuda``, ``cuda:N`` (a visible GPU) or ``mps`` (available); ConfigError otherwise."""
    import torch

    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        raise ConfigError("device", device, "'cpu', 'cuda', 'cuda:N' or 'mps'") from None
    if dev.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if (dev.index or 0) >= count:
            raise ConfigError("device", device, f"'cpu' or a visible CUDA device (this machine has {count})")
    elif dev.type == "mps":
        if not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
            raise ConfigError("device", device, "'cpu' (MPS is not available here)")
    elif dev.type != "cpu":
        raise ConfigError("device", device, "'cpu', 'cuda', 'cuda:N' or 'mps'")


def check_config_device(config: Any) -> None:
    """Check ``config.device`` where the config has one (every experiment that can run on a GPU)."""
    device = getattr(config, "device", None)
    if device is not None:
        check_device(device)
