r"""Prompts of ``temperature-llm`` in groups that share their demonstrations (arXiv:2511.01292 §5.2;
docs/papers/temperature.md §5.3): the questions of one group see the same ``k`` demonstrations, of which exactly
:math:`\lfloor rk + 1/2\rfloor` carry a "relevant but wrong" answer, so the demonstration prefix is run once per
group and τ (``iclab.hf.greedy_match``). When a task has at most ``k`` distinct answers (``continent-label``), each
group's demonstrations show every answer once (else the query's answer could be absent), the rest drawn at random.
Everything is a pure function of ``(seed, task, k, r, group)``: every τ, model and executor sees the same prompts.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from iclab.data import generator_for
from iclab.data import QATask, n_noisy

__all__ = ["DemoGroup", "demo_groups", "question_split", "screen_split"]


@dataclass(frozen=True)
class DemoGroup:
    """``prefix``: the k demonstrations (noisy); ``clean_prefix``: the same ones with gold answers; ``queries`` the open
    question blocks; ``answers`` the gold continuations (leading space); ``noisy`` the corrupted demonstrations."""

    prefix: str
    clean_prefix: str
    queries: list[str]
    answers: list[str]
    noisy: int


def question_split(task: QATask, n_questions: int, seed: int, reserve: int = 40) -> tuple[list[int], list[int]]:
    """Disjoint (question, demonstration pool) indices: ``n_questions`` questions (0: all but ``reserve`` items)."""
    n = len(task.items)
    q = n - reserve if n_questions == 0 else min(n_questions, n - reserve)
    perm = torch.randperm(n, generator=generator_for(seed, "split", task.name)).tolist()
    return perm[:q], perm[q:]


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


def _demonstrations(task: QATask, pool: list[int], k: int, g: torch.Generator) -> list[int]:
    """``k`` pool items; one per distinct answer first when the task has at most ``k`` of them."""
    order = [pool[j] for j in torch.randperm(len(pool), generator=g).tolist()]
    distinct = {task.items[i].answer for i in pool}
    picked: list[int] = []
    if len(distinct) <= k:
        seen: set[str] = set()
        for i in order:
            if task.items[i].answer not in seen:
                seen.add(task.items[i].answer)
                picked.append(i)
    picked += [i for i in order if i not in picked][: k - len(picked)]
    return [picked[j] for j in torch.randperm(len(picked), generator=g).tolist()]


def demo_groups(
    task: QATask,
    questions: list[int],
    pool: list[int],
    k: int,
    noise_ratio: float,
    seed: int,
    group_size: int,
    stream: str = "group-demos",
) -> list[DemoGroup]:
    """Consecutive chunks of ``group_size`` questions, each with its own ``k`` shared demonstrations (drawn from the
    random ``stream``: ``group-demos`` for the evaluation, ``screen-demos`` for the screen)."""
    m = n_noisy(k, noise_ratio)
    groups = []
    for start in range(0, len(questions), group_size):
        g = generator_for(seed, task.name, stream, k, f"{noise_ratio:.4f}", start // group_size)
        demos = _demonstrations(task, pool, k, g)
        bad = set(torch.randperm(k, generator=g)[:m].tolist())
        picks = torch.randint(0, 1 << 30, (k,), generator=g).tolist()
        text, clean = [], []
        for j, di in enumerate(demos):
            item = task.items[di]
            text.append(task.block(item.question, item.wrong[picks[j] % len(item.wrong)] if j in bad else item.answer))
            clean.append(task.block(item.question, item.answer))
        qs = questions[start : start + group_size]
        groups.append(
            DemoGroup(
                "".join(text),
                "".join(clean),
                [task.block(task.items[i].question, None) for i in qs],
                [" " + task.items[i].answer for i in qs],
                len(bad),
            )
        )
    return groups
