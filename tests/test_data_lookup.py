"""Key–value lists, pass-key haystacks, variable chains and common-word lists (``iclab.data``): deterministic per
seed, distinct keys, every question answered by a line of its own prefix."""

import pytest

from iclab.data import lookup_lists, passkey_haystacks


def test_lookup_lists():
    lists = lookup_lists(40, 3, 5, seed=2)
    assert lists == lookup_lists(40, 3, 5, seed=2) and len(lists) == 3
    assert lists != lookup_lists(40, 3, 5, seed=3)
    for prefix, queries, answers in lists:
        lines = prefix.strip().split("\n")
        assert len(lines) == 40 and len({ln.split(":")[0] for ln in lines}) == 40  # distinct keys
        assert len(queries) == len(answers) == 5
        for q, a in zip(queries, answers):
            key = q.split("\n")[1].rstrip(":")
            assert f"{key}:{a}" in lines and q == f"Look up {key} in the list above.\n{key}:"


def test_lookup_lists_ask_at_most_every_line():
    [(_, queries, _)] = lookup_lists(3, 1, 7, seed=0)
    assert len(queries) == 3 and len({q.split("\n")[1] for q in queries}) == 3


def test_passkey_haystacks():
    hay = passkey_haystacks(20, 3, seed=1, needles=4)
    assert hay == passkey_haystacks(20, 3, seed=1, needles=4) and len(hay) == 3
    for prefix, questions, answers in hay:
        lines = prefix.strip().split("\n")
        needles = [ln for ln in lines if ln.startswith("Pass key of ")]
        assert len(lines) == 24 and len(needles) == 4 == len(questions) == len(answers)
        assert len({ln.split()[3] for ln in needles}) == 4  # distinct keys
        for question, answer in zip(questions, answers):
            key = question.split("?")[0].split()[-1]
            assert f"Pass key of {key}:{answer}" in lines


def _resolve(lines: list[str], name: str) -> str:
    """The value of ``VAR name``, followed through the prefix's assignments (an independent reading of the task)."""
    assigned = dict(ln[4:].split(" = ") for ln in lines if ln.startswith("VAR "))
    value = assigned[name]
    while value.startswith("VAR "):
        value = assigned[value[4:]]
    return value


@pytest.mark.parametrize("hops", [1, 2, 5])
def test_variable_chains_need_every_hop_and_grow_with_the_filler(hops):
    from iclab.data import variable_chains

    chains = variable_chains(30, 4, seed=3, hops=hops)
    assert chains == variable_chains(30, 4, seed=3, hops=hops) and chains != variable_chains(30, 4, seed=4, hops=hops)
    for prefix, [question], [answer] in chains:
        lines = prefix.strip().split("\n")
        chain = [ln for ln in lines if ln.startswith("VAR ")]
        assert len(lines) == 30 + hops + 1 and len(chain) == hops + 1
        last = question.split("\n")[1].removeprefix("VAR ").removesuffix(" =")
        assert f" {_resolve(lines, last)}" == answer and answer.strip().isdigit()
        assert chain[0].endswith(answer.strip()) and all(" = VAR " in ln for ln in chain[1:])  # the hops, in order
    assert len(variable_chains(300, 1, seed=3, hops=hops)[0][0]) > 5 * len(chains[0][0])


def test_common_words_has_one_strict_mode():
    from collections import Counter

    from iclab.data import common_words

    lists = common_words(100, 3, seed=1, top_count=8)
    assert lists == common_words(100, 3, seed=1, top_count=8) and lists != common_words(100, 3, seed=2, top_count=8)
    for prefix, [question], [answer] in lists:
        words = [ln.split(". ", 1)[1] for ln in prefix.strip().split("\n")]
        counts = Counter(words).most_common()
        assert len(words) == 100 and counts[0] == (answer.strip(), 8) and counts[1][1] <= 4
        assert question.endswith("The most common word is")


@pytest.mark.parametrize(
    "call, field",
    [
        (lambda: __import__("iclab.data").data.variable_chains(10, 1, 0, hops=0), "hops"),
        (lambda: __import__("iclab.data").data.common_words(10, 1, 0, top_count=1), "top_count"),
        (lambda: __import__("iclab.data").data.common_words(10, 1, 0, top_count=11), "top_count"),
        (lambda: __import__("iclab.data").data.common_words(10_000, 1, 0, top_count=4), "n_words"),
    ],
)
def test_long_context_tasks_refuse_what_they_cannot_build(call, field):
    from iclab.errors import ConfigError

    with pytest.raises(ConfigError, match=f"invalid {field}="):
        call()
