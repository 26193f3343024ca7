r"""Prompts of in-context question answering with noisy demonstrations, built from the tasks of
:mod:`iclab.data._qa_tasks`: the LLM experiment of arXiv:2511.01292 (Demir & Doğan, §5.2 and Fig. 3;
docs/papers/temperature.md §5.3).

A prompt holds ``k`` demonstrations and the query; exactly :math:`\lfloor rk + 1/2\rfloor` of the ``k``
demonstrations (noise ratio ``r``, :func:`n_noisy`) carry a wrong answer, at random positions. Evaluation questions
and the demonstration pool are disjoint (:func:`split_items`, :func:`question_split`). :func:`build_prompts` draws
each question's own demonstrations from ``(seed, i)``; :func:`demo_groups` lets consecutive questions share one set
of demonstrations (one prefix, run once per group and τ), drawn from ``(seed, task, stream, k, r, group)``, and, when
a task has at most ``k`` distinct answers (``continent-label``), shows every answer once (else the query's answer
could be absent). Every draw is a pure function of its key: every τ, model and executor sees the same prompts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import torch

from iclab.data._qa_tasks import QATask
from iclab.data._rng import generator_for
from iclab.errors import ConfigError

__all__ = ["PromptSet", "DemoGroup", "n_noisy", "split_items", "question_split", "build_prompts", "demo_groups"]


@dataclass(frozen=True)
class PromptSet:
    """Prompts for ``Q`` questions with ``k`` demonstrations each.

    ``prompts`` carry the noisy demonstrations; ``clean_prompts`` the same demonstrations with gold answers
    (for the clean-vs-noisy moment rule, docs/papers/temperature.md §5.4); ``noisy`` (Q, k) bool marks corrupted ones.
    """

    prompts: list[str]
    clean_prompts: list[str]
    answers: list[str]
    noisy: torch.Tensor  # (Q, k) bool


@dataclass(frozen=True)
class DemoGroup:
    """``prefix``: the k demonstrations (noisy); ``clean_prefix``: the same ones with gold answers; ``queries`` the open
    question blocks; ``answers`` the gold continuations (leading space); ``noisy`` the corrupted demonstrations."""

    prefix: str
    clean_prefix: str
    queries: list[str]
    answers: list[str]
    noisy: int


def n_noisy(k: int, noise_ratio: float) -> int:
    """Number of corrupted demonstrations among ``k``: ``floor(noise_ratio · k + 1/2)``."""
    return int(math.floor(noise_ratio * k + 0.5 + 1e-9))


def split_items(task: QATask, n_eval: int, seed: int) -> tuple[list[int], list[int]]:
    """Disjoint (evaluation question indices, demonstration pool indices), fixed by ``seed``."""
    n = len(task.items)
    if n_eval >= n - 8:
        raise ConfigError("n_questions", n_eval, f"at most {n - 9} for task {task.name!r} ({n} items)")
    perm = torch.randperm(n, generator=generator_for(seed, "split", task.name)).tolist()
    return perm[:n_eval], perm[n_eval:]


def question_split(task: QATask, n_questions: int, seed: int, reserve: int = 40) -> tuple[list[int], list[int]]:
    """Disjoint (question, demonstration pool) indices: ``n_questions`` questions (0: all but ``reserve`` items),
    never more than leave ``reserve`` items to the pool; the same permutation as :func:`split_items`."""
    n = len(task.items)
    q = n - reserve if n_questions == 0 else min(n_questions, n - reserve)
    perm = torch.randperm(n, generator=generator_for(seed, "split", task.name)).tolist()
    return perm[:q], perm[q:]


def _demonstrations_text(task: QATask, demos: Sequence[int], bad, picks: Sequence[int]) -> tuple[str, str]:
    """The demonstration blocks of pool items ``demos``: demonstration j answered by its wrong answer
    ``picks[j] mod (number of wrong answers)`` where ``j`` is ``bad``, else by its gold answer; and all gold."""
    text, clean = [], []
    for j, di in enumerate(demos):
        item = task.items[di]
        text.append(task.block(item.question, item.wrong[picks[j] % len(item.wrong)] if bad[j] else item.answer))
        clean.append(task.block(item.question, item.answer))
    return "".join(text), "".join(clean)


def build_prompts(
    task: QATask, questions: Sequence[int], pool: Sequence[int], k: int, noise_ratio: float, seed: int
) -> PromptSet:
    """Prompts with ``k`` demonstrations from ``pool`` per question, ``n_noisy(k, r)`` of them corrupted.

    Question ``i``'s demonstrations, their corrupted positions and wrong answers come from
    ``generator_for(seed, task, "demos", k, r, i)``: the same for every τ, model and executor.
    """
    if not 0.0 <= noise_ratio <= 1.0:
        raise ConfigError("noise_ratio", noise_ratio, "a number in [0, 1]")
    if k < 0 or k > len(pool):
        raise ConfigError("n_demos", k, f"an integer in [0, {len(pool)}]")
    m = n_noisy(k, noise_ratio)
    prompts, clean, answers = [], [], []
    noisy = torch.zeros(len(questions), k, dtype=torch.bool)  # (Q, k)
    for row, qi in enumerate(questions):
        g = generator_for(seed, task.name, "demos", k, f"{noise_ratio:.4f}", qi)
        demo = [pool[j] for j in torch.randperm(len(pool), generator=g)[:k].tolist()]
        bad = torch.randperm(k, generator=g)[:m] if k else torch.zeros(0, dtype=torch.long)
        noisy[row, bad] = True
        picks = torch.randint(0, 1 << 30, (k,), generator=g).tolist()
        text, text_clean = _demonstrations_text(task, demo, noisy[row].tolist(), picks)
        query = task.block(task.items[qi].question, None)
        prompts.append(text + query)
        clean.append(text_clean + query)
        answers.append(task.items[qi].answer)
    return PromptSet(prompts, clean, answers, noisy)


def _group_demonstrations(task: QATask, pool: list[int], k: int, g: torch.Generator) -> list[int]:
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
    random ``stream``, e.g. ``group-demos`` for an evaluation and ``screen-demos`` for a screen)."""
    m = n_noisy(k, noise_ratio)
    groups = []
    for start in range(0, len(questions), group_size):
        g = generator_for(seed, task.name, stream, k, f"{noise_ratio:.4f}", start // group_size)
        demos = _group_demonstrations(task, pool, k, g)
        bad = set(torch.randperm(k, generator=g)[:m].tolist())
        picks = torch.randint(0, 1 << 30, (k,), generator=g).tolist()
        text, clean = _demonstrations_text(task, demos, [j in bad for j in range(len(demos))], picks)
        qs = questions[start : start + group_size]
        groups.append(
            DemoGroup(
                text,
                clean,
                [task.block(task.items[i].question, None) for i in qs],
                [" " + task.items[i].answer for i in qs],
                len(bad),
            )
        )
    return groups
