"""Variable tracking and common-word counting (``iclab.data.variable_tracking``, ``common_words``) and the four-task
dispatcher: deterministic per seed, sizes as asked, and every answer recovered from its prefix by a solver written
here (following the assignments back to a number; counting the words)."""

from collections import Counter

import pytest

from iclab.data import LONG_CONTEXT_TASKS, common_words, long_context_groups, variable_tracking
from iclab.errors import ConfigError


def resolve(prefix: str, var: str) -> tuple[str, int]:
    """The number a variable holds, by following ``VAR x = VAR y`` lines back; and the number of hops taken. Each
    assignment must come after the one it reads."""
    lines = prefix.strip().split("\n")
    where = {ln.split(" = ")[0][4:]: (i, ln.split(" = ")[1]) for i, ln in enumerate(lines) if ln.startswith("VAR ")}
    hops, (at, rhs) = 0, where[var]
    while rhs.startswith("VAR "):
        before, (at, rhs) = at, where[rhs[4:]]
        assert at < before  # the chain is in order
        hops += 1
    return rhs, hops


@pytest.mark.parametrize("hops", [1, 4])
def test_variable_tracking_answers_follow_the_chain(hops):
    groups = variable_tracking(37, 5, seed=3, hops=hops)
    assert groups == variable_tracking(37, 5, seed=3, hops=hops) and groups != variable_tracking(37, 5, 4, hops)
    for prefix, questions, answers in groups:
        lines = prefix.strip().split("\n")
        assert len(lines) == 37 + 2 * (hops + 1) and sum(ln.startswith("VAR ") for ln in lines) == 2 * (hops + 1)
        assert len(questions) == len(answers) == 2 and answers[0] != answers[1]
        for q, a in zip(questions, answers):
            var = q.split("\n")[1][4:].rstrip(" =")
            assert q.endswith(f"\nVAR {var} =") and resolve(prefix, var) == (a.strip(), hops)


def test_common_words_answer_is_the_most_frequent_word():
    groups = common_words(60, 4, seed=1)
    assert groups == common_words(60, 4, seed=1) and groups != common_words(60, 4, seed=2)
    for prefix, questions, answers in groups:
        lines = prefix.strip().split("\n")
        assert [ln.split(". ")[0] for ln in lines] == [str(i + 1) for i in range(60)]
        counts = Counter(ln.split(". ")[1] for ln in lines).most_common()
        assert counts[0] == (answers[0].strip(), 6) and counts[1][1] == 3 and counts[4][1] == 1
        assert questions == ["What is the most frequent word in the list above?\nAnswer:"]
    with pytest.raises(ConfigError, match="n_words"):
        common_words(10, 1, seed=0, top=5)  # 5 + 3 runners-up x 2 words do not fit in 10


def test_every_task_at_a_size_and_bad_values():
    for task in LONG_CONTEXT_TASKS:
        [(prefix, questions, answers)] = long_context_groups(task, 40, 1, seed=0)
        assert len(questions) == len(answers) >= 1 and len(prefix.strip().split("\n")) >= 40
        assert all(prefix.count(a.strip()) >= 1 for a in answers) and all(a.startswith(" ") for a in answers)
    with pytest.raises(ConfigError, match="task"):
        long_context_groups("ruler", 40, 1, seed=0)
    with pytest.raises(ConfigError, match="hops"):
        variable_tracking(10, 1, seed=0, hops=0)
