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

import base64
import csv
import html
import json
import shutil
import struct
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from iclab.experiments import get_experiment
from iclab.experiments import COMPARISON_FIELDS, Comparison, chance_line
from iclab.report._html import html_table, md_to_html, page, slug, verdict_cell
from iclab.report._run_report import comparison_table_md, fmt_seconds, rejudged_summary, tally, tally_line
from iclab.runs import git_revision, iclab_version
from iclab.stats import AGREES, DISAGREES, NOT_JUDGED

__all__ = ["write_combined_report", "PAPERS"]

# Paper keys and titles, in report order (arXiv ids in docs/papers/).
PAPERS = {
    "temperature": "Optimal attention temperature under distribution shift (Demir & Doğan)",
    "ood": "Attention dynamics for out-of-distribution ICL (α/β weights, forgetting)",
    "dispersion": "Softmax is not enough: dispersion and adaptive temperature (Veličković et al.)",
    "multihead": "Multi-head softmax attention for in-context linear regression",
    "categorical": "Attention-based ICL for categorical data (functional GD)",
}


@dataclass
class _Run:
    path: Path
    meta: dict
    exp: object
    summary: dict

    @property
    def comparisons(self) -> list[Comparison]:
        return [Comparison(**c) for c in self.summary.get("comparisons", [])]


def _load(run_dir: Path) -> _Run:
    meta = json.loads((run_dir / "config.json").read_text())
    exp = get_experiment(meta["experiment"])
    path = run_dir / "summary.json"
    summary = json.loads(path.read_text()) if path.exists() else rejudged_summary(run_dir, exp)
    return _Run(run_dir, meta, exp, summary)


def _by_paper(runs: list[_Run]) -> list[tuple[str, list[_Run]]]:
    keys = list(PAPERS) + sorted({r.exp.paper for r in runs} - set(PAPERS))
    groups = [(k, sorted((r for r in runs if r.exp.paper == k), key=lambda r: (r.exp.order, r.exp.name))) for k in keys]
    return [(k, rs) for k, rs in groups if rs]


def _summary_rows(runs: list[_Run]) -> list[list[str]]:
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
            ]
        )
    return rows


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
]


def _copy_figures(run: _Run, out: Path) -> list[tuple[Path, Path | None]]:
    """Copy each figure (and its CSV) to ``out/figures``; return (png, csv-or-None) pairs of the copies."""
    copies = []
    for rel in run.summary.get("figures", []):
        png = run.path / rel
        if not png.exists():
            continue
        target = out / "figures" / f"{run.exp.name}-{png.name}"
        shutil.copyfile(png, target)
        csv = png.with_suffix(".csv")
        csv_copy = None
        if csv.exists():
            csv_copy = target.with_suffix(".csv")
            shutil.copyfile(csv, csv_copy)
        copies.append((target, csv_copy))
    return copies


def _anchor(experiment: str, claim_id: str) -> str:
    return f"cmp-{slug(experiment)}-{slug(claim_id)}"


def _html_figures(name: str, figures: list[tuple[Path, Path | None]]) -> list[str]:
    if not figures:
        return []
    out = ["<h4>Figures</h4><div class='figs'>"]
    for png, csv_copy in figures:
        data = base64.b64encode(png.read_bytes()).decode()
        link = f" · <a href='figures/{html.escape(csv_copy.name)}'>data (CSV)</a>" if csv_copy else ""
        w, h = struct.unpack(">II", png.read_bytes()[16:24]) if png.suffix == ".png" else (1, 1)
        wide = " class='wide'" if w > 1.6 * h else ""  # multi-panel figures span the full width
        out.append(
            f"<figure{wide}><img alt='{html.escape(name)}: {html.escape(png.stem)}' "
            f"src='data:image/png;base64,{data}'><figcaption>{html.escape(png.stem)}{link}</figcaption>"
            "</figure>"
        )
    return out + ["</div>"]


def _html_comparisons(name: str, rows: list[Comparison]) -> list[str]:
    if not rows:
        return []
    body = []
    for c in rows:
        measured = html.escape(c.measured) + (
            "" if c.uncertainty in ("", "—") else f" <span class='muted'>{html.escape(c.uncertainty)}</span>"
        )
        reason = f"<br><span class='muted'>{html.escape(c.reason)}</span>" if c.reason else ""
        star = "★ " if c.headline else ""
        body.append(
            [
                f"<td id='{_anchor(name, c.id)}'>{star}{html.escape(c.claim)}<br>"
                f"<span class='muted'>{html.escape(c.source)}</span></td>",
                html.escape(c.kind),
                html.escape(c.paper_value),
                measured,
                html.escape(c.test),
                html.escape(c.statistic),
                verdict_cell(c.verdict, reason),
            ]
        )
    return [
        "<h4>Claims: paper reports / iclab measures / verdict</h4>",
        f"<p class='meta'>{html.escape(tally_line(rows))}</p>",
        html_table(
            ["claim (source)", "kind", "paper reports", "iclab measures", "test", "statistic", "verdict"],
            body,
            cls="cmp",
        ),
    ]


def _html_run(run: _Run, figures: list[tuple[Path, Path | None]]) -> str:
    exp, meta, s = run.exp, run.meta, run.summary
    cells = s.get("cells", {})
    out = [
        f"<section id='{slug(exp.name)}'><h3>{html.escape(exp.title)}</h3>",
        f"<p class='meta'>experiment <code>{html.escape(exp.name)}</code> · preset {html.escape(str(meta.get('preset')))}"
        f" · seed {meta.get('seed')} · config <code>{html.escape(str(meta.get('config_hash')))}</code> · "
        f"{cells.get('done', '?')} cells done, {cells.get('failed', '?')} failed · compute "
        f"{fmt_seconds(s.get('cell_seconds'))}, wall {fmt_seconds(s.get('wall_seconds'))} · run folder "
        f"<code>{html.escape(str(run.path))}</code></p>",
        "<h4>What the paper claims</h4>",
        f"<div class='claim'>{md_to_html(exp.claim)}</div>",
    ]
    out += _html_figures(exp.name, figures) + _html_comparisons(exp.name, run.comparisons)
    if s.get("notes"):
        out.append(f"<h4>Where they disagree, and why</h4><div class='notes'>{md_to_html(s['notes'])}</div>")
    if cells.get("failed"):
        errs = "".join(f"<li><code>{html.escape(e)}</code></li>" for e in cells.get("failed_errors", []))
        out.append(
            f"<p class='error'>{cells['failed']} cell(s) failed (rerun with <code>iclab run {exp.name} "
            f"--retry-failed</code>):</p><ul>{errs}</ul>"
        )
    out += [f"<p class='error'>report error: {html.escape(e)}</p>" for e in s.get("errors", [])]
    out.append("</section>")
    return "\n".join(out)


def _md_run(run: _Run, figures: list[tuple[Path, Path | None]]) -> list[str]:
    exp, s = run.exp, run.summary
    cells = s.get("cells", {})
    md = [
        f"### {exp.title}",
        "",
        f"`{exp.name}` — run folder `{run.path}`, preset {run.meta.get('preset')}, "
        f"{cells.get('done', '?')} cells done, {cells.get('failed', '?')} failed, compute "
        f"{fmt_seconds(s.get('cell_seconds'))}, wall {fmt_seconds(s.get('wall_seconds'))}.",
        "",
        "**What the paper claims.** " + exp.claim.strip(),
        "",
    ]
    if run.comparisons:
        md += [comparison_table_md(run.comparisons), ""]
    if s.get("notes"):
        md += ["**Where they disagree, and why.**", "", s["notes"].strip(), ""]
    md += [
        f"![{exp.name} {png.stem}](figures/{png.name})" + (f" ([data](figures/{csv.name}))" if csv else "")
        for png, csv in figures
    ]
    md += [f"> report error: {e}" for e in s.get("errors", [])]
    return md + [""]


def _ledger(groups: list[tuple[str, list[_Run]]]) -> tuple[list[str], list[str]]:
    """The claims ledger (HTML, markdown): per paper every judged claim, headline claims first, with its
    verdict, its kind and a link to its evidence; counts split by kind."""
    html_out = [
        "<h2 id='ledger'>Claims ledger</h2><p class='meta'>★ headline claim · a verdict is a test fixed "
        "before the run; “not judged” says why (settings differ from the paper's, unreliable source, too "
        "little power, or not measured).</p>"
    ]
    md = ["## Claims ledger", ""]
    for key, rs in groups:
        rows = [(r.exp.name, c) for r in rs for c in r.comparisons]
        if not rows:
            continue
        rows.sort(key=lambda rc: not rc[1].headline)
        counts = f"{tally_line([c for _, c in rows])} {chance_line([r.summary for r in rs])}."
        html_out.append(f"<h3>{html.escape(PAPERS.get(key, key))}</h3><p class='meta'>{html.escape(counts)}</p>")
        html_out.append(
            html_table(
                ["verdict", "claim", "experiment", "kind", "evidence"],
                [
                    [
                        verdict_cell(c.verdict),
                        ("★ " if c.headline else "") + html.escape(c.claim),
                        html.escape(name),
                        html.escape(c.kind),
                        f"<a href='#{_anchor(name, c.id)}'>row</a>",
                    ]
                    for name, c in rows
                ],
                cls="ledger",
            )
        )
        md += [
            f"### {PAPERS.get(key, key)}",
            "",
            counts,
            "",
            "| verdict | claim | experiment | kind |",
            "|---|---|---|---|",
        ]
        md += [f"| {c.verdict} | {'★ ' if c.headline else ''}{c.claim} | {name} | {c.kind} |" for name, c in rows]
        md.append("")
    return html_out, md


def write_comparisons_csv(runs: Sequence[_Run], path: Path) -> Path:
    """Every comparison row of ``runs`` to ``path`` with the fields ``COMPARISON_FIELDS``."""
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(COMPARISON_FIELDS)
        for r in runs:
            for c in r.comparisons:
                writer.writerow([getattr(c, f) for f in COMPARISON_FIELDS])
    return path


def _sections(groups: list[tuple[str, list[_Run]]], out: Path) -> tuple[list[str], list[str], list[str]]:
    """Table-of-contents entries, HTML sections and markdown of every paper's runs."""
    toc, sections, md = [], [], []
    for key, rs in groups:
        title = PAPERS.get(key, key)
        toc.append(
            f"<li><a href='#paper-{slug(key)}'>{html.escape(title)}</a><ul>"
            + "".join(f"<li><a href='#{slug(r.exp.name)}'>{html.escape(r.exp.title)}</a></li>" for r in rs)
            + "</ul></li>"
        )
        sections.append(
            f"<h2 id='paper-{slug(key)}'>{html.escape(title)}</h2>"
            f"<p class='meta'>paper key <code>{html.escape(key)}</code></p>"
        )
        md += [f"## {title}", ""]
        for r in rs:
            try:
                figures = _copy_figures(r, out)
                sections.append(_html_run(r, figures))
                md += _md_run(r, figures)
            except Exception as exc:  # noqa: BLE001 - one odd summary must not lose the whole report
                why = f"{type(exc).__name__}: {exc}"
                sections.append(
                    f"<section id='{slug(r.exp.name)}'><h3>{html.escape(r.exp.title)}</h3>"
                    f"<p class='error'>report error: {html.escape(why)}</p></section>"
                )
                md += [f"### {r.exp.title}", "", f"> report error: {why}", ""]
    return toc, sections, md


def write_combined_report(
    run_dirs: Sequence[Path], out_dir: str | Path = "runs/report", failures: Sequence[str] = ()
) -> Path:
    """Combine finished run folders into ``out_dir/index.html``, ``report.md`` and ``comparisons.csv``; return the
    HTML path.

    ``failures``: lines ``"experiment: error"`` for experiments that could not run at all (shown at the top).
    """
    out = Path(out_dir)
    if (out / "figures").exists():
        shutil.rmtree(out / "figures")
    (out / "figures").mkdir(parents=True, exist_ok=True)
    runs = [_load(Path(d)) for d in run_dirs]
    groups = _by_paper(runs)
    rows = _summary_rows([r for _, rs in groups for r in rs])
    stamp = (
        f"Generated {time.strftime('%Y-%m-%d %H:%M:%S %Z')} by iclab {iclab_version()}"
        f" (git {(git_revision() or 'unknown')[:12]})."
    )
    headline = f"{len(runs)} experiment(s) over {len(groups)} paper(s); " + tally_line(
        [c for r in runs for c in r.comparisons]
    )
    ledger_html, ledger_md = _ledger(groups)
    toc, sections, sections_md = _sections(groups, out)
    md = ["# iclab reproduction report", "", stamp, "", headline, ""]
    body = [
        f"<h1>iclab reproduction report</h1><p class='meta'>{html.escape(stamp)}</p>",
        f"<p>{html.escape(headline)}</p>",
    ]
    if failures:
        body.append(
            "<p class='error'><strong>Experiments that could not run:</strong></p><ul>"
            + "".join(f"<li><code>{html.escape(f)}</code></li>" for f in failures)
            + "</ul>"
        )
        md += ["**Experiments that could not run:**", ""] + [f"- `{f}`" for f in failures] + [""]
    md += (
        ledger_md
        + ["## Summary", "", "| " + " | ".join(_SUMMARY_HEADER) + " |", "|" + "---|" * len(_SUMMARY_HEADER)]
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
    body += [
        nav,
        *ledger_html,
        "<h2 id='summary'>Summary</h2>",
        html_table(_SUMMARY_HEADER, links, cls="summary"),
        *sections,
    ]
    (out / "report.md").write_text("\n".join(md + sections_md) + "\n")
    (out / "index.html").write_text(page("iclab reproduction report", "\n".join(body)))
    write_comparisons_csv(runs, out / "comparisons.csv")
    return out / "index.html"
