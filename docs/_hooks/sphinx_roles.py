r"""Griffe extension for the API reference: the Sphinx roles of iclab's docstrings become Markdown that renders.

iclab's docstrings write math and cross-references the Sphinx way, which mkdocstrings shows as raw text. Before a
docstring is parsed this extension rewrites

- ``:math:`x``` to inline math ``$x$`` and a ``.. math::`` directive (its text on the same line and the indented
  lines after it) to a display block ``$$ … $$``; ``pymdownx.arithmatex`` and MathJax typeset both;
- ``:func:``, ``:class:``, ``:meth:``, ``:data:``, ``:attr:``, ``:mod:``, ``:exc:`` and ``:obj:`` to a link to the
  object's entry in the reference (``~a.b.c`` shows ``c``). The name is resolved in the docstring's own scope, as
  Python would; a name that resolves to nothing rendered stays plain code (an *optional* autoref), so a reference
  to a private helper never breaks ``mkdocs build --strict``.

The sources keep their roles; only the rendered pages change.
"""

from __future__ import annotations

import html
import re
from typing import Any

from griffe import Extension, NameResolutionError, Object

_ROLE = re.compile(r":(?P<role>math|func|class|meth|data|attr|mod|exc|obj):`(?P<text>[^`]+)`")
_DIRECTIVE = re.compile(r"^(?P<indent>[ \t]*)\.\. math::[ \t]*(?P<first>.*)$")


def _math_blocks(text: str) -> str:
    """``.. math::`` directives (the text after it and the following more-indented lines) -> ``$$ … $$``."""
    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        m = _DIRECTIVE.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        indent, body = len(m["indent"]), [m["first"].strip()] if m["first"].strip() else []
        i += 1
        while i < len(lines) and lines[i].strip() and len(lines[i]) - len(lines[i].lstrip()) > indent:
            body.append(lines[i].strip())
            i += 1
        out += ["", m["indent"] + "$$", *(m["indent"] + b for b in body), m["indent"] + "$$", ""]
    return "\n".join(out)


def _target(obj: Object, name: str) -> str:
    """The full path of ``name`` as seen from ``obj``'s docstring (``name`` itself when it cannot be resolved)."""
    if name.startswith("iclab."):
        return name
    head, _, rest = name.partition(".")
    try:
        path = obj.resolve(head)
    except (NameResolutionError, KeyError, ValueError):
        return name
    return f"{path}.{rest}" if rest else path


def _role(obj: Object, match: re.Match) -> str:
    role, text = match["role"], match["text"].strip()
    if role == "math":
        return f"${text}$"
    name = text.lstrip("~!").rstrip("()")
    shown = name.rsplit(".", 1)[-1] if text.startswith("~") else name
    return (
        f'<autoref identifier="{html.escape(_target(obj, name))}" optional><code>{html.escape(shown)}</code></autoref>'
    )


def render_roles(obj: Object, text: str) -> str:
    """``text`` (a docstring of ``obj``) with every Sphinx role and ``.. math::`` directive rewritten."""
    return _ROLE.sub(lambda m: _role(obj, m), _math_blocks(text))


class SphinxRoles(Extension):
    """Rewrite each docstring once the whole package is loaded (names then resolve across modules)."""

    def on_object(self, *, obj: Object, **kwargs: Any) -> None:
        if obj.docstring is not None and not obj.is_alias:
            obj.docstring.value = render_roles(obj, obj.docstring.value)
