"""The grid and the cell function of the ``dispersion`` experiment (arXiv:2410.01104; docs/papers/dispersion.md §5.1).

Every cell names its ``part`` and its ``seed``: ``retrieval`` cells (one per trained max-retrieval model:
``normaliser``, ``seed``), ``delta`` cells (one per pretrained ``model``), ``clrs`` cells (one per ``task``,
``attention`` normaliser and ``seed``) and ``real`` cells (one per pretrained ``model`` and text segment ``seed``).
Nothing is shared between cells.
"""

from __future__ import annotations

from iclab.experiments.dispersion.clrs import run_clrs_cell
from iclab.experiments.dispersion.config import DispersionConfig
from iclab.experiments.dispersion.llm_spread import run_delta_cell
from iclab.experiments.dispersion.real_dispersion import run_real_cell
from iclab.experiments.dispersion.retrieval import run_retrieval_cell

__all__ = ["cells", "run_cell", "shared"]

_PARTS = {"retrieval": run_retrieval_cell, "delta": run_delta_cell, "clrs": run_clrs_cell, "real": run_real_cell}


def cells(config: DispersionConfig) -> list[dict]:
    """Softmax max-retrieval models first, then the other normalisers, the δ models, the CLRS-style models and the
    real models' dispersion."""
    out = [{"part": "retrieval", "normaliser": "softmax", "seed": s} for s in range(config.seeds)]
    out += [{"part": "retrieval", "normaliser": v, "seed": s} for v in config.variants if v != "softmax"
            for s in range(config.variant_seeds)]
    out += [{"part": "delta", "model": m, "seed": 0} for m in config.delta_models]
    out += [{"part": "clrs", "task": t, "attention": a, "seed": s} for t in config.clrs_tasks
            for a in ("softmax", "adaptive_softmax") for s in range(config.clrs_seeds)]
    out += [{"part": "real", "model": m, "seed": s} for m in config.real_models for s in range(config.real_segments)]
    return out


def run_cell(config: DispersionConfig, cell: dict, shared=None) -> dict:
    """The metrics of one cell (see the ``run_*_cell`` function of its part)."""
    return _PARTS[cell["part"]](config, cell)


def shared(config: DispersionConfig) -> None:
    """Nothing is computed once for all cells."""
    return None
