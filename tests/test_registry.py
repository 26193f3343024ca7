"""The experiment registry: which experiments are iclab's own paper experiments (what the reference runs and the
generated docs cover) is a property of the experiment, not of who registered it."""

import dataclasses

from iclab.experiments import get_experiment, paper_experiments, register
from iclab.experiments._registry import PAPER_PACKAGES, _REGISTRY


def test_the_paper_experiments_are_those_of_the_paper_packages():
    names = [e.name for e in paper_experiments()]
    assert {"temperature", "temperature-llm", "temperature-gpt2-regression", "ood", "dispersion", "multihead"} <= set(
        names
    )
    assert "categorical" in names and "scaling-rules" in names and len(names) == 8
    for e in paper_experiments():
        assert e.cells.target.split(".")[2] in PAPER_PACKAGES


def test_an_experiment_registered_under_a_paper_name_from_elsewhere_is_not_a_paper_experiment():
    real = get_experiment("ood")
    try:
        register(dataclasses.replace(real, cells=lambda config: []))  # a user's replacement, not a lazy package ref
        assert "ood" not in [e.name for e in paper_experiments()]
    finally:
        _REGISTRY["ood"] = real
    assert "ood" in [e.name for e in paper_experiments()]
