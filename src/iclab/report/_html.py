"""HTML building blocks of the combined report: a small markdown subset, tables, and the page template.

The page is self-contained (inline CSS, figures as base64 ``data:`` URIs, no scripts, no fonts or other
network resources). Verdicts use both colour and a symbol (✓ / ✗ / –), so they read in greyscale
print and for colour-blind readers; colours are from the Okabe–Ito palette.
"""

from __future__ import annotations

import html
import re
from typing import Sequence

__all__ = ["md_to_html", "html_table", "verdict_cell", "page", "slug"]

_INLINE = [
    (re.compile(r"`([^`]+)`"), r"<code>\1</code>"),
    (re.compile(r"\*\*([^*]+)\*\*"), r"<strong>\1</strong>"),
    (re.compile(r"(?<![\w*])\*([^*\n]+)\*(?![\w*])"), r"<em>\1</em>"),
    (re.compile(r"(?<![\w_])_([^_\n]+)_(?![\w_])"), r"<em>\1</em>"),
    (re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)"), r"<a href='\2'>\1</a>"),
]


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


_GREEK = {
    name: chr(code)
    for name, code in (
        ("alpha", 945),
        ("beta", 946),
        ("gamma", 947),
        ("delta", 948),
        ("epsilon", 949),
        ("varepsilon", 949),
        ("eta", 951),
        ("theta", 952),
        ("lambda", 955),
        ("mu", 956),
        ("nu", 957),
        ("pi", 960),
        ("rho", 961),
        ("sigma", 963),
        ("tau", 964),
        ("phi", 966),
        ("chi", 967),
        ("psi", 968),
        ("omega", 969),
        ("Sigma", 931),
        ("Delta", 916),
        ("Gamma", 915),
        ("Lambda", 923),
        ("Omega", 937),
        ("Phi", 934),
    )
}
_SYMBOLS = {
    "sim": "∼",
    "le": "≤",
    "leq": "≤",
    "ge": "≥",
    "geq": "≥",
    "approx": "≈",
    "cdot": "·",
    "times": "×",
    "infty": "∞",
    "to": "→",
    "in": "∈",
    "neq": "≠",
    "pm": "±",
    "sqrt": "√",
    "sum": "∑",
    "propto": "∝",
    "ell": "ℓ",
    "log": "log",
    "exp": "exp",
    "top": "⊤",
    "mathbb": "",
    "mathrm": "",
    "operatorname": "",
    "left": "",
    "right": "",
    ",": " ",
    ";": " ",
    "quad": " ",
}


def _math(tex: str) -> str:
    """Readable (not typeset) TeX: Greek letters and common symbols as Unicode, ^{}/_{} as sup/sub."""
    out = re.sub(
        r"\\([A-Za-z]+|[,;])",
        lambda m: _GREEK.get(m.group(1), _SYMBOLS.get(m.group(1), m.group(1))),
        html.escape(tex, quote=False),
    )
    for _ in range(3):  # nested braces, innermost first
        out = re.sub(r"\^\{([^{}]*)\}", r"<sup>\1</sup>", out)
        out = re.sub(r"_\{([^{}]*)\}", r"<sub>\1</sub>", out)
        out = re.sub(r"\{([^{}]*)\}", r"\1", out)
    out = re.sub(r"\^(\w|[^\s<])", r"<sup>\1</sup>", out)
    out = re.sub(r"_(\w)", r"<sub>\1</sub>", out)
    return f"<span class='math'>{out}</span>"


def _inline(text: str) -> str:
    parts = re.split(r"(\$[^$]+\$)", text)
    out = []
    for part in parts:
        if len(part) > 2 and part.startswith("$") and part.endswith("$"):
            out.append(_math(part[1:-1]))
            continue
        piece = html.escape(part, quote=False)
        for pattern, repl in _INLINE:
            piece = pattern.sub(repl, piece)
        out.append(piece)
    return "".join(out)


def md_to_html(text: str) -> str:
    """Render the markdown subset used in claims and notes: paragraphs, ``-``/``*``/``1.`` lists, ``#`` headings,
    ``` fenced code, `code`, **bold**, *em*, [links](url), and ``| a | b |`` tables. Everything else is escaped."""
    blocks, lines, i = [], (text or "").strip().splitlines(), 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
        elif line.startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            blocks.append("<pre>" + html.escape("\n".join(lines[i + 1 : j])) + "</pre>")
            i = j + 1
        elif line.lstrip().startswith("#"):
            blocks.append(f"<h4>{_inline(line.lstrip('# ').strip())}</h4>")
            i += 1
        elif re.match(r"\s*([-*]|\d+\.)\s", line):
            tag = "ol" if re.match(r"\s*\d+\.", line) else "ul"
            items = []
            while i < len(lines) and lines[i].strip():
                m = re.match(r"\s*([-*]|\d+\.)\s+(.*)", lines[i])
                if m:
                    items.append(m.group(2))
                elif items:
                    items[-1] += " " + lines[i].strip()
                i += 1
            blocks.append(f"<{tag}>" + "".join(f"<li>{_inline(t)}</li>" for t in items) + f"</{tag}>")
        elif line.lstrip().startswith("|"):
            rows = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
                if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                    rows.append(cells)
                i += 1
            blocks.append(html_table(rows[0], rows[1:], raw=False) if rows else "")
        else:
            para = []
            while i < len(lines) and lines[i].strip() and not re.match(r"\s*([-*]|\d+\.)\s|\s*#|```|\s*\|", lines[i]):
                para.append(lines[i].strip())
                i += 1
            blocks.append(f"<p>{_inline(' '.join(para))}</p>")
    return "\n".join(blocks)


_VERDICT_CELL = {"agrees": ("ok", "✓"), "disagrees": ("bad", "✗"), "not judged": ("na", "–")}


def verdict_cell(verdict: str, extra: str = "") -> str:
    """A table cell for a verdict: colour plus symbol plus word (reads in greyscale and for colour-blind readers);
    ``extra`` is trusted HTML appended (e.g. the reason)."""
    cls, mark = _VERDICT_CELL.get(verdict, ("na", "?"))
    return f"<td class='{cls}'>{mark} {html.escape(verdict)}{extra}</td>"


def html_table(header: Sequence[str], rows: Sequence[Sequence[str]], *, raw: bool = True, cls: str = "") -> str:
    """A table; with ``raw`` the row cells are trusted HTML (``<td>…`` included when a cell starts with ``<td``)."""
    head = "".join(f"<th>{_inline(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = []
        for c in row:
            c = str(c)
            cells.append(c if raw and c.startswith("<td") else f"<td>{c if raw else _inline(c)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f"<div class='scroll'><table class='{cls}'><thead><tr>{head}</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table></div>"
    )


_CSS = """
:root{--fg:#1d1d1f;--muted:#5f6368;--line:#d6d6d6;--zebra:#f6f7f9;--ok:#009E73;--bad:#D55E00;--na:#6b6b6b;
--accent:#0072B2}
*{box-sizing:border-box}
body{font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);margin:0}
main{max-width:1120px;margin:0 auto;padding:1.5em 1.5em 4em}
h1{font-size:1.9em;margin:.2em 0 .1em}h2{font-size:1.45em;margin-top:2.2em;border-bottom:2px solid var(--accent);
padding-bottom:.2em}h3{font-size:1.15em;margin-top:1.8em}h4{font-size:1em;margin:1.2em 0 .3em}
a{color:var(--accent)}code{font-size:.9em;background:var(--zebra);padding:0 .25em;border-radius:3px}
pre{white-space:pre-wrap;background:var(--zebra);padding:.6em .8em;border-radius:4px;font-size:.85em}
.meta,.muted{color:var(--muted);font-size:.9em}
.scroll{overflow-x:auto}
table{border-collapse:collapse;margin:.8em 0 1.2em;font-size:.9em;min-width:50%}
th,td{border-bottom:1px solid var(--line);padding:.35em .7em;text-align:left;vertical-align:top}
thead th{border-bottom:2px solid var(--fg);white-space:nowrap}tbody tr:nth-child(even){background:var(--zebra)}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.ok{color:var(--ok);font-weight:600;white-space:nowrap}.bad{color:var(--bad);font-weight:700;white-space:nowrap}
.na{color:var(--na);white-space:nowrap}
td.ok .muted,td.bad .muted,td.na .muted{white-space:normal;overflow-wrap:anywhere;font-weight:normal}
table.cmp thead th,table.ledger thead th,table.summary thead th{white-space:normal}
nav.toc{background:var(--zebra);border:1px solid var(--line);border-radius:6px;padding:.6em 1.2em;margin:1em 0}
nav.toc ul{margin:.2em 0;padding-left:1.2em}nav.toc>ul{padding-left:0;list-style:none}
.claim{border-left:4px solid var(--accent);padding:.1em 1em;background:#f3f8fc}
.notes{border-left:4px solid #E69F00;padding:.1em 1em;background:#fdf7ea}
.figs{display:grid;grid-template-columns:repeat(auto-fill,minmax(420px,1fr));gap:1em}
figure.wide{grid-column:1/-1}figure.wide img{max-width:980px;margin:0 auto}
figure{margin:0;border:1px solid var(--line);border-radius:6px;padding:.5em;background:#fff}
figure img{width:100%;height:auto;display:block}figcaption{font-size:.85em;color:var(--muted);margin-top:.3em}
.error{color:var(--bad)}.math{font-family:"DejaVu Serif",Georgia,serif;font-style:italic;white-space:nowrap}
@media print{main{max-width:none}nav.toc{display:none}h2{break-before:page}figure{break-inside:avoid}}
"""


def page(title: str, body: str) -> str:
    return (
        f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<meta name='viewport' content='width=device-width,initial-scale=1'><title>{html.escape(title)}</title>"
        f"<link rel='icon' href='data:,'><style>{_CSS}</style></head>\n<body><main>\n{body}\n</main></body></html>\n"
    )
