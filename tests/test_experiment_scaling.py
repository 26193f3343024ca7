"""``scaling-rules`` (docs/papers/scaling.md): its cells on the real SmolLM2 (a rule at its identity setting scores
exactly as the stock model), and its verdicts on made-up result tables — a rule that changes nothing, one that
hurts, one that helps past the trained length, and a run that never reaches past it."""

import numpy as np
import pandas as pd
import pytest

from iclab.experiments import get_experiment

EXP = get_experiment("scaling-rules")


def _rows(cfg, effect: dict[str, np.ndarray], trained: int = 8192, tokens: int = 900) -> pd.DataFrame:
    """Cell rows as ``run_cell`` returns them: per (task, size, rule) cell, one question per prompt whose exact
    match is drawn so that each rule's per-prompt difference from stock is ``effect[rule]``."""
    rows = []
    for t in cfg.tasks:
        for s in cfg.sizes:
            base = np.resize([0, 1], cfg.groups).astype(float)  # stock: alternate misses and hits
            for rule in ("stock", *cfg.rules):
                em = (
                    np.clip(base + effect.get(rule, np.zeros(cfg.groups))[: cfg.groups], 0, 1)
                    if rule != "stock"
                    else base
                )
                rows.append(
                    {"part": "retrieval", "model": "smollm2", "task": t, "size": s, "rule": rule, "seed": cfg.seed}
                    | {"trained_tokens": trained, "tokens": [tokens] * cfg.groups, "em": em.tolist()}
                    | {"group": list(range(cfg.groups))}
                )
    return pd.DataFrame(rows)


def _verdicts(cfg, df):
    return {k: v.verdict for k, v in EXP.compare(cfg, df).items()}


def test_a_rule_that_hurts_every_prompt_disagrees_and_one_that_changes_nothing_is_not_an_agreement():
    cfg = EXP.config("quick", {"groups": 8})
    hurt = {cfg.rules[0]: -np.resize([0.0, 1.0], 8), cfg.rules[1]: np.zeros(8)}  # every hit of stock lost
    v = _verdicts(cfg, _rows(cfg, hurt))
    assert v[f"{cfg.rules[0]}/smollm2/within-trained"] == "disagrees"
    # identical scores: a zero-width interval is an identity, never "agrees" (the judge refuses it)
    assert v[f"{cfg.rules[1]}/smollm2/within-trained"] == "not judged"


def test_small_changes_agree_only_when_the_interval_fits_the_margin():
    def verdict(groups: int, pattern: list[float]):
        cfg = EXP.config("quick", {"groups": groups})
        diff = np.resize(pattern, groups)
        return EXP.compare(cfg, _rows(cfg, {r: diff for r in cfg.rules}))[f"{cfg.rules[0]}/smollm2/within-trained"]

    assert verdict(80, [0.0] * 8 + [1.0] + [0.0] * 10 + [-1.0]).verdict == "agrees"  # 320 pairs, mean 0, CI ±0.04
    few = verdict(4, [1.0, -1.0, 0.0, 0.0])  # 16 pairs, mean 0 but CI about ±0.4: cannot resolve ±0.1
    assert few.verdict == "not judged" and "power" in few.reason


def test_past_the_trained_length_is_not_judged_by_a_run_that_never_reaches_it():
    cfg = EXP.config("quick")
    v = EXP.compare(cfg, _rows(cfg, {}))
    past = v[f"{cfg.rules[0]}/smollm2/past-trained"]
    assert past.verdict == "not judged" and "within smollm2's trained 8192 tokens" in past.reason


def test_past_the_trained_length_a_rule_that_helps_agrees():
    cfg = EXP.config("full", {"models": ("smollm2",), "tasks": ("passkey", "kv"), "groups": 12})
    helps = {r: np.resize([1.0, 0.0, 0.0], 12) for r in cfg.rules}  # stock's misses turned into hits
    df = _rows(cfg, helps, trained=8192, tokens=16000)
    v = _verdicts(cfg, df)
    assert v[f"{cfg.rules[0]}/smollm2/past-trained"] == "agrees"
    within = EXP.compare(cfg, df)[f"{cfg.rules[0]}/smollm2/within-trained"]
    assert within.verdict in ("not measured", "not judged") and "within" in within.reason  # no prompt fits


def test_cells_on_smollm2_score_a_rule_at_its_identity_as_the_stock_model():
    from iclab.experiments.scaling.cells import cells, run_cell

    cfg = EXP.config("quick", {"sizes": (16,), "groups": 3, "tasks": ("passkey",), "rules": ("logn:L=100000",)})
    grid = cells(cfg)
    assert [c["rule"] for c in grid] == ["stock", "logn:L=100000"]
    stock, rule = (run_cell(cfg, c, None) for c in grid)
    assert stock["group"] == [0, 1, 2] and len(stock["tokens"]) == 3 and stock["trained_tokens"] == 8192
    assert stock["em"] == rule["em"] and set(stock["em"]) <= {0, 1}  # log_L(p+1) < 1 for p < L: the identity


def test_bad_rules_are_refused_with_what_is_allowed():
    from iclab.errors import ConfigError

    for bad in ({"rules": ()}, {"rules": ("stock",)}, {"rules": ("logn:L=1",)}, {"rules": ("logn:L=9", "logn:L=9")}):
        with pytest.raises(ConfigError):
            EXP.config("quick", bad)


def test_the_token_bounds_hold_on_both_models_tokenizers_so_past_trained_is_not_run_only_where_no_prompt_is_past():
    from iclab.data import long_context_groups
    from iclab.experiments.scaling.claims import TRAINED_TOKENS
    from iclab.experiments.scaling.config import TOKENS_PER_LINE, longest_prompt_tokens
    from iclab.hf import load_tokenizer

    toks = [load_tokenizer(model)[0] for model in ("smollm2", "gemma3-270m")]
    for task in TOKENS_PER_LINE:
        for size in (32, 960):
            cfg = EXP.config("paper", {"tasks": (task,), "sizes": (size,), "groups": 3})
            groups = long_context_groups(task, size, 3, 0)
            longest = max(len(tok(p)["input_ids"]) for tok in toks for p, _, _ in groups)
            assert longest <= longest_prompt_tokens(cfg), (task, size, longest)
            assert longest > 0.85 * longest_prompt_tokens(cfg) or size == 32, (task, size, longest)  # not a wild bound
    # the paper preset's key-value lists reach past SmolLM2's trained length (8.8k tokens): its past-trained claims
    # are judged on those prompts, not declared "not run"
    paper = EXP.config("paper")
    assert longest_prompt_tokens(paper) > TRAINED_TOKENS["smollm2"]
    v = EXP.compare(paper, _rows(paper, {}, tokens=900))
    assert "within smollm2's trained" not in v[f"{paper.rules[0]}/smollm2/past-trained"].reason
    assert "within gemma3-270m's trained 32768" in v[f"{paper.rules[0]}/gemma3-270m/past-trained"].reason
