"""Config of ``temperature-llm``: attention temperature for a real causal LM under noisy in-context
demonstrations, the LLM experiment of arXiv:2511.01292 (Demir & Doğan, §5.2, Fig. 3; docs/papers/temperature.md
§5.3–5.4)."""

from __future__ import annotations

from dataclasses import dataclass

from iclab.config import Config, check_int, check_probability
from iclab.errors import ConfigError

__all__ = ["TemperatureLLMConfig", "PRESETS"]


@dataclass(frozen=True)
class TemperatureLLMConfig(Config):
    """Settings of ``temperature-llm``.

    Fields:
        model: ``smollm2`` (installed package), any local folder or a hub id in the local cache.
        tasks: task names of :data:`iclab.hf.QA_TASKS` (``capital``, ``antonym``, ``continent``, ``demonym``).
        noise_ratios: fractions of corrupted demonstrations (EM vs τ and best τ vs noise; paper Fig. 3b).
        n_demos: demonstrations per prompt for the noise sweep (paper: 6).
        demo_counts: demonstration counts for EM vs #demos at ``demo_noise`` (Fig. 3a); empty to skip.
        demo_noise: noise ratio of the #demos sweep (paper: 0.6).
        taus: global temperature grid (must contain 1.0).
        moment_rule: also evaluate the per-layer moment-rule τ (note §5.4).
        adaptive: also evaluate the entropy-adaptive temperature.
        n_questions: evaluation questions per cell (split in two halves for the held-out τ choice).
        repeats: Monte-Carlo repeats (fresh questions and demonstrations).
        max_new_tokens: greedy tokens per answer.
        batch_size: prompts per forward.
        threads: torch threads in a cell (0: leave as the executor set it).
        device: torch device of the model (``cpu``, ``cuda``, ``cuda:1`` …).
        seed: base seed.
    """

    model: str = "smollm2"
    tasks: tuple[str, ...] = ("capital", "antonym", "continent", "demonym")
    noise_ratios: tuple[float, ...] = (0.0, 0.2, 0.4, 0.6, 0.8)
    n_demos: int = 6
    demo_counts: tuple[int, ...] = (1, 2, 4, 6, 8, 12)
    demo_noise: float = 0.6
    taus: tuple[float, ...] = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0)
    moment_rule: bool = True
    adaptive: bool = True
    n_questions: int = 100
    repeats: int = 5
    max_new_tokens: int = 6
    batch_size: int = 25
    threads: int = 0
    device: str = "cpu"
    seed: int = 0

    def __post_init__(self) -> None:
        from iclab.hf import QA_TASKS

        if not isinstance(self.model, str) or not self.model:
            raise ConfigError("model", self.model, "'smollm2', a local path or a hub id")
        if not self.tasks or any(t not in QA_TASKS for t in self.tasks):
            raise ConfigError("tasks", self.tasks, "a non-empty subset of " + ", ".join(QA_TASKS))
        for r in (*self.noise_ratios, self.demo_noise):
            check_probability("noise_ratios", r)
        check_int("n_demos", self.n_demos, 1)
        if any(not isinstance(k, int) or k < 0 for k in self.demo_counts):
            raise ConfigError("demo_counts", self.demo_counts, "integers >= 0")
        if not self.taus or any(not isinstance(t, (int, float)) or not t > 0 for t in self.taus) or 1.0 not in self.taus:
            raise ConfigError("taus", self.taus, "temperatures > 0 including 1.0 (the stock model)")
        check_int("n_questions", self.n_questions, 2)
        check_int("repeats", self.repeats, 1)
        check_int("max_new_tokens", self.max_new_tokens, 1)
        check_int("batch_size", self.batch_size, 1)
        check_int("threads", self.threads, 0)
        check_int("seed", self.seed, 0)
        if not isinstance(self.device, str) or not (self.device == "cpu" or self.device.startswith(("cuda", "mps"))):
            raise ConfigError("device", self.device, "'cpu', 'cuda', 'cuda:N' or 'mps'")


QUICK = TemperatureLLMConfig(tasks=("capital",), noise_ratios=(0.0, 0.6), taus=(0.75, 1.0, 1.5), demo_counts=(),
                             n_questions=30, repeats=2, adaptive=False, max_new_tokens=5, batch_size=15)
FULL = TemperatureLLMConfig()
PRESETS = {"quick": QUICK, "full": FULL}
