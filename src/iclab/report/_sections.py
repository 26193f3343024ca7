"""One section per paper and experiment of a combined report (``iclab reproduce``, ``iclab report --reference``):
what the paper claims, iclab's figures, the comparison rows — each beside its paper-settings verdict (the
experiment's shipped reference run re-judged by the installed code, "—" where none is shipped) — the reference
run's provenance, and the notes on disagreements, in HTML and in markdown."""

from __future__ import annotations

import base64
import html
import shutil
import struct
from dataclasses import dataclass
from pathlib import Path

from iclab.experiments import Comparison
from iclab.report._html import html_table, md_to_html, slug, verdict_cell
from iclab.report._reference import Reference
from iclab.report._run_report import (
    REFERENCE_COLUMN,
    NO_REFERENCE,
    NOT_IN_REFERENCE,
    comparison_table_md,
    fmt_seconds,
    reference_line,
    tally_line,
)

__all__ = ["PAPERS", "ReportRun", "anchor", "paper_sections", "reference_cell_html"]

# Paper keys and titles, in report order (arXiv ids in docs/papers/).
PAPERS = {
    "temperature": "Optimal attention temperature under distribution shift (Demir & Doğan)",
    "ood": "Attention dynamics for out-of-distribution ICL (α/β weights, forgetting)",
    "dispersion": "Softmax is not enough: dispersion and adaptive temperature (Veličković et al.)",
    "multihead": "Multi-head softmax attention for in-context linear regression",
    "categorical": "Attention-based ICL for categorical data (functional GD)",
}


@dataclass
class ReportRun:
    """One run folder as a report shows it: ``config.json`` (``meta``), its experiment, ``summary.json`` (or the
    re-judged store) and the experiment's paper-settings :class:`Reference` — ``None`` where the run is itself the
    reference (no paper-settings column)."""

    path: Path
    meta: dict
    exp: object
    summary: dict
    reference: Reference | None = None

    @property
    def comparisons(self) -> list[Comparison]:
        return [Comparison(**c) for c in self.summary.get("comparisons", [])]

    @property
    def reference_only(self) -> list[Comparison]:
        """The claims of the reference run that this run lacks (by id; a quick run that judges another task, say),
        as the reference run judged them: the report lists them too, marked "paper settings only"."""
        if self.reference is None or not self.reference.shipped:
            return []
        mine = {c.id for c in self.comparisons}
        return [c for cid, c in self.reference.rows.items() if cid not in mine]


def _copy_figures(run: ReportRun, out: Path) -> list[tuple[Path, Path | None]]:
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


def anchor(experiment: str, claim_id: str) -> str:
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


def reference_cell_html(reference: Reference, claim_id: str, *, short: bool = False) -> str:
    """The paper-settings verdict of ``claim_id`` as a table cell (symbol, colour, word, and unless ``short`` the
    reference's measured value); "—" saying why when there is none."""
    c = reference.row(claim_id) if reference.shipped else None
    if c is None:
        return f"<td class='na'>{html.escape(NO_REFERENCE if not reference.shipped else NOT_IN_REFERENCE)}</td>"
    if short:
        return verdict_cell(c.verdict)
    measured = c.measured + ("" if c.uncertainty in ("", "—") else f" {c.uncertainty}")
    reason = f"; {c.reason}" if c.verdict == "not judged" and c.reason else ""
    return verdict_cell(c.verdict, f"<br><span class='muted'>measured {html.escape(measured + reason)}</span>")


def _html_comparisons(name: str, rows: list[Comparison], reference: Reference | None) -> list[str]:
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
                f"<td id='{anchor(name, c.id)}'>{star}{html.escape(c.claim)}<br>"
                f"<span class='muted'>{html.escape(c.source)}</span></td>",
                html.escape(c.kind),
                html.escape(c.paper_value),
                measured,
                html.escape(c.test),
                html.escape(c.statistic),
                verdict_cell(c.verdict, reason),
            ]
            + ([reference_cell_html(reference, c.id)] if reference is not None else [])
        )
    return [
        "<h4>Claims: paper reports / iclab measures / verdict</h4>",
        f"<p class='meta'>{html.escape(tally_line(rows))}</p>",
        html_table(
            ["claim (source)", "kind", "paper reports", "iclab measures", "test", "statistic", "verdict"]
            + ([REFERENCE_COLUMN] if reference is not None else []),
            body,
            cls="cmp",
        ),
    ]


def _html_run(run: ReportRun, figures: list[tuple[Path, Path | None]]) -> str:
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
    if run.reference is not None:
        out.append(f"<div class='meta'>{md_to_html(reference_line(run.reference))}</div>")
    out += _html_figures(exp.name, figures) + _html_comparisons(exp.name, run.comparisons, run.reference)
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


def _md_run(run: ReportRun, figures: list[tuple[Path, Path | None]]) -> list[str]:
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
    if run.reference is not None:
        md += [reference_line(run.reference), ""]
    if run.comparisons:
        md += [comparison_table_md(run.comparisons, run.reference), ""]
    if s.get("notes"):
        md += ["**Where they disagree, and why.**", "", s["notes"].strip(), ""]
    md += [
        f"![{exp.name} {png.stem}](figures/{png.name})" + (f" ([data](figures/{csv.name}))" if csv else "")
        for png, csv in figures
    ]
    md += [f"> report error: {e}" for e in s.get("errors", [])]
    return md + [""]


def paper_sections(groups: list[tuple[str, list[ReportRun]]], out: Path) -> tuple[list[str], list[str], list[str]]:
    """Table-of-contents entries, HTML sections and markdown of every paper's runs (figures copied to ``out``)."""
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
