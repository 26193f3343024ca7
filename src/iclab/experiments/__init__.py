"""Experiments: one sub-package per paper, each registering its experiments (see ``_contract``).

``iclab.experiments.temperature`` (the one-layer theory experiment, ``.llm`` and ``.gpt2``),
``iclab.experiments.ood``, ``.dispersion``, ``.multihead`` and ``.categorical``; installed plugins add theirs
through the entry-point group ``iclab.experiments`` (:data:`PLUGIN_GROUP`). Nothing below this layer imports
it; executors reach a cell function through the :class:`Experiment` contract.
"""

from iclab.experiments._contract import PRESETS as PRESETS
from iclab.experiments._contract import Experiment as Experiment
from iclab.experiments._contract import lazy as lazy
from iclab.claims import Claim as Claim
from iclab.claims import COMPARISON_FIELDS as COMPARISON_FIELDS
from iclab.claims import Comparison as Comparison
from iclab.claims import judge_run as judge_run
from iclab.claims import family_summary as family_summary
from iclab.claims import chance_line as chance_line
from iclab.claims import settings_differ as settings_differ
from iclab.experiments._registry import PAPER_PACKAGES as PAPER_PACKAGES
from iclab.experiments._registry import all_experiments as all_experiments
from iclab.experiments._registry import paper_experiments as paper_experiments
from iclab.experiments._registry import experiment_names as experiment_names
from iclab.experiments._registry import get_experiment as get_experiment
from iclab.experiments._registry import experiment_origin as experiment_origin
from iclab.experiments._registry import PLUGIN_GROUP as PLUGIN_GROUP
from iclab.experiments._registry import register as register
from iclab.experiments._run import LoadedRun as LoadedRun
from iclab.experiments._run import load_run as load_run
from iclab.experiments._run import run_experiment as run_experiment
from iclab.experiments._run import run_dir_for as run_dir_for
from iclab.experiments._run import sweep_for as sweep_for

__all__ = [
    "Experiment",
    "Claim",
    "Comparison",
    "COMPARISON_FIELDS",
    "judge_run",
    "family_summary",
    "chance_line",
    "settings_differ",
    "PRESETS",
    "lazy",
    "register",
    "get_experiment",
    "experiment_origin",
    "PLUGIN_GROUP",
    "experiment_names",
    "all_experiments",
    "paper_experiments",
    "PAPER_PACKAGES",
    "run_experiment",
    "sweep_for",
    "run_dir_for",
    "load_run",
    "LoadedRun",
]
