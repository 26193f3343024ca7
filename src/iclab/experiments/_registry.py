"""The registry of experiments: built-in paper packages, installed plugins and a user's own modules.

Each paper package (``iclab.experiments.<paper>``) registers its experiments with :func:`register` when it is
imported. The registry imports them on first use, so ``import iclab.experiments`` stays light. Two more sources
add experiments without editing iclab:

- **plugins**: a package installed with pip that declares an entry point in the group ``iclab.experiments``
  (``[project.entry-points."iclab.experiments"] my_paper = "my_paper"``). The entry point names a module whose
  import registers its experiments, or an :class:`Experiment` (or a list of them), which is registered;
- **modules** named in the comma-separated environment variable ``ICLAB_EXPERIMENT_MODULES`` (a user's own
  experiments, or test fixtures); spawned workers inherit it.

Every experiment remembers where it came from (:func:`experiment_origin`), which ``iclab list`` shows. A plugin
that cannot be imported is an error naming the plugin and its distribution, never an experiment silently missing.
"""

from __future__ import annotations

import importlib
from importlib.metadata import EntryPoint, entry_points

from iclab.errors import ConfigError
from iclab.experiments._contract import Experiment
from iclab.settings import setting

__all__ = [
    "register",
    "get_experiment",
    "experiment_names",
    "all_experiments",
    "paper_experiments",
    "experiment_origin",
    "PAPER_PACKAGES",
    "PLUGIN_GROUP",
]

# One sub-package per paper, in report order.
PAPER_PACKAGES = ("temperature", "ood", "dispersion", "multihead", "categorical", "scaling")
# The entry-point group through which installed packages register experiments.
PLUGIN_GROUP = "iclab.experiments"
_REGISTRY: dict[str, Experiment] = {}
_ORIGIN: dict[str, str] = {}
_loading_from: str | None = None  # the source being imported by _load_all, recorded by register()
_loaded = False


def register(exp: Experiment) -> Experiment:
    """Add ``exp`` to the registry (a later registration of the same name replaces the earlier one)."""
    _REGISTRY[exp.name] = exp
    _ORIGIN[exp.name] = _loading_from or "registered in code"
    return exp


def _import_from(origin: str, module: str) -> None:
    """Import ``module`` with the experiments it registers recorded as coming from ``origin``."""
    global _loading_from
    _loading_from = origin
    try:
        importlib.import_module(module)
    finally:
        _loading_from = None


def _plugin_origin(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return f"plugin {dist.name} {dist.version}" if dist is not None else f"plugin {ep.name}"


def _load_plugin(ep: EntryPoint) -> None:
    """Import one entry point of :data:`PLUGIN_GROUP` and register what it names; a ConfigError naming the plugin
    when it cannot be imported or names neither a module nor experiments."""
    global _loading_from
    origin = _plugin_origin(ep)
    _loading_from = origin
    try:
        loaded = ep.load()
    except Exception as exc:  # a plugin's own bug, reported as the plugin's, with its cause
        raise ConfigError(
            f"plugin {ep.name!r} ({origin})",
            ep.value,
            f"an importable module or object registering iclab experiments (importing it raised "
            f"{type(exc).__name__}: {exc})",
        ) from exc
    finally:
        _loading_from = None
    if isinstance(loaded, Experiment):
        loaded = [loaded]
    if isinstance(loaded, (list, tuple)) and all(isinstance(e, Experiment) for e in loaded):
        _loading_from = origin
        try:
            for exp in loaded:
                register(exp)
        finally:
            _loading_from = None
    elif not hasattr(loaded, "__path__") and not hasattr(loaded, "__file__"):
        raise ConfigError(
            f"plugin {ep.name!r} ({origin})",
            ep.value,
            f"a module, an Experiment or a list of Experiments (it names a {type(loaded).__name__})",
        )


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    try:
        for paper in PAPER_PACKAGES:
            _import_from("iclab", f"iclab.experiments.{paper}")
        for ep in sorted(entry_points(group=PLUGIN_GROUP), key=lambda e: e.name):
            _load_plugin(ep)
        for name in setting("ICLAB_EXPERIMENT_MODULES"):
            _import_from(f"module {name} (ICLAB_EXPERIMENT_MODULES)", name)
    except BaseException:
        _loaded = False  # the next call says the same error again, instead of a registry silently missing some
        raise


def all_experiments() -> list[Experiment]:
    """Every registered experiment, in report order."""
    _load_all()
    return sorted(_REGISTRY.values(), key=lambda e: (e.order, e.name))


def paper_experiments() -> list[Experiment]:
    """The experiments of iclab's own paper packages, in report order (without those of plugins or
    ``ICLAB_EXPERIMENT_MODULES``): what the reference runs and the generated docs cover."""
    return [e for e in all_experiments() if _in_paper_package(e)]


def _in_paper_package(exp: Experiment) -> bool:
    """Whether ``exp`` is laid out in one of iclab's paper packages (``Experiment.in_package``): its cell function
    is a ``lazy`` reference into ``iclab.experiments.<paper>``. A user's or a test's experiment, even one registered
    under a paper experiment's name, is not."""
    target = getattr(exp.cells, "target", "")
    return any(target.startswith(f"iclab.experiments.{paper}.") for paper in PAPER_PACKAGES)


def experiment_origin(name: str) -> str:
    """Where the experiment ``name`` was registered from: ``iclab`` (a paper package), ``plugin <distribution>
    <version>`` (an installed entry point of :data:`PLUGIN_GROUP`) or ``module <name> (ICLAB_EXPERIMENT_MODULES)``."""
    get_experiment(name)
    return _ORIGIN.get(name, "registered in code")


def experiment_names() -> list[str]:
    """Names of every registered experiment, in report order."""
    return [e.name for e in all_experiments()]


def get_experiment(name: str) -> Experiment:
    """The experiment called ``name``; a ConfigError listing the registered names otherwise."""
    _load_all()
    if name not in _REGISTRY:
        raise ConfigError("experiment", name, "one of " + ", ".join(experiment_names()))
    return _REGISTRY[name]
