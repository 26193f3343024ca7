"""Views of the ``ood`` results table (arXiv:2609.36448; docs/papers/ood.md §5) used by the figures, notes and claim statistics:
the rows of one part, the ``forget`` cells unrolled into one row per (γ1, γ2), and the rows the claim records read
their units from (:func:`unit_rows`: one row per SGD run, angle, feature, table point, target domain)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from iclab.claims import part_rows

__all__ = ["CELL", "VIEWS", "first_row", "forget_table", "unit_rows", "within_target_spearman"]

_FORGET_COLUMNS = (
    "F",
    "F_theory",
    "F_largeN",
    "forgot1",
    "forgot2",
    "pred1",
    "pred2",
    "src1_after",
    "src2_after",
    "ood1_before",
    "ood2_before",
    "steps",
    "theory_steps",
    "backproj_dev",
    "conservation_ft",
    "dAlphaV1",
    "dAlphaV2",
)


def first_row(df: pd.DataFrame, part: str):
    """The first row of ``part``, or None."""
    sub = part_rows(df, part)
    return None if sub.empty else sub.iloc[0]


def forget_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (γ1, γ2) of the ``forget`` cells, with the per-γ2 list entries of ``_FORGET_COLUMNS``."""
    rows = []
    for _, r in part_rows(df, "forget").iterrows():
        for i, g2 in enumerate(r["gamma2_list"]):
            rows.append({"gamma1": float(r["gamma1"]), "gamma2": float(g2), **{k: r[k][i] for k in _FORGET_COLUMNS}})
    return pd.DataFrame(rows)


def within_target_spearman(sim, ce) -> list[float]:
    """Per target domain t: Spearman ρ between similarity sim[s][t] and cross-entropy ce[s][t] over sources s ≠ t
    (the target's own difficulty is held fixed)."""
    from scipy.stats import spearmanr

    sim, ce = np.asarray(sim, float), np.asarray(ce, float)
    out = []
    for t in range(sim.shape[0]):
        s = [i for i in range(sim.shape[0]) if i != t]
        rho = spearmanr(sim[s, t], ce[s, t])[0] if len(s) > 2 else float("nan")
        out.append(float(rho))
    return out


#: the ``view`` of a stored cell row in the judged rows (:func:`unit_rows` marks each derived row by its own view)
CELL = "cell"
#: the views of the derived rows: one row per SGD run (``run``), angle (``theta``), feature (``feature``; the in-span
#: rotation's per-feature errors: ``inspan``), table point (``point``: a forget cell's (γ1, γ2), a tiny cell's γ2),
#: SGD fine-tuning at a table point (``ft_run``), weight-gap scenario (``scenario``) and target domain (``target``)
VIEWS = ("run", "theta", "feature", "inspan", "point", "ft_run", "scenario", "target")


def unit_rows(cfg, df: pd.DataFrame) -> pd.DataFrame:
    """The units the claim records read, one row per unit, derived from the stored cells' lists (the cells and what
    they store are unchanged). Each row keeps its cell's ``part`` and ``seed`` (where the cell has one: the run's grid
    names its cells by them) and names its ``view``
    (:data:`VIEWS`) and its unit column(s):

    - ``pretrain``, view ``run`` (column ``run``): per SGD run, α* over population GD's (``alpha_ratio``), 1 + the
      largest relative β deviation (``beta_ratio``), the stopping step over population GD's on the check grid
      (``steps_ratio``) with the grid's quantisation SE (``steps_grid_se``: log_every/√12, same scale);
    - ``ood``, view ``theta`` (``theta_deg``): the MC error ``L_mc`` ± ``L_se``, the exact value at N ``L_theory``
      and their ratio ``L_ratio`` ± ``L_ratio_se``; view ``feature`` (``feature``): measured / closed-form α_(u_k)
      (``alpha_u_ratio``); view ``inspan`` (``rotation``, ``feature``): MC / exact per-feature error
      (``inspan_ratio`` ± ``inspan_ratio_se``);
    - ``forget``, view ``point`` (``gamma1``, ``gamma2``): F, F_theory, ``F_ratio`` (F / F_theory, NaN where
      |F_theory| < 1e-5), ``table_point`` (γ1 and γ2 in the config's table) and the counts of its two features
      that follow the sign rule and whose source α rises (``sign_hits``/``sign_trials``,
      ``alpha_hits``/``alpha_trials``); view ``ft_run`` (``gamma1``,
      ``gamma2``, ``run``): F of each SGD fine-tuning at a table point (``F_run``);
    - ``tiny``, view ``point`` (``layers``, ``replicate``, ``gamma2``): F ± ``F_se`` over one network's evaluation
      prompts;
    - ``minilm``, view ``theta`` (``theta_deg``): ``ce_drop`` (CE at θ minus unrotated) ± ``ood_ce_se``, ``F_ce`` ±
      ``F_ce_se``, ``n_test``;
    - ``minilm_shift``, view ``scenario`` (``scenario``: gap1, gap2): the second-peak ``excess`` and its bootstrap
      interval (``excess_lo``, ``excess_hi``); view ``target`` (``target``): the within-target Spearman ``rho``.
    """
    out: list[dict] = []
    for part, derive in _DERIVE.items():
        for _, r in part_rows(df, part).iterrows():
            seed = r.get("seed")  # the cell's own (a table without the column gets none)
            base = {"part": part} | ({} if seed is None or pd.isna(seed) else {"seed": seed})
            out += [{**base, **row} for row in derive(cfg, r)]
    return pd.DataFrame(out)


def _lists(r, *cols: str) -> bool:
    return all(isinstance(r.get(c), (list, tuple)) for c in cols)


def _at(values, i: int) -> float:
    return float(values[i]) if i < len(values) else math.nan


def _pretrain_runs(cfg, r) -> list[dict]:
    cols = ("rep_alpha_star", "rep_beta_dev", "rep_steps")
    if not _lists(r, *cols):
        return []
    target, steps = float(r["theory_alpha_star"]), float(r["theory_steps"])
    every = cfg.log_every
    grid = every * math.ceil(steps / every)
    rows = []
    for j in range(max(len(r[c]) for c in cols)):
        a, dev, n = (_at(r[c], j) for c in cols)
        rows.append(
            {
                "view": "run",
                "run": j,
                "alpha_star": a,
                "alpha_ratio": a / target,
                "theory_alpha_star": target,
                "largeN_alpha_star": float(r["largeN_alpha_star"]),
                "beta_dev": dev,
                "beta_ratio": 1 + dev,
                "steps": n,
                "steps_ratio": n / grid,
                "steps_grid_se": every / math.sqrt(12) / grid,
                "theory_steps": steps,
                "steps_grid": grid,
            }
        )
    return rows


def _ood_units(cfg, r) -> list[dict]:
    rows = []
    if _lists(r, "theta_deg", "L_mc", "L_se", "L_theory"):
        for deg, mc, se, th in zip(r["theta_deg"], r["L_mc"], r["L_se"], r["L_theory"]):
            mc, se, th = float(mc), float(se), float(th)
            rows.append(
                {
                    "view": "theta",
                    "theta_deg": float(deg),
                    "L_mc": mc,
                    "L_se": se,
                    "L_theory": th,
                    "L_ratio": mc / th,
                    "L_ratio_se": se / abs(th),
                }
            )
    if _lists(r, "randomM_alpha_u", "randomM_alpha_u_closed"):
        for k, (a, c) in enumerate(zip(r["randomM_alpha_u"], r["randomM_alpha_u_closed"])):
            rows.append(
                {
                    "view": "feature",
                    "feature": k,
                    "alpha_u": float(a),
                    "alpha_u_closed": float(c),
                    "alpha_u_ratio": float(a) / float(c),
                    "randomM_closed_vs_exact": float(r.get("randomM_closed_vs_exact", math.nan)),
                }
            )
    for deg in (30, 60):
        cols = [f"inspan{deg}_{k}" for k in ("mc", "se", "theory")]
        if not _lists(r, *cols):
            continue
        for k, (mc, se, th) in enumerate(zip(*(r[c] for c in cols))):
            mc, se, th = float(mc), float(se), float(th)
            rows.append(
                {
                    "view": "inspan",
                    "rotation": deg,
                    "feature": k,
                    "inspan_mc": mc,
                    "inspan_theory": th,
                    "inspan_ratio": mc / th,
                    "inspan_ratio_se": se / abs(th),
                }
            )
    return rows


def _forget_units(cfg, r) -> list[dict]:
    g1 = float(r["gamma1"])
    rows = []
    if _lists(r, "gamma2_list", "F", "F_theory"):
        on1 = bool(np.isclose(g1, cfg.gamma1_table).any())
        for g2, f, th in zip(r["gamma2_list"], r["F"], r["F_theory"]):
            g2, f, th = float(g2), float(f), float(th)
            rows.append(
                {
                    "view": "point",
                    "gamma1": g1,
                    "gamma2": g2,
                    "F": f,
                    "F_theory": th,
                    "F_ratio": f / th if abs(th) >= 1e-5 else math.nan,
                    "table_point": on1 and bool(np.isclose(g2, cfg.gamma2_table).any()),
                }
            )
        for i, row in enumerate(rows):
            row.update(_rule_hits(r, i, (g1, row["gamma2"])))
    if _lists(r, "rep_gamma2", "rep_F"):
        seen: set[float] = set()
        for g2, runs in zip(r["rep_gamma2"], r["rep_F"]):
            if float(g2) in seen:  # the cell's own first (a γ2 listed twice is one table point)
                continue
            seen.add(float(g2))
            rows += [
                {"view": "ft_run", "gamma1": g1, "gamma2": float(g2), "run": j, "F_run": float(f)}
                for j, f in enumerate(runs)
            ]
    return rows


def _rule_hits(r, i: int, gammas: tuple[float, float]) -> dict:
    """Point ``i`` of a forget cell ``r``, its two features k: how many follow the sign rule (``sign_hits`` of
    ``sign_trials`` = 2: measured forgetting sign = predicted) and, of those with γ_k ≠ 0, how many raise their
    source α (``alpha_hits`` of ``alpha_trials``); none where the cell lacks the lists."""
    out: dict = {}
    if _lists(r, "forgot1", "forgot2", "pred1", "pred2"):
        out["sign_hits"] = sum(int(r[f"forgot{k}"][i] == r[f"pred{k}"][i]) for k in (1, 2))
        out["sign_trials"] = 2
    if _lists(r, "dAlphaV1", "dAlphaV2"):
        live = [k for k in (1, 2) if abs(gammas[k - 1]) > 1e-9]
        out["alpha_hits"] = sum(int(float(r[f"dAlphaV{k}"][i]) > 0) for k in live)
        out["alpha_trials"] = len(live)
    return out


def tiny_means(tiny: pd.DataFrame) -> dict[int, dict]:
    """Per depth (ascending) the ``tiny`` cells' list columns averaged element-wise over the trained networks
    (replicates), with ``networks`` their count; the grids (``theta_deg``, ``gamma2_list``) are the config's, the
    same in every replicate. A column the cells lack stays out (a table of some columns only: notes, figures)."""
    out = {}
    for layers, group in tiny.groupby("layers", sort=True):
        rows = [r for _, r in group.iterrows()]  # a mixed table has NaN, not lists, in other parts' columns
        mean = {c: np.mean([np.asarray(r[c], dtype=float) for r in rows], axis=0).tolist()
                for c in _TINY_MEANS if all(_lists(r, c) for r in rows)}  # fmt: skip
        signs = all(_lists(r, "forgot1", "forgot2", "pred1", "pred2") for r in rows)
        pairs = [(int(a), int(b)) for r in rows if signs
                 for a, b in zip([*r["forgot1"], *r["forgot2"]], [*r["pred1"], *r["pred2"]])]  # fmt: skip
        grids = {c: list(rows[0][c]) for c in ("theta_deg", "gamma2_list") if all(_lists(r, c) for r in rows)}
        out[int(layers)] = {**grids, "networks": len(rows), "sign_pairs": pairs, **mean}
    return out


#: the list columns of a tiny cell that :func:`tiny_means` averages over the networks
_TINY_MEANS = ("ood_loss", "F", "dalpha1_src", "dbeta1_src", "source_before")


def _replicate(r) -> int:
    """A tiny cell's replicate (0 for a run from before replicates, whose cells have none)."""
    rep = r.get("replicate")
    return 0 if rep is None or pd.isna(rep) else int(rep)


def _tiny_units(cfg, r) -> list[dict]:
    if not _lists(r, "gamma2_list", "F", "F_se"):
        return []
    return [
        {
            "view": "point",
            "layers": r.get("layers"),
            "replicate": _replicate(r),
            "gamma2": float(g2),
            "F": float(f),
            "F_se": float(se),
        }
        for g2, f, se in zip(r["gamma2_list"], r["F"], r["F_se"])
    ]


def _minilm_units(cfg, r) -> list[dict]:
    cols = ("theta_deg", "ood_ce", "ood_ce_se", "F_ce", "F_ce_se")
    if not _lists(r, *cols):
        return []
    src = float(r["source_ce"])
    return [
        {
            "view": "theta",
            "theta_deg": float(deg),
            "source_ce": src,
            "ood_ce": float(ce),
            "ood_ce_se": float(ce_se),
            "ce_drop": float(ce) - src,
            "F_ce": float(f),
            "F_ce_se": float(f_se),
            "n_test": r.get("n_test"),
        }
        for deg, ce, ce_se, f, f_se in zip(*(r[c] for c in cols))
    ]


def _minilm_shift_units(cfg, r) -> list[dict]:
    rows = []
    for key in ("gap1", "gap2"):
        if f"{key}_excess" not in r or not _lists(r, f"{key}_prominences"):
            continue
        rows.append(
            {
                "view": "scenario",
                "scenario": key,
                "excess": float(r[f"{key}_excess"]),
                "excess_lo": float(r[f"{key}_excess_lo"]),
                "excess_hi": float(r[f"{key}_excess_hi"]),
                "prominences": list(r[f"{key}_prominences"]),
                "mean_gap": float(r[f"{key}_mean_gap"]),
                "planes": r.get("gap_planes"),
                "n_test": r.get("gap_n_test"),
            }
        )
    if _lists(r, "domain_sim", "domain_ce") and len(r["domain_sim"]) > 3:
        names = r.get("domains") if _lists(r, "domains") else [str(t) for t in range(len(r["domain_sim"]))]
        for t, rho in enumerate(within_target_spearman(r["domain_sim"], r["domain_ce"])):
            rows.append({"view": "target", "target": t, "domain": str(names[t]), "rho": rho})
    return rows


_DERIVE = {
    "pretrain": _pretrain_runs,
    "ood": _ood_units,
    "forget": _forget_units,
    "tiny": _tiny_units,
    "minilm": _minilm_units,
    "minilm_shift": _minilm_shift_units,
}
