"""Demonstration groups of the in-context QA tasks (``iclab.data.demo_groups``, arXiv:2511.01292 §5.2): questions
of a group share their demonstrations, exactly n_noisy(k, r) of them wrong, every label shown when the task has at
most k; a pure function of the seed; the same demonstration text as :func:`iclab.data.build_prompts`."""

from iclab.data import LABEL_WORDS, build_prompts, demo_groups, get_task, n_noisy, question_split, split_items


def test_groups_share_demonstrations_with_exact_noise_and_every_label():
    task = get_task("continent-label")
    q, pool = question_split(task, 30, seed=3)
    assert not set(q) & set(pool) and len(q) == 30
    groups = demo_groups(task, q, pool, 6, 0.5, seed=3, group_size=8)
    assert [len(g.queries) for g in groups] == [8, 8, 8, 6]
    for g in groups:
        demos = g.prefix.split("\n\n")[:-1]
        clean = g.clean_prefix.split("\n\n")[:-1]
        assert len(demos) == 6 and sum(a != b for a, b in zip(demos, clean)) == n_noisy(6, 0.5) == g.noisy
        assert {d.rsplit(" ", 1)[1] for d in clean} == set(LABEL_WORDS)  # every label shown once (stratified)
        assert all(a.strip() in LABEL_WORDS for a in g.answers)
    again = demo_groups(task, q, pool, 6, 0.5, seed=3, group_size=8)
    assert [g.prefix for g in again] == [g.prefix for g in groups]  # a pure function of the seed


def test_question_split_is_split_items_permutation():
    task = get_task("capital")
    assert question_split(task, 25, seed=4) == split_items(task, 25, seed=4)
    q, pool = question_split(task, 0, seed=4)
    assert len(pool) == 40 and len(q) == len(task.items) - 40


def test_zero_noise_prompts_are_their_clean_prompts():
    task = get_task("antonym")
    q, pool = split_items(task, 6, seed=1)
    ps = build_prompts(task, q, pool, 4, 0.0, seed=1)
    assert ps.prompts == ps.clean_prompts and not ps.noisy.any()
    groups = demo_groups(task, q, pool, 4, 0.0, seed=1, group_size=4)
    assert all(g.prefix == g.clean_prefix and g.noisy == 0 for g in groups)
