"""Test-wide settings: no network, deterministic torch, one thread (CI machines have 2 cores)."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

import torch  # noqa: E402

torch.set_num_threads(1)

from hypothesis import settings  # noqa: E402

# CI machines are small and shared: no per-example deadline; no example database written into the checkout.
settings.register_profile("iclab", deadline=None, database=None)
settings.load_profile("iclab")
