"""The combined report of ``iclab reproduce``: ``runs/report/index.html`` and ``runs/report/report.md``.

One section per paper (experiments grouped by ``Experiment.paper``, papers in the order of ``PAPERS``), each
with what the paper claims, iclab's figures, the "paper reports / iclab measures / within tolerance?" table
and the notes on disagreements. At the top: a table of contents and a summary table (cells, comparisons within
tolerance, run times) over all experiments. The HTML page is self-contained (figures embedded as base64 PNG);
figures are also copied, with their CSV data, to ``runs/report/figures/``.
"""

from __future__ import annotations

import base64
import html
import json
import shutil
import struct
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from iclab.experiments import Comparison, get_experiment
from iclab.report._html import html_table, md_to_html, ok_cell, page, slug
from iclab.report._run_report import comparison_dict, comparison_table_md, fmt_seconds
from iclab.runs import git_revision, iclab_version

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
    def comparisons(self) -> list:
        return [Comparison(**comparison_dict(Comparison(**c))) for c in self.summary.get("comparisons", [])]

    def tally(self) -> tuple[int, int, int]:
        oks = [c.ok for c in self.comparisons]
        return sum(o is True for o in oks), sum(o is False for o in oks), sum(o is None for o in oks)


def _load(run_dir: Path) -> _Run:
    meta = json.loads((run_dir / "config.json").read_text())
    path = run_dir / "summary.json"
    summary = json.loads(path.read_text()) if path.exists() else {}
    return _Run(run_dir, meta, get_experiment(meta["experiment"]), summary)


def _by_paper(runs: list[_Run]) -> list[tuple[str, list[_Run]]]:
    keys = list(PAPERS) + sorted({r.exp.paper for r in runs} - set(PAPERS))
    groups = [(k, sorted((r for r in runs if r.exp.paper == k), key=lambda r: (r.exp.order, r.exp.name)))
              for k in keys]
    return [(k, rs) for k, rs in groups if rs]


def _summary_rows(runs: list[_Run]) -> list[list[str]]:
    rows = []
    for r in runs:
        cells = r.summary.get("cells", {})
        ok, bad, na = r.tally()
        rows.append([r.exp.paper, r.exp.name, str(cells.get("done", "?")), str(cells.get("failed", "?")),
                     f"{ok} of {ok + bad}", str(bad), str(na), fmt_seconds(r.summary.get("cell_seconds")),
                     fmt_seconds(r.summary.get("wall_seconds"))])
    return rows


_SUMMARY_HEADER = ["paper", "experiment", "cells done", "failed", "within tolerance", "outside", "qualitative",
                   "compute time", "wall time"]


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


def _html_run(run: _Run, figures: list[tuple[Path, Path | None]]) -> str:
    exp, meta, s = run.exp, run.meta, run.summary
    cells = s.get("cells", {})
    out = [f"<section id='{slug(exp.name)}'><h3>{html.escape(exp.title)}</h3>",
           f"<p class='meta'>experiment <code>{html.escape(exp.name)}</code> · preset {html.escape(str(meta.get('preset')))}"
           f" · seed {meta.get('seed')} · config <code>{html.escape(str(meta.get('config_hash')))}</code> · "
           f"{cells.get('done', '?')} cells done, {cells.get('failed', '?')} failed · compute "
           f"{fmt_seconds(s.get('cell_seconds'))}, wall {fmt_seconds(s.get('wall_seconds'))} · run folder "
           f"<code>{html.escape(str(run.path))}</code></p>",
           "<h4>What the paper claims</h4>", f"<div class='claim'>{md_to_html(exp.claim)}</div>"]
    if figures:
        out.append("<h4>Figures</h4><div class='figs'>")
        for png, csv in figures:
            data = base64.b64encode(png.read_bytes()).decode()
            link = f" · <a href='figures/{html.escape(csv.name)}'>data (CSV)</a>" if csv else ""
            w, h = struct.unpack(">II", png.read_bytes()[16:24]) if png.suffix == ".png" else (1, 1)
            wide = " class='wide'" if w > 1.6 * h else ""  # multi-panel figures span the full width
            out.append(f"<figure{wide}><img alt='{html.escape(exp.name)}: {html.escape(png.stem)}' "
                       f"src='data:image/png;base64,{data}'><figcaption>{html.escape(png.stem)}{link}</figcaption>"
                       "</figure>")
        out.append("</div>")
    comps = run.comparisons
    if comps:
        out.append("<h4>Paper reports / iclab measures</h4>")
        out.append(html_table(["quantity", "paper reports", "iclab measures", "within tolerance?", "note"],
                              [[html.escape(c.quantity), html.escape(c.paper), html.escape(c.measured), ok_cell(c.ok),
                                html.escape(c.note)] for c in comps], cls="cmp"))
    if s.get("notes"):
        out.append(f"<h4>Where they disagree, and why</h4><div class='notes'>{md_to_html(s['notes'])}</div>")
    if cells.get("failed"):
        errs = "".join(f"<li><code>{html.escape(e)}</code></li>" for e in cells.get("failed_errors", []))
        out.append(f"<p class='error'>{cells['failed']} cell(s) failed (rerun with <code>iclab run {exp.name} "
                   f"--retry-failed</code>):</p><ul>{errs}</ul>")
    out += [f"<p class='error'>report error: {html.escape(e)}</p>" for e in s.get("errors", [])]
    out.append("</section>")
    return "\n".join(out)


def _md_run(run: _Run, figures: list[tuple[Path, Path | None]]) -> list[str]:
    exp, s = run.exp, run.summary
    cells = s.get("cells", {})
    md = [f"### {exp.title}", "", f"`{exp.name}` — run folder `{run.path}`, preset {run.meta.get('preset')}, "
          f"{cells.get('done', '?')} cells done, {cells.get('failed', '?')} failed, compute "
          f"{fmt_seconds(s.get('cell_seconds'))}, wall {fmt_seconds(s.get('wall_seconds'))}.", "",
          "**What the paper claims.** " + exp.claim.strip(), ""]
    if run.comparisons:
        md += [comparison_table_md(run.comparisons), ""]
    if s.get("notes"):
        md += ["**Where they disagree, and why.**", "", s["notes"].strip(), ""]
    md += [f"![{exp.name} {png.stem}](figures/{png.name})" + (f" ([data](figures/{csv.name}))" if csv else "")
           for png, csv in figures]
    md += [f"> report error: {e}" for e in s.get("errors", [])]
    return md + [""]


def write_combined_report(run_dirs: Sequence[Path], out_dir: str | Path = "runs/report",
                          failures: Sequence[str] = ()) -> Path:
    """Combine finished run folders into ``out_dir/index.html`` and ``out_dir/report.md``; return the HTML path.

    ``failures``: lines ``"experiment: error"`` for experiments that could not run at all (shown at the top).
    """
    out = Path(out_dir)
    if (out / "figures").exists():
        shutil.rmtree(out / "figures")
    (out / "figures").mkdir(parents=True, exist_ok=True)
    runs = [_load(Path(d)) for d in run_dirs]
    groups = _by_paper(runs)
    ordered = [r for _, rs in groups for r in rs]
    stamp = (f"Generated {time.strftime('%Y-%m-%d %H:%M:%S %Z')} by iclab {iclab_version()}"
             f" (git {(git_revision() or 'unknown')[:12]}).")
    rows = _summary_rows(ordered)
    total_ok = sum(r.tally()[0] for r in runs)
    total_tol = sum(r.tally()[0] + r.tally()[1] for r in runs)
    headline = (f"{len(runs)} experiment(s) over {len(groups)} paper(s); {total_ok} of {total_tol} numeric "
                "comparisons with the papers are within tolerance.")

    md = ["# iclab reproduction report", "", stamp, "", headline, "", "## Summary", "",
          "| " + " | ".join(_SUMMARY_HEADER) + " |", "|" + "---|" * len(_SUMMARY_HEADER)]
    md += ["| " + " | ".join(r) + " |" for r in rows]
    md.append("")
    toc = ["<nav class='toc'><strong>Contents</strong><ul><li><a href='#summary'>Summary</a></li>"]
    body = [f"<h1>iclab reproduction report</h1><p class='meta'>{html.escape(stamp)}</p>"]
    if failures:
        body.append("<p class='error'><strong>Experiments that could not run:</strong></p><ul>"
                    + "".join(f"<li><code>{html.escape(f)}</code></li>" for f in failures) + "</ul>")
        md += ["**Experiments that could not run:**", ""] + [f"- `{f}`" for f in failures] + [""]
    sections = []
    for key, rs in groups:
        title = PAPERS.get(key, key)
        toc.append(f"<li><a href='#paper-{slug(key)}'>{html.escape(title)}</a><ul>"
                   + "".join(f"<li><a href='#{slug(r.exp.name)}'>{html.escape(r.exp.title)}</a></li>" for r in rs)
                   + "</ul></li>")
        sections.append(f"<h2 id='paper-{slug(key)}'>{html.escape(title)}</h2>"
                        f"<p class='meta'>paper key <code>{html.escape(key)}</code></p>")
        md += [f"## {title}", ""]
        for r in rs:
            try:
                figures = _copy_figures(r, out)
                sections.append(_html_run(r, figures))
                md += _md_run(r, figures)
            except Exception as exc:  # noqa: BLE001 - one odd summary must not lose the whole report
                why = f"{type(exc).__name__}: {exc}"
                sections.append(f"<section id='{slug(r.exp.name)}'><h3>{html.escape(r.exp.title)}</h3>"
                                f"<p class='error'>report error: {html.escape(why)}</p></section>")
                md += [f"### {r.exp.title}", "", f"> report error: {why}", ""]
    toc.append("</ul></nav>")
    links = [[html.escape(p), f"<a href='#{slug(n)}'>{html.escape(n)}</a>", *[html.escape(c) for c in rest]]
             for p, n, *rest in rows]
    body += ["".join(toc), f"<h2 id='summary'>Summary</h2><p>{html.escape(headline)}</p>",
             html_table(_SUMMARY_HEADER, links, cls="summary"), *sections]
    (out / "report.md").write_text("\n".join(md) + "\n")
    (out / "index.html").write_text(page("iclab reproduction report", "\n".join(body)))
    return out / "index.html"
