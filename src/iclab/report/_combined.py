"""The combined report of ``iclab reproduce``: ``runs/report/index.html``, ``report.md`` and ``comparisons.csv``.

It opens with the claims ledger: per paper, every claim an experiment judged — headline claims first — with its
verdict (agrees / disagrees / not judged), counts split by kind, and a link to its evidence. Then one section per
paper (experiments grouped by ``Experiment.paper``, papers in the order of ``PAPERS``): what the paper claims,
iclab's figures, the comparison rows (claim, source, kind, paper value, measured ± uncertainty, test, statistic,
verdict, reason) and the notes on disagreements. The HTML page is self-contained (figures embedded as base64
PNG); figures are also copied, with their CSV data, to ``runs/report/figures/``, and every comparison row goes
to ``runs/report/comparisons.csv``.
"""

from __future__ import annotations

import csv
import html
import json
import shutil
import time
from pathlib import Path
from typing import Sequence

from iclab.experiments import get_experiment
from iclab.experiments import COMPARISON_FIELDS, Comparison, chance_line
from iclab.files import atomic_write, write_text_atomic
from iclab.report._html import html_table, md_to_html, page, slug, verdict_cell
from iclab.report._judging import rejudged_summary
from iclab.report._reference import Reference, load_reference
from iclab.report._run_report import (
    PAPER_SETTINGS_ONLY,
    REFERENCE_COLUMN,
    fmt_seconds,
    reference_cell_md,
    reference_tally_line,
    tally,
    tally_line,
)
from iclab.report._sections import PAPERS, ReportRun, anchor, paper_sections, reference_cell_html
from iclab.runs import git_revision, iclab_version
from iclab.stats import AGREES, DISAGREES, NOT_JUDGED

__all__ = ["write_combined_report", "write_report_pages", "PAPERS"]

#: The first heading of a combined report (``iclab reproduce``): how a report folder is known as iclab's.
TITLE = "iclab reproduction report"


def _load(run_dir: Path, reference_root: Path | None) -> ReportRun:
    meta = json.loads((run_dir / "config.json").read_text())
    exp = get_experiment(meta["experiment"])
    path = run_dir / "summary.json"
    summary = json.loads(path.read_text()) if path.exists() else rejudged_summary(run_dir, exp)
    return ReportRun(run_dir, meta, exp, summary, load_reference(exp.name, reference_root))


def _by_paper(runs: list[ReportRun]) -> list[tuple[str, list[ReportRun]]]:
    keys = list(PAPERS) + sorted({r.exp.paper for r in runs} - set(PAPERS))
    groups = [(k, sorted((r for r in runs if r.exp.paper == k), key=lambda r: (r.exp.order, r.exp.name))) for k in keys]
    return [(k, rs) for k, rs in groups if rs]


def _summary_rows(runs: list[ReportRun]) -> list[list[str]]:
    rows = []
    for r in runs:
        cells = r.summary.get("cells", {})
        t = tally(r.comparisons)["all"]
        rows.append(
            [
                r.exp.paper,
                r.exp.name,
                str(r.meta.get("preset", "?")),
                str(cells.get("done", "?")),
                str(cells.get("failed", "?")),
                str(t[AGREES]),
                str(t[DISAGREES]),
                str(t[NOT_JUDGED]),
                fmt_seconds(r.summary.get("cell_seconds")),
                fmt_seconds(r.summary.get("wall_seconds")),
                _reference_counts(r.reference),
            ]
        )
    return rows


def _reference_counts(ref: Reference | None) -> str:
    """``4fc6a15: 14/7/0`` (the reference run's commit, then agree/disagree/not judged) or "—"."""
    if ref is None or not ref.shipped:
        return "— (no reference shipped)"
    t = tally(list(ref.rows.values()))["all"]
    return f"{str(ref.meta.get('commit') or '?')[:7]}: {t[AGREES]}/{t[DISAGREES]}/{t[NOT_JUDGED]}"


_SUMMARY_HEADER = [
    "paper",
    "experiment",
    "preset",
    "cells done",
    "failed",
    "agrees",
    "disagrees",
    "not judged",
    "compute time",
    "wall time",
    "paper settings (reference run: agree/disagree/not judged)",
]


def _claim_rows(runs: Sequence[ReportRun]) -> list[tuple[ReportRun, Comparison, bool]]:
    """``(run, claim, reference only)`` of every claim of ``runs``: this run's, then those only its reference has."""
    return [(r, c, False) for r in runs for c in r.comparisons] + [(r, c, True) for r in runs for c in r.reference_only]


def _ledger_table(rows: list[tuple[ReportRun, Comparison, bool]], ref_first: bool) -> tuple[str, list[str]]:
    """One ledger table (HTML, markdown lines): verdict, claim, experiment, kind, evidence — and where the runs have
    a reference, the paper-settings verdict beside this run's, first when ``ref_first``. A row ``(run, claim,
    True)`` is a claim only the reference run has: this run's cell reads "paper settings only", its evidence is
    the experiment's section."""
    with_ref = rows[0][0].reference is not None
    ours = ["this run"] if with_ref else ["verdict"]
    verdicts = ([REFERENCE_COLUMN] + ours if ref_first else ours + [REFERENCE_COLUMN]) if with_ref else ours
    header = verdicts + ["claim", "experiment", "kind"]
    body, md = [], ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r, c, only in rows:
        mine = PAPER_SETTINGS_ONLY if only else c.verdict
        cell = f"<td class='na'>{PAPER_SETTINGS_ONLY}</td>" if only else verdict_cell(c.verdict)
        cells, mds = {"this run": cell, "verdict": cell}, {"this run": mine, "verdict": mine}
        if with_ref:
            cells[REFERENCE_COLUMN] = reference_cell_html(r.reference, c.id, short=True)
            mds[REFERENCE_COLUMN] = reference_cell_md(r.reference, c.id, short=True)
        star = "★ " if c.headline else ""
        link = f"<a href='#{slug(r.exp.name) if only else anchor(r.exp.name, c.id)}'>{'section' if only else 'row'}</a>"
        body.append(
            [cells[v] for v in verdicts]
            + [star + html.escape(c.claim), html.escape(r.exp.name)]
            + [html.escape(c.kind), link]
        )
        md.append("| " + " | ".join([mds[v] for v in verdicts] + [star + c.claim, r.exp.name, c.kind]) + " |")
    return html_table(header + ["evidence"], body, cls="ledger"), md


def _ledger(groups: list[tuple[str, list[ReportRun]]]) -> tuple[list[str], list[str]]:
    """The claims ledger (HTML, markdown): per paper every judged claim, headline claims first — each with its
    verdict, its paper-settings verdict (headline claims: that one first), its kind and a link to its evidence;
    the counts of this run (split by kind) and of the reference runs."""
    html_out = [
        "<h2 id='ledger'>Claims ledger</h2><p class='meta'>★ headline claim · a verdict is a test fixed "
        "before the run; “not judged” says why (settings differ from the paper's, unreliable source, too "
        "little power, or not measured) · the paper-settings verdict is the experiment's shipped reference run "
        "(its <code>paper</code> preset) judged by this iclab; — where none is shipped.</p>"
    ]
    md = ["## Claims ledger", ""]
    for key, rs in groups:
        rows = _claim_rows(rs)
        if not rows:
            continue
        claims = [c for _, c, only in rows if not only]
        counts = tally_line(claims)
        if any(r.reference is not None for r in rs):
            refs = {r.exp.name: r.reference for r in rs if r.reference is not None}
            counts = f"This run: {counts} Reference runs (paper settings): {_paper_settings_tally(rows, refs)}"
        counts = f"{counts} {chance_line([r.summary for r in rs])}."
        html_out.append(f"<h3>{html.escape(PAPERS.get(key, key))}</h3><p class='meta'>{html.escape(counts)}</p>")
        md += [f"### {PAPERS.get(key, key)}", "", counts, ""]
        split = rows[0][0].reference is not None
        parts = [
            (True, [row for row in rows if row[1].headline]),
            (False, [row for row in rows if not row[1].headline]),
        ]
        for headline, part in parts if split else [(False, sorted(rows, key=lambda row: not row[1].headline))]:
            if not part:
                continue
            if split:
                what = "★ Headline claims (paper-settings verdict first)" if headline else "Other claims"
                html_out.append(f"<h4>{what}</h4>")
                md += [f"**{what}**", ""]
            table, lines = _ledger_table(part, ref_first=headline)
            html_out.append(table)
            md += lines + [""]
    return html_out, md


def _paper_settings_tally(rows: list[tuple[ReportRun, Comparison, bool]], refs: dict) -> str:
    """The paper-settings counts over every claim of ``rows`` (this run's and the reference-only ones), and how many
    of them only the reference run has."""
    only = sum(o for _, _, o in rows)
    line = reference_tally_line([c for _, c, _ in rows], refs)
    return line + (
        f" {only} of them {PAPER_SETTINGS_ONLY} (the reference run has them, this run does not)." if only else ""
    )


CSV_FIELDS = ("paper", "experiment", "id") + tuple(f for f in COMPARISON_FIELDS if f not in ("paper", "experiment"))
#: The fields of a claim only the reference run has that say nothing of this run: blank in its CSV row.
_THIS_RUN_ONLY = ("measured", "uncertainty", "statistic")


def write_comparisons_csv(runs: Sequence[ReportRun], path: Path) -> Path:
    """Every comparison row of ``runs`` to ``path`` with the fields ``CSV_FIELDS`` (the claim ``id`` and
    ``COMPARISON_FIELDS``), and where the runs have a reference, ``paper_settings_verdict`` (the reference run's
    verdict of the claim, or "— (…)" saying why none). A claim only the reference run has gets a row too: verdict
    "paper settings only", this run's measured value, uncertainty and statistic blank."""
    with_ref = any(r.reference is not None for r in runs)
    with atomic_write(path) as tmp, open(tmp, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(list(CSV_FIELDS) + (["paper_settings_verdict"] if with_ref else []))
        for r in runs:
            for c in r.comparisons:
                extra = [] if not with_ref else [_csv_verdict(r.reference, c.id)]
                writer.writerow([getattr(c, f) for f in CSV_FIELDS] + extra)
            for c in r.reference_only:
                why = "not in this run: only the reference run (paper preset) has this claim"
                mine = {f: "" for f in _THIS_RUN_ONLY} | {"verdict": PAPER_SETTINGS_ONLY, "reason": why}
                writer.writerow([mine.get(f, getattr(c, f)) for f in CSV_FIELDS] + [c.verdict])
    return path


def _csv_verdict(ref: Reference | None, claim_id: str) -> str:
    row = None if ref is None else ref.row(claim_id)
    return row.verdict if row is not None else reference_cell_md(ref or Reference(""), claim_id)


def write_combined_report(
    run_dirs: Sequence[Path],
    out_dir: str | Path = "runs/report",
    failures: Sequence[str] = (),
    *,
    reference_root: Path | None = None,
) -> Path:
    """Combine finished run folders into ``out_dir/index.html``, ``report.md`` and ``comparisons.csv``; return the
    HTML path. Beside each verdict: the claim's paper-settings verdict, the shipped reference run of its experiment
    (under ``reference_root``, default the package's) re-judged once per process by the installed code.

    ``failures``: lines ``"experiment: error"`` for experiments that could not run at all (shown at the top).
    """
    runs = [_load(Path(d), reference_root) for d in run_dirs]
    rows = _claim_rows(runs)
    refs = {r.exp.name: r.reference for r in runs}
    shipped = sorted(name for name, ref in refs.items() if ref.shipped)
    papers = len({r.exp.paper for r in runs})
    headline = (
        f"{len(runs)} experiment(s) over {papers} paper(s). This run: "
        f"{tally_line([c for _, c, only in rows if not only])} Reference runs (paper settings, re-judged by this "
        f"iclab): {_paper_settings_tally(rows, refs)} Reference runs are shipped for {len(shipped)} of these "
        f"{len(runs)} experiment(s)" + (f" ({', '.join(shipped)})." if shipped else ".")
    )
    return write_report_pages(Path(out_dir), TITLE, headline, runs, _SUMMARY_HEADER, _summary_rows, failures)


def write_report_pages(
    out: Path,
    title: str,
    headline: str,
    runs: Sequence[ReportRun],
    summary_header: Sequence[str],
    summary_rows,
    failures: Sequence[str] = (),
) -> Path:
    """Write ``out/index.html``, ``report.md``, ``comparisons.csv`` and ``figures/`` of ``runs``: title, a stamp,
    ``headline`` (markdown), failures, the claims ledger, the summary table (``summary_rows(runs)`` under
    ``summary_header``; its second cell, the experiment, links to its section) and one section per paper."""
    if (out / "figures").exists():
        shutil.rmtree(out / "figures")
    (out / "figures").mkdir(parents=True, exist_ok=True)
    groups = _by_paper(list(runs))
    rows = summary_rows([r for _, rs in groups for r in rs])
    stamp = (
        f"Generated {time.strftime('%Y-%m-%d %H:%M:%S %Z')} by iclab {iclab_version()}"
        f" (git {(git_revision() or 'unknown')[:12]})."
    )
    ledger_html, ledger_md = _ledger(groups)
    toc, sections, sections_md = paper_sections(groups, out)
    md = [f"# {title}", "", stamp, "", headline, ""]
    body = [f"<h1>{html.escape(title)}</h1><p class='meta'>{html.escape(stamp)}</p>", md_to_html(headline)]
    if failures:
        body.append(
            "<p class='error'><strong>Experiments that could not run:</strong></p><ul>"
            + "".join(f"<li><code>{html.escape(f)}</code></li>" for f in failures)
            + "</ul>"
        )
        md += ["**Experiments that could not run:**", ""] + [f"- `{f}`" for f in failures] + [""]
    md += (
        ledger_md
        + ["## Summary", "", "| " + " | ".join(summary_header) + " |", "|" + "---|" * len(summary_header)]
        + ["| " + " | ".join(r) + " |" for r in rows]
        + [""]
    )
    links = [
        [html.escape(p), f"<a href='#{slug(n)}'>{html.escape(n)}</a>", *[html.escape(c) for c in rest]]
        for p, n, *rest in rows
    ]
    nav = (
        "<nav class='toc'><strong>Contents</strong><ul><li><a href='#ledger'>Claims ledger</a></li>"
        "<li><a href='#summary'>Summary</a></li>" + "".join(toc) + "</ul></nav>"
    )
    body += [nav, *ledger_html, "<h2 id='summary'>Summary</h2>", html_table(summary_header, links, cls="summary")]
    body += sections
    write_text_atomic(out / "report.md", "\n".join(md + sections_md) + "\n")
    write_text_atomic(out / "index.html", page(title, "\n".join(body)))
    write_comparisons_csv(runs, out / "comparisons.csv")
    return out / "index.html"
