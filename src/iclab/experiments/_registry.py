"""The registry of experiments: built-in paper packages and a user's own modules.

Each paper package (``iclab.experiments.<paper>``) registers its experiments with :func:`register` when it is
imported. The registry imports them on first use, so ``import iclab.experiments`` stays light. Extra modules (a
user's own experiments, or test fixtures) come from the comma-separated environment variable
``ICLAB_EXPERIMENT_MODULES``; spawned workers inherit it.
"""

from __future__ import annotations

import importlib

from iclab.errors import ConfigError
from iclab.experiments._contract import Experiment
from iclab.settings import setting

__all__ = ["register", "get_experiment", "experiment_names", "all_experiments", "paper_experiments", "PAPER_PACKAGES"]

# One sub-package per paper, in report order.
PAPER_PACKAGES = ("temperature", "ood", "dispersion", "multihead", "categorical")
_REGISTRY: dict[str, Experiment] = {}
_loaded = False


def register(exp: Experiment) -> Experiment:
    """Add ``exp`` to the registry (a later registration of the same name replaces the earlier one)."""
    _REGISTRY[exp.name] = exp
    return exp


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for paper in PAPER_PACKAGES:
        importlib.import_module(f"iclab.experiments.{paper}")
    for name in setting("ICLAB_EXPERIMENT_MODULES"):
        importlib.import_module(name)


def all_experiments() -> list[Experiment]:
    """Every registered experiment, in report order."""
    _load_all()
    return sorted(_REGISTRY.values(), key=lambda e: (e.order, e.name))


def paper_experiments() -> list[Experiment]:
    """The experiments of iclab's own paper packages, in report order (without those of
    ``ICLAB_EXPERIMENT_MODULES``): what the reference runs and the generated docs cover."""
    return [e for e in all_experiments() if _in_paper_package(e)]


def _in_paper_package(exp: Experiment) -> bool:
    """Whether ``exp`` is laid out in one of iclab's paper packages (``Experiment.in_package``): its cell function
    is a ``lazy`` reference into ``iclab.experiments.<paper>``. A user's or a test's experiment, even one registered
    under a paper experiment's name, is not."""
    target = getattr(exp.cells, "target", "")
    return any(target.startswith(f"iclab.experiments.{paper}.") for paper in PAPER_PACKAGES)


def experiment_names() -> list[str]:
    """Names of every registered experiment, in report order."""
    return [e.name for e in all_experiments()]


def get_experiment(name: str) -> Experiment:
    """The experiment called ``name``; a ConfigError listing the registered names otherwise."""
    _load_all()
    if name not in _REGISTRY:
        raise ConfigError("experiment", name, "one of " + ", ".join(experiment_names()))
    return _REGISTRY[name]
