"""The combined report of ``iclab reproduce``: ``runs/report/report.md`` and ``runs/report/index.html``
(self-contained: figures embedded as base64 PNG, no network needed to view)."""

from __future__ import annotations

import base64
import html
import json
import shutil
import time
from pathlib import Path
from typing import Sequence

from iclab.report._run_report import comparison_table_md

__all__ = ["write_combined_report"]


def _load_summary(run_dir: Path) -> dict:
    path = run_dir / "summary.json"
    return json.loads(path.read_text()) if path.exists() else {"figures": [], "comparisons": [], "notes": "", "errors": []}


def write_combined_report(run_dirs: Sequence[Path], out_dir: str | Path = "runs/report") -> Path:
    """Combine the per-run summaries into ``report.md`` and ``index.html``; return the HTML path."""
    from iclab.experiments import get_experiment
    from iclab.experiments._base import Comparison

    out = Path(out_dir)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    md = ["# iclab reproduction report", "", f"Generated {time.strftime('%Y-%m-%d %H:%M:%S')}.", ""]
    body = []
    for run_dir in run_dirs:
        run_dir = Path(run_dir)
        meta = json.loads((run_dir / "config.json").read_text())
        exp = get_experiment(meta["experiment"])
        summary = _load_summary(run_dir)
        comps = [Comparison(**c) for c in summary["comparisons"]]
        md += [f"## {exp.title}", "", f"`{exp.name}` — run folder `{run_dir}` (preset {meta.get('preset')})", "",
               exp.claim.strip(), ""]
        if comps:
            md += [comparison_table_md(comps), ""]
        if summary.get("notes"):
            md += [summary["notes"].strip(), ""]
        sec = [f"<section id='{html.escape(exp.name)}'><h2>{html.escape(exp.title)}</h2>",
               f"<p class='meta'><code>{html.escape(exp.name)}</code> — run folder <code>{html.escape(str(run_dir))}</code></p>",
               f"<p>{html.escape(exp.claim.strip())}</p>"]
        if comps:
            sec.append("<table><tr><th>quantity</th><th>paper reports</th><th>iclab measures</th>"
                       "<th>within tolerance?</th><th>note</th></tr>")
            for c in comps:
                ok = {True: "<td class='ok'>yes</td>", False: "<td class='bad'>no</td>", None: "<td>—</td>"}[c.ok]
                sec.append(f"<tr><td>{html.escape(c.quantity)}</td><td>{html.escape(c.paper)}</td>"
                           f"<td>{html.escape(c.measured)}</td>{ok}<td>{html.escape(c.note)}</td></tr>")
            sec.append("</table>")
        if summary.get("notes"):
            sec.append(f"<div class='notes'><pre>{html.escape(summary['notes'].strip())}</pre></div>")
        for rel in summary["figures"]:
            png = run_dir / rel
            if not png.exists():
                continue
            target = out / "figures" / f"{exp.name}-{png.name}"
            shutil.copyfile(png, target)
            md.append(f"![{exp.name} {png.stem}](figures/{target.name})")
            data = base64.b64encode(png.read_bytes()).decode()
            sec.append(f"<figure><img alt='{html.escape(png.stem)}' src='data:image/png;base64,{data}'>"
                       f"<figcaption>{html.escape(png.stem)}</figcaption></figure>")
        for err in summary.get("errors", []):
            sec.append(f"<p class='bad'>report error: {html.escape(err)}</p>")
            md.append(f"> report error: {err}")
        md.append("")
        sec.append("</section>")
        body.append("\n".join(sec))
    (out / "report.md").write_text("\n".join(md) + "\n")
    page = f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>iclab report</title>
<style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}}
table{{border-collapse:collapse;margin:1em 0}}td,th{{border:1px solid #bbb;padding:4px 8px;font-size:90%}}
.ok{{color:#006d2c}}.bad{{color:#b30000;font-weight:bold}}figure{{display:inline-block;margin:.5em}}
img{{max-width:520px}}pre{{white-space:pre-wrap}}.meta{{color:#555}}</style></head>
<body><h1>iclab reproduction report</h1><p>Generated {time.strftime('%Y-%m-%d %H:%M:%S')}.</p>
{''.join(body)}</body></html>"""
    (out / "index.html").write_text(page)
    return out / "index.html"
