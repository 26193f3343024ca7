"""What an experiment is: a config with presets, a grid of independent cells, a pure cell function, figure
functions and its claims about the paper, as records.

A *cell* is a small JSON-able dict: one point of the grid. Every cell names its ``part`` (which measurement of
the experiment it is) and its ``seed``. ``run_cell(config, cell, shared)`` returns a JSON-able dict of metrics
(numbers, strings, or lists of numbers for curves). Cells must be pure: the same ``(config, cell)`` gives the
same row on any executor and in any process. Heavy inputs needed by many cells (a trained model, a
pretraining covariance) come from ``shared(config)``, computed once per run in the driver and handed to
workers by reference.

A paper package ``iclab.experiments.<paper>`` (or ``<paper>.<variant>``) lays an experiment out in the same
files, which :meth:`Experiment.in_package` wires up by name:

========================  ==========================================================================
``__init__.py``           the :class:`Experiment` and its registration
``config.py``             the frozen config dataclass (one documented line per field) and ``PRESETS``
``cells.py``              ``cells(config)``, ``run_cell(config, cell, shared)``, ``shared(config)``,
                          ``budget(config)``
``figures.py``            ``figures(config, results, figure_dir) -> [png paths]``
``claims.py``             the claims as records (:mod:`iclab.claims._records`): ``claims(config) ->
                          [ClaimRecord]`` (declared before the run) and, only where the records read rows
                          derived from the results, ``judged_rows(config, results) -> DataFrame``; the one judge
                          judges them (:class:`judged`: no package writes a ``compare``)
``statistics.py``         (only where needed) the package's own statistics that its records name
``notes.py``              ``notes(config, results) -> str``: where the run and the paper differ, and why
========================  ==========================================================================

``budget(config) -> list[iclab.budget.Need]`` is what the largest cell needs from the machine: each entry names the
config field that drives a part of its memory (bytes) and time (CPU seconds). The driver checks it once, before
any run folder is made, and refuses a config that cannot fit with one error naming the field and the limit
(``--no-budget-check`` skips the check). It is also where a config is checked against this machine: a device it
lacks, a model that is not on disk (``ConfigError``, whether or not the budget is checked).
"""

from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import pandas as pd

from iclab.config import Config
from iclab.errors import ConfigError
from iclab.claims import judge_records

__all__ = ["Experiment", "PRESETS", "judged", "lazy"]

_FILES = (
    "an experiment package (Experiment.in_package) defines cells(config), run_cell(config, cell, shared), "
    "shared(config) (it may return None) and budget(config) in cells.py, figures(config, results, figure_dir) in "
    "figures.py, claims(config) in claims.py and notes(config, results) in notes.py"
)
PRESETS = ("quick", "full")  # every experiment has these; the paper packages also have "paper"


@dataclass(frozen=True)
class lazy:  # noqa: N801 - reads as a function at the call site
    """A picklable reference ``"package.module:function"`` imported on first call.

    Experiment packages stay light to import (``iclab list`` imports all of them) while their cell, figure and
    comparison code imports matplotlib, transformers or sklearn only when it runs. A ``lazy`` cell function
    crosses to worker processes as its name.
    """

    target: str

    def resolve(self) -> Callable:
        """The function named by ``target``; an error naming what is missing (the module, or the function in it)
        and what an experiment package's files define (module docstring), never a bare ``AttributeError``."""
        module, _, attr = self.target.partition(":")
        try:
            found = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise  # a module the experiment's own code imports: its own error says which
            raise ConfigError(self.target, message=f"experiment module {module} is missing: {_FILES}") from exc
        if not callable(getattr(found, attr, None)):
            raise ConfigError(self.target, message=f"{module} defines no function {attr}(): {_FILES}")
        return getattr(found, attr)

    def __call__(self, *args, **kwargs):
        return self.resolve()(*args, **kwargs)


@dataclass(frozen=True)
class judged:  # noqa: N801 - reads as a function at the call site
    """The ``compare`` of a paper package: the one judge on the records it declares,
    ``judge_records(claims(config), config, rows)`` (:func:`iclab.claims._records.judge_records`), where ``rows``
    is the results, or ``claims.judged_rows(config, results)`` when the package's records read rows derived from
    them. Picklable, and its package is imported on first call, as with :class:`lazy`."""

    package: str

    def __call__(self, config: Any, results: pd.DataFrame) -> dict:
        module = importlib.import_module(f"{self.package}.claims")
        rows = getattr(module, "judged_rows", None)
        return judge_records(module.claims(config), config, results if rows is None else rows(config, results))

    def planned(self, config: Any) -> list[dict] | None:
        """The run's grid, ``cells(config)`` of the package's ``cells.py`` (None where it has none): the row-level
        calibration's "one unit lost" and "one cell failed" take rows from a complete run, and a record that reads a
        cell of this grid without a row is then "not measured", as a run's failed cell makes it (issue 43, item 4)."""
        try:
            cells = importlib.import_module(f"{self.package}.cells")
        except ModuleNotFoundError as exc:
            if exc.name != f"{self.package}.cells":
                raise
            return None
        return list(cells.cells(config)) if callable(getattr(cells, "cells", None)) else None


@dataclass(frozen=True)
class Experiment:
    """A registered experiment (see the module docstring).

    Fields:
        name: CLI name, e.g. ``"temperature"``.
        paper: paper key (``temperature``, ``ood``, ``dispersion``, ``multihead``, ``categorical``).
        title: one-line title for the report.
        claim: markdown paragraph: what the paper claims that this experiment tests.
        config_cls: frozen dataclass deriving from :class:`iclab.config.Config`, with a ``seed: int`` field.
        presets: ``{"quick": cfg, "full": cfg}`` at least; the paper packages add ``"paper"`` (the paper's settings).
        cells: ``config -> list[cell dict]``.
        run_cell: ``(config, cell, shared) -> metrics dict``; a module-level function or a :class:`lazy`
            (it is pickled to worker processes).
        figures: ``(config, results DataFrame, figure_dir) -> list of PNG paths`` (each with a CSV beside it).
        compare: ``(config, results) -> {claim id: Verdict}`` (see :mod:`iclab.claims._judge`; a paper
            package's is :class:`judged`).
        claims: ``config -> list[Claim]``, declared before the run (fixes the report's denominator).
        shared: optional ``config -> object`` computed once per run, in the driver (or ahead, by the helper of
            ``iclab reproduce``: a function of the config alone, so the value is the same).
        budget: optional ``config -> list[Need]`` (module docstring), checked before the run folder is made.
        notes: optional ``(config, results) -> markdown`` with disagreements and why.
        order: position in ``iclab list`` and the report.
    """

    name: str
    paper: str
    title: str
    claim: str
    config_cls: type
    presets: Mapping[str, Config]
    cells: Callable[[Any], list[dict]]
    run_cell: Callable[[Any, dict, Any], dict]
    figures: Callable[[Any, pd.DataFrame, Path], list[Path]]
    compare: Callable[[Any, pd.DataFrame], Mapping[str, Any]]
    claims: Callable[[Any], list]
    shared: Callable[[Any], Any] | None = None
    notes: Callable[[Any, pd.DataFrame], str] | None = None
    budget: Callable[[Any], list] | None = None
    order: int = 100

    def __post_init__(self) -> None:
        missing = [p for p in PRESETS if p not in self.presets]
        if missing:
            raise ValueError(f"experiment {self.name!r} lacks presets {missing}")
        if "seed" not in {f.name for f in dataclasses.fields(self.config_cls)}:
            raise ValueError(f"experiment {self.name!r}: config {self.config_cls.__name__} needs a 'seed' field")

    @classmethod
    def in_package(
        cls,
        package: str,
        *,
        name: str,
        paper: str,
        title: str,
        claim: str,
        config_cls: type,
        presets: Mapping[str, Config],
        order: int = 100,
    ) -> "Experiment":
        """An experiment laid out in ``package`` with the standard file names (module docstring)."""
        return cls(
            name=name,
            paper=paper,
            title=title,
            claim=claim,
            config_cls=config_cls,
            presets=presets,
            cells=lazy(f"{package}.cells:cells"),
            run_cell=lazy(f"{package}.cells:run_cell"),
            shared=lazy(f"{package}.cells:shared"),
            figures=lazy(f"{package}.figures:figures"),
            compare=judged(package),
            notes=lazy(f"{package}.notes:notes"),
            claims=lazy(f"{package}.claims:claims"),
            budget=lazy(f"{package}.cells:budget"),
            order=order,
        )

    def config(self, preset: str = "quick", overrides: Mapping[str, Any] | None = None, seed: int | None = None):
        """The preset config with ``--set`` overrides and ``--seed`` applied, validated and normalised.

        Normalised: every value has its field's declared type (a preset's ``thetas_deg=(0, 15)`` in a
        ``tuple[float, ...]`` field becomes ``(0.0, 15.0)``), exactly as ``--set thetas_deg=0,15`` gives, so a
        value that keys random draws means the same draws however the config was written."""
        if preset not in self.presets:
            raise ConfigError("preset", preset, "one of " + ", ".join(self.presets))
        cfg = self.presets[preset].with_overrides(dict(overrides or {}))
        if seed is not None:
            cfg = cfg.with_overrides({"seed": seed})
        return self.config_cls.from_dict(cfg.to_dict())
