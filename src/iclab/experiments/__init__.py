"""Registry of experiments, one module per paper (see ``_base.Experiment``).

Modules listed in ``_MODULES`` register themselves on import with :func:`register`. Extra modules (a user's
own experiments, or test fixtures) are imported from the comma-separated environment variable
``ICLAB_EXPERIMENT_MODULES``; spawned workers inherit it, so they find the same experiments.
"""

from __future__ import annotations

import importlib
import os

from iclab.errors import ConfigError
from iclab.experiments._base import PRESETS, Comparison, Experiment, lazy

__all__ = ["Experiment", "Comparison", "PRESETS", "lazy", "register", "get_experiment", "experiment_names", "all_experiments"]

_MODULES = (
    "temperature",
    "temperature_gpt2",
    "temperature_llm",
    "multihead",
    "ood",
    "dispersion",
    "categorical",
)
_REGISTRY: dict[str, Experiment] = {}
_loaded = False


def register(exp: Experiment) -> Experiment:
    _REGISTRY[exp.name] = exp
    return exp


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for mod in _MODULES:
        name = f"{__name__}.{mod}"
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # a real missing dependency inside the module: surface it
                raise
    for name in filter(None, (m.strip() for m in os.environ.get("ICLAB_EXPERIMENT_MODULES", "").split(","))):
        importlib.import_module(name)


def all_experiments() -> list[Experiment]:
    _load_all()
    return sorted(_REGISTRY.values(), key=lambda e: (e.order, e.name))


def experiment_names() -> list[str]:
    return [e.name for e in all_experiments()]


def get_experiment(name: str) -> Experiment:
    _load_all()
    if name not in _REGISTRY:
        raise ConfigError("experiment", name, "one of " + ", ".join(experiment_names()))
    return _REGISTRY[name]
