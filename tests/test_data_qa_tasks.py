"""Tests of the in-context QA tasks with noisy demonstrations (iclab.data._qa_tasks; arXiv:2511.01292 §5.2,
docs/papers/temperature.md §5.3)."""

import pytest
import torch

from iclab.errors import ConfigError, IclabError
from iclab.data import _qa_prompts as P
from iclab.data import _qa_tasks as T

# Four synsets in WordNet data.adj format (wndb(5WN)): "hot" (head, antonym "cold", similar-to "baking"),
# "cold" (head, antonym "hot"), "baking" (satellite of hot), "good/well" (head, antonym "bad", no similar-to).
FIXTURE = """\
  1 This software and database is being provided to you, the LICENSEE, by
00000100 00 a 01 hot 0 002 ! 00000200 a 0101 & 00000300 s 0000 | used of physical heat
00000200 00 a 01 cold 0 001 ! 00000100 a 0101 | having a low temperature
00000300 00 s 02 baking 0 baking_hot 0 001 & 00000100 a 0000 | as hot as if in an oven
00000400 00 a 02 good 0 well(p) 0 001 ! 00000500 a 0101 | having desirable qualities
00000500 00 a 01 bad 0 001 ! 00000400 a 0101 | having undesirable qualities
00000600 00 a 02 Big 0 large 0 000 | capitalised lemma (ignored)
"""

INDEX_FIXTURE = """\
  1 license line
hot a 1 2 ! & 1 3 00000100
cold a 1 1 ! 1 0 00000200
"""


def test_wordnet_parser_on_fixture():
    rows = {cue: (ant, near) for cue, ant, near in T.parse_wordnet_antonyms(FIXTURE.splitlines())}
    assert rows["hot"] == ("cold", ["baking"])  # baking_hot is two words: dropped
    assert rows["cold"] == ("hot", [])
    assert rows["good"] == ("bad", ["well"])  # the (p) marker is stripped
    assert rows["bad"][0] == "good"
    assert "big" not in rows and "Big" not in rows
    assert T.parse_wordnet_tagged(INDEX_FIXTURE.splitlines()) == {"hot": 3, "cold": 0}


def test_wordnet_parser_on_real_file():
    path = T.wordnet_adj_path()
    with open(path, encoding="latin-1") as fh:
        rows = {cue: (ant, near) for cue, ant, near in T.parse_wordnet_antonyms(fh)}
    assert len(rows) > 3000
    assert rows["hot"][0] == "cold" and rows["good"][0] == "bad" and rows["heavy"][0] == "light"
    task = T.antonym_task()
    assert 150 < len(task.items) < 400  # common adjectives (>= 2 SemCor-tagged senses)
    assert all(i.answer not in i.wrong and i.question not in i.wrong for i in task.items)


def test_missing_wordnet_names_the_package(monkeypatch):
    monkeypatch.setattr(T, "_WORDNET_DIRS", ("/nonexistent",))
    monkeypatch.setattr(T.shutil, "which", lambda name: None)
    with pytest.raises(IclabError, match="wordnet-base"):
        T.wordnet_adj_path()


@pytest.mark.parametrize("name", T.QA_TASKS)
def test_wrong_answers_plausible_and_never_right(name):
    task = T.get_task(name)
    assert len(task.items) >= 150
    answers = {i.answer.lower() for i in task.items}
    for item in task.items:
        assert item.wrong and all(w.strip().lower() != item.answer.strip().lower() for w in item.wrong)
    if name in ("capital", "demonym", "continent"):  # same type: the wrong answer is another country's answer
        assert all(w.lower() in answers for i in task.items for w in i.wrong)


def test_capital_distractors_come_from_same_region():
    task = T.capital_task()
    fr = next(i for i in task.items if i.question == "France")
    assert fr.answer == "Paris" and "Berlin" in fr.wrong and "Tokyo" not in fr.wrong


@pytest.mark.parametrize(
    "k,ratio,expected", [(6, 0.0, 0), (6, 0.2, 1), (6, 0.5, 3), (6, 0.6, 4), (5, 0.8, 4), (7, 0.4, 3), (11, 1.0, 11)]
)
def test_noise_ratio_exactly_applied(k, ratio, expected):
    assert P.n_noisy(k, ratio) == expected
    task = T.capital_task()
    q, pool = P.split_items(task, 7, seed=3)
    ps = P.build_prompts(task, q, pool, k, ratio, seed=3)
    assert ps.noisy.shape == (7, k)
    assert (ps.noisy.sum(1) == expected).all()
    items = {i.question: i for i in task.items}
    for prompt, clean, row in zip(ps.prompts, ps.clean_prompts, ps.noisy):
        blocks = prompt.split("\n\n")[:-1]
        clean_blocks = clean.split("\n\n")[:-1]
        assert len(blocks) == k
        for b, cb, bad in zip(blocks, clean_blocks, row.tolist()):
            country = b.split("\n")[0].removeprefix("Country: ")
            shown = b.split("\n")[1].removeprefix("Capital: ")
            assert cb.split("\n")[1].removeprefix("Capital: ") == items[country].answer
            assert (shown != items[country].answer) == bad
            if bad:
                assert shown in items[country].wrong
        assert prompt.endswith("Capital:") and prompt.split("\n")[-2].startswith("Country: ")


def test_prompts_deterministic_and_disjoint():
    task = T.continent_task()
    q1, p1 = P.split_items(task, 11, seed=5)
    q2, p2 = P.split_items(task, 11, seed=5)
    assert q1 == q2 and p1 == p2 and not set(q1) & set(p1)
    a = P.build_prompts(task, q1, p1, 5, 0.4, seed=5)
    b = P.build_prompts(task, q1, p1, 5, 0.4, seed=5)
    c = P.build_prompts(task, q1, p1, 5, 0.4, seed=6)
    assert a.prompts == b.prompts and torch.equal(a.noisy, b.noisy)
    assert a.prompts != c.prompts
    queries = [p.split("\n")[-2].removeprefix("Country: ") for p in a.prompts]
    assert queries == [task.items[i].question for i in q1]
    for p, qi in zip(a.prompts, q1):  # the query never appears among its own demonstrations
        assert p.count(f"Country: {task.items[qi].question}\n") == 1


def test_bad_inputs_raise_config_error():
    task = T.capital_task()
    q, pool = P.split_items(task, 3, 0)
    with pytest.raises(ConfigError, match="noise_ratio"):
        P.build_prompts(task, q, pool, 4, 1.5, 0)
    with pytest.raises(ConfigError, match="n_demos"):
        P.build_prompts(task, q, pool, len(pool) + 1, 0.5, 0)
    with pytest.raises(ConfigError, match="n_questions"):
        P.split_items(task, len(task.items), 0)
    with pytest.raises(ConfigError, match="task"):
        T.get_task("rivers")


def test_exact_match_normalisation():
    assert T.exact_match([" Paris.\nCountry: x", "paris", "Lyon", ""], ["Paris", "PARIS ", "Paris", "Paris"]) == [
        1.0,
        1.0,
        0.0,
        0.0,
    ]
    assert T.normalise_answer("  New Delhi!  ") == "new delhi"
