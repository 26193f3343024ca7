"""MkDocs hook: MathJax is served with the site, so the math renders offline (no CDN at view time).

The files come from a package registry at build time: the PyPI package ``django-static-mathjax`` (in the ``docs``
extra) is a plain copy of MathJax 3.2.2's npm release, packaged as static files. This hook adds its combined
component ``es5/tex-chtml-full.js`` (every TeX package, ``\\boldsymbol`` included, so nothing is fetched later)
and the CommonHTML web fonts (``es5/output/chtml/fonts/woff-v2``) to the site under ``javascripts/mathjax/``,
where ``mkdocs.yml`` loads them; ``docs/javascripts/mathjax.js`` configures MathJax before it loads. A missing
package stops the build with one line saying how to install it.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

DISTRIBUTION = "django-static-mathjax"
SITE_FOLDER = "javascripts/mathjax"
COMPONENT = "tex-chtml-full.js"
FONTS = "output/chtml/fonts/woff-v2"


def mathjax_es5() -> Path:
    """The ``es5`` folder of the installed MathJax (one ``PluginError`` line when it is missing)."""
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise PluginError(
            f"the docs serve MathJax from the PyPI package {DISTRIBUTION}, which is not installed: "
            f"pip install '{DISTRIBUTION}==3.2.2.1' (or pip install -e '.[docs]', or make install)"
        ) from None
    es5 = Path(dist.locate_file("mathjax/static/mathjax/es5"))
    if not (es5 / COMPONENT).is_file() or not any((es5 / FONTS).glob("*.woff")):
        raise PluginError(f"{DISTRIBUTION} {dist.version} has no {COMPONENT} and fonts in {es5}: reinstall it")
    return es5


def mathjax_files(es5: Path) -> dict[str, Path]:
    """Site path -> source file of every MathJax file the site serves."""
    sources = [es5 / COMPONENT, *sorted((es5 / FONTS).glob("*.woff"))]
    return {f"{SITE_FOLDER}/{src.relative_to(es5).as_posix()}": src for src in sources}


def on_files(files: Files, config) -> Files:
    for uri, src in mathjax_files(mathjax_es5()).items():
        files.append(File.generated(config, uri, abs_src_path=str(src)))
    return files
