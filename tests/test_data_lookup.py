"""Key–value lists and pass-key haystacks (``iclab.data.lookup_lists``, ``passkey_haystacks``): deterministic per
seed, distinct keys, every question answered by a line of its own prefix."""

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
