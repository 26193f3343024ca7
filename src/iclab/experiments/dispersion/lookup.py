r"""Size generalisation of real pretrained LMs, softmax vs adaptive temperature (arXiv:2410.01104 §4's motivation on
real models; docs/papers/dispersion.md §5.5): two retrieval tasks grown to thousands of tokens.

The prompts come from :func:`iclab.data.lookup_lists` and :func:`iclab.data.passkey_haystacks`.
``kv`` (key–value lookup): a list of ``n`` lines ``abcde: 123`` (distinct random five-letter keys, random three-digit
values) is followed by ``Look up abcde in the list above.\nabcde:`` and the gold answer `` 123``; the list grows,
and every line is a candidate. ``passkey``: a few lines ``Pass key of abcde: 123`` (``PASSKEY_NEEDLES``) hidden at
random places among ``n`` filler lines (``The grass is green.`` …), then ``What is the pass key of abcde?\nPass key
of abcde:``; the distractors grow, the few relevant lines stay. Retrieval needs one sharp attention
peak on the right line among ``n``; by Lemma 2.1 a bounded logit spread disperses as ``n`` grows, which the
entropy-adaptive temperature (``iclab.hf.with_temperature(model, "adaptive")``, streaming O(n)-memory kernel) is
meant to counter. Exact match is greedy (:func:`iclab.hf.greedy_match`): the list is run once per mode and its
key/value cache shared by all queries about it. The questions of a list are not independent: the claims take the
list as the unit (:func:`iclab.experiments.dispersion.statistics.lookup_list_rows`), and the table and figure show
the same band across lists (:func:`lookup_summary`).
"""

from __future__ import annotations

import numpy as np

from iclab.data import lookup_lists, passkey_haystacks
from iclab.stats import binary_unit_band

__all__ = ["lookup_prompts", "run_lookup_cell", "lookup_summary", "list_diffs", "LOOKUP_TASKS"]

LOOKUP_TASKS = ("kv", "passkey")
PASSKEY_NEEDLES = 4  # pass-key lines per haystack: its questions share one prefix (and its key/value cache)


def lookup_prompts(task: str, n: int, config) -> list[tuple[str, list[str], list[str]]]:
    """The (prefix, questions, answers) groups of one cell: ``lookup_lists`` lists of ``lookup_queries`` questions
    (``kv``), or haystacks of ``PASSKEY_NEEDLES`` pass keys each, enough for ``lookup_lists · lookup_queries``
    questions (``passkey``)."""
    if task == "kv":
        return lookup_lists(n, config.lookup_lists, config.lookup_queries, config.seed)
    if task == "passkey":
        needles = min(PASSKEY_NEEDLES, config.lookup_lists * config.lookup_queries)
        haystacks = -(-config.lookup_lists * config.lookup_queries // needles)
        return passkey_haystacks(n, haystacks, config.seed, needles)
    from iclab.errors import ConfigError

    raise ConfigError("task", task, "one of " + ", ".join(LOOKUP_TASKS))


def run_lookup_cell(config, cell: dict) -> dict:
    """Per-query greedy EM of one ``model`` on ``task`` at ``n_pairs`` lines, stock softmax and adaptive
    temperature."""
    from iclab.hf import greedy_match, parse_dtype, shared_model, with_temperature

    dtype = parse_dtype(config.lookup_dtype)  # "auto": bf16 where the CPU computes it natively
    model, tok, src = shared_model(cell["model"], causal=True, dtype=dtype)  # loaded once per worker process
    lists = lookup_prompts(cell["task"], cell["n_pairs"], config)
    out = {
        "source": src,
        "dtype": str(dtype).removeprefix("torch."),
        "tokens": int(np.mean([len(tok(p)["input_ids"]) for p, _, _ in lists])),
        "list": [i for i, (_, qs, _) in enumerate(lists) for _ in qs],
    }
    for mode, tau in (("softmax", 1.0), ("adaptive", "adaptive")):
        with with_temperature(model, tau):
            out[f"em_{mode}"] = (
                np.concatenate([greedy_match(model, tok, p, qs, ans, batch_size=16) for p, qs, ans in lists])
                .astype(int)
                .tolist()
            )
    return out


def list_diffs(row) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per list of one lookup cell (a results row): its id, its number of queries and the paired difference
    adaptive − softmax greedy exact match averaged over them (the unit the claims and the table combine)."""
    d = np.asarray(row["em_adaptive"], float) - np.asarray(row["em_softmax"], float)
    lists, at = np.unique(np.asarray(row["list"]), return_inverse=True)
    sizes = np.bincount(at)
    return lists, sizes, np.bincount(at, weights=d) / sizes


def lookup_summary(df):
    """Per (model, n_pairs): accuracy of softmax and adaptive and the paired difference adaptive − softmax, the mean
    over lists of each list's mean over its queries, with the claims' 95 % band across the lists
    (:func:`iclab.stats.binary_unit_band`: Student t, at least ±3/queries wide)."""
    import pandas as pd

    rows = []
    for _, r in df.iterrows():
        s, a = np.asarray(r["em_softmax"]), np.asarray(r["em_adaptive"])
        diff, lo, hi, _ = binary_unit_band(list_diffs(r)[2], len(s))
        rows.append(
            {
                "model": r["model"],
                "task": r.get("task", "kv"),
                "n_pairs": int(r["n_pairs"]),
                "tokens": int(r["tokens"]),
                "queries": len(s),
                "softmax": s.mean(),
                "adaptive": a.mean(),
                "diff": diff,
                "diff_lo": lo,
                "diff_hi": hi,
            }
        )
    return pd.DataFrame(rows).sort_values(["task", "model", "n_pairs"]).reset_index(drop=True)
