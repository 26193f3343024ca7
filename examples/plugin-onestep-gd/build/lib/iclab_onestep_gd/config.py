"""The config of ``onestep-gd`` (one documented line per field) and its presets."""

from dataclasses import dataclass

from iclab.config import Config, int_field, number_field


@dataclass(frozen=True)
class OneStepConfig(Config):
    """Fields:
    d: input dimension.
    n: in-context examples per prompt.
    prompts: prompts per seed (the units of the risk estimates are seeds).
    eta: the GD step size (η = 1 is the step of arXiv:2212.07677's Prop. 1 with its data scaling).
    noise: label noise σ.
    seeds: seeds 0 … seeds−1, one cell each.
    seed: the base seed.
    """

    d: int = int_field(5)
    n: int = int_field(20)
    prompts: int = int_field(2000)
    eta: float = number_field(1.0, above=0.0)
    noise: float = number_field(0.1, low=0.0)
    seeds: int = int_field(5)
    seed: int = int_field(0, low=0)


PRESETS = {"quick": OneStepConfig(), "full": OneStepConfig(prompts=20000, seeds=10)}
