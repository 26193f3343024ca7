"""Figures in one style (PNG + CSV), the per-run report.md, and the combined report: sections per paper, a
table of contents whose links resolve, a summary table with tolerance counts, and figures embedded."""

import json
import re
from html import escape

import matplotlib.colors as mcolors
import numpy as np
import pandas as pd
import pytest

import fixtures_experiments  # noqa: F401 - registers fx_sweep / fx_other in this process
from iclab.plotting import PALETTE, new_figure, save_figure, theory_vs_sim
from iclab.report import PAPERS, md_to_html, write_combined_report
from iclab.report import run_and_report


pytestmark = pytest.mark.usefixtures("fixture_experiments_env")


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("ICLAB_EXPERIMENT_MODULES", "fixtures_experiments")
    root = tmp_path_factory.mktemp("runs")
    a = run_and_report(
        "fx_sweep", overrides={"n_cells": 5, "fail_cells": "2"}, out=root / "a", executor="serial", progress=False
    )
    b = run_and_report("fx_other", overrides={"n_cells": 3}, out=root / "b", executor="serial", progress=False)
    page = write_combined_report([b.path, a.path], root / "report", failures=["broken_exp: ValueError: nope"])
    mp.undo()
    return root, page


def test_palette_is_okabe_ito_and_distinct():
    assert PALETTE[:3] == ("#0072B2", "#D55E00", "#009E73")
    rgb = np.array([mcolors.to_rgb(c) for c in PALETTE])
    dist = np.linalg.norm(rgb[:, None] - rgb[None], axis=-1) + np.eye(len(PALETTE))
    assert dist.min() > 0.1


def test_save_figure_writes_png_and_csv(tmp_path):
    fig, ax = new_figure()
    theory_vs_sim(ax, [1, 2, 3], [1.0, 4.0, 9.0], [1.1, 3.9, 9.2], [0.1, 0.2, 0.3], label="x²")
    path = save_figure(fig, tmp_path / "sq", {"x": [1, 2, 3], "sim": [1.1, 3.9, 9.2]})
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert pd.read_csv(tmp_path / "sq.csv")["sim"].tolist() == [1.1, 3.9, 9.2]
    _, axes = new_figure(ncols=3)
    assert len(axes) == 3


def test_md_to_html_escapes_and_renders():
    out = md_to_html("A <b>claim</b> with `code` and **bold** and $\\tau^2$.\n\n- one\n- two")
    assert "&lt;b&gt;" in out and "<code>code</code>" in out and "<strong>bold</strong>" in out
    assert "τ<sup>2</sup>" in out and "<ul><li>one</li><li>two</li></ul>" in out


def test_run_report_and_summary_json(two_runs):
    root, _ = two_runs
    md = (root / "a" / "report.md").read_text()
    assert "| claim | kind | paper reports | iclab measures | test | statistic | verdict |" in md
    assert "3 claims: " in md and "settings differ: n_cells = 5 (paper 1000)" in md
    assert "Failed cells (rerun with `--retry-failed`)" in md and "![lognormal_mean](figures/lognormal_mean.png)" in md
    summary = json.loads((root / "a" / "summary.json").read_text())
    assert summary["cells"] == {"done": 4, "failed": 1, "failed_errors": [summary["cells"]["failed_errors"][0]]}
    assert summary["cell_seconds"] > 0 and summary["executors"] == ["serial"]
    assert (root / "a" / "figures" / "lognormal_mean.csv").exists()


def test_combined_report_structure(two_runs):
    root, page = two_runs
    html = page.read_text()
    # one section per paper, in the order of PAPERS, each with its experiment
    assert html.index(escape(PAPERS["temperature"])) < html.index(escape(PAPERS["ood"]))
    assert "id='paper-temperature'" in html and "id='paper-ood'" in html and "id='fx_sweep'" not in html
    assert "id='fx-sweep'" in html and "id='fx-other'" in html
    # every in-page link resolves to an id
    ids = set(re.findall(r"id='([^']+)'", html))
    assert {h[1:] for h in re.findall(r"href='(#[^']+)'", html)} <= ids
    # the ledger comes first: every claim of every run, headline first, each linked to its row
    ledger = html[html.index("id='ledger'") : html.index("id='summary'")]
    assert ledger.count("href='#cmp-") == 6 and ledger.index("★") < ledger.index("the mean falls")
    assert "paper value 0/0/1" in ledger
    # summary table: cells and verdict counts per experiment
    summary = html[html.index("id='summary'") : html.index("id='paper-temperature'")]
    assert "<td>quick</td><td>4</td><td>1</td>" in summary and "<td>quick</td><td>3</td><td>0</td>" in summary
    # self-contained: figures embedded, nothing fetched from the network, no scripts
    assert html.count("src='data:image/png;base64,") == 2
    assert not re.search(r"(src|href)=['\"]?(https?:)?//", html) and "<script" not in html and "@import" not in html
    assert "broken_exp: ValueError: nope" in html
    assert "✓ agrees" in html and "– not judged" in html
    assert "rerun with <code>iclab run fx_sweep --retry-failed</code>" in html
    md = (root / "report" / "report.md").read_text()
    assert f"## {PAPERS['temperature']}" in md and "| paper | experiment | preset | cells done |" in md
    assert "(figures/fx_sweep-lognormal_mean.png)" in md and "[data](figures/fx_sweep-lognormal_mean.csv)" in md
    assert md.index("## Claims ledger") < md.index("## Summary")


def test_comparisons_csv_and_summary_json_carry_every_field(two_runs):
    root, _ = two_runs
    rows = pd.read_csv(root / "report" / "comparisons.csv", keep_default_na=False)
    assert list(rows.columns) == [
        "paper",
        "experiment",
        "id",
        "claim",
        "source",
        "kind",
        "paper_value",
        "measured",
        "uncertainty",
        "test",
        "statistic",
        "verdict",
        "reason",
        "paper_settings_verdict",
    ]
    assert (rows["paper_settings_verdict"] == "— (no reference shipped)").all()  # the fixtures ship none
    assert len(rows) == 6 and set(rows["verdict"]) <= {"agrees", "disagrees", "not judged"}
    assert sorted(rows["id"]) == sorted(["lognormal-mean", "grows-with-1/tau", "needs-many-cells"] * 2)
    assert (rows["test"] != "").all() and (rows["kind"] != "").all()
    assert (rows.loc[rows["verdict"] == "not judged", "reason"] != "").all()
    summary = json.loads((root / "b" / "summary.json").read_text())
    assert {c["id"] for c in summary["comparisons"]} == {"lognormal-mean", "grows-with-1/tau", "needs-many-cells"}
    assert (root / "report" / "figures" / "fx_other-lognormal_mean.csv").exists()


def test_combined_report_counts_the_claims_of_a_run_without_summary(two_runs, tmp_path):
    """A run folder without ``summary.json`` (stopped before its report) is re-judged from its store; one without a
    readable store keeps its declared claims as "not measured". Before, both lost every claim from the ledger."""
    import shutil

    root, _ = two_runs
    with_cells, without_store = tmp_path / "a", tmp_path / "b"
    shutil.copytree(root / "a", with_cells)
    shutil.copytree(root / "b", without_store)
    kept = {c["id"]: c["verdict"] for c in json.loads((with_cells / "summary.json").read_text())["comparisons"]}
    for folder in (with_cells, without_store):
        (folder / "summary.json").unlink()
    (without_store / "results.sqlite").unlink()
    write_combined_report([with_cells, without_store], tmp_path / "report")
    rows = pd.read_csv(tmp_path / "report" / "comparisons.csv", keep_default_na=False)
    assert len(rows) == 6  # 3 declared claims per experiment, none dropped
    rejudged = rows[rows["experiment"] == "fx_sweep"]
    assert len(rejudged) == len(kept) and sorted(rejudged["verdict"]) == sorted(kept.values())
    unmeasured = rows[rows["experiment"] == "fx_other"]
    assert (unmeasured["verdict"] == "not judged").all() and unmeasured["reason"].str.contains("not measured").all()
