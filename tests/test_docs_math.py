"""The docs' math renders offline in real headless Chromium: the site serves MathJax itself (``docs/_hooks/mathjax.py``
copies it from a PyPI package at build time), every formula of every paper note and API page (the theory and hf pages among them)
is typeset, none is left as raw TeX, and none is a MathJax error (an undefined macro such as ``\\boldsymbol`` is an
error: ``noundefined`` is off). The checker itself is shown to catch an undefined macro, raw TeX and a page whose
MathJax does not load. Chromium is required (``make install`` installs Debian's ``chromium``): without it this test fails.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from iclab.report import check_page, check_pages

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
PAPERS = sorted(p.stem for p in (ROOT / "docs" / "papers").glob("*.md"))
APIS = sorted(p.stem for p in (ROOT / "docs" / "api").glob("*.md"))
PAGES = [f"papers/{p}" for p in PAPERS] + [f"api/{p}" for p in APIS]
REQUIRED = [f"papers/{p}" for p in PAPERS] + ["api/theory", "api/hf"]

# After MathJax's startup typesetting: formulas, typeset ones, raw ones, MathJax error nodes, TeX left in the text
# outside code and math, and whether the web fonts loaded.
PROBE = r"""(async () => {
  if (!window.MathJax || !MathJax.startup || !MathJax.startup.promise) return {loaded: false};
  await MathJax.startup.promise;
  await document.fonts.ready;
  const math = Array.from(document.querySelectorAll(".arithmatex"));
  const text = (document.querySelector("article") || document.body).cloneNode(true);
  text.querySelectorAll("pre, code, script, mjx-container").forEach(e => e.remove());
  const tex = text.textContent.match(/\\[A-Za-z]+|\\[()\[\]]|\$\$|:math:`/g) || [];
  return {
    loaded: true,
    formulas: math.length,
    raw: math.filter(e => !e.querySelector("mjx-container")).map(e => e.textContent.slice(0, 80)),
    errors: Array.from(document.querySelectorAll("mjx-merror")).map(e => e.getAttribute("data-mjx-error") || e.textContent),
    tex: tex.slice(0, 10),
    fonts: Array.from(document.fonts).filter(f => f.family.startsWith("MJX") && f.status === "loaded").length,
  };
})()"""


@pytest.fixture(scope="module")
def chromium():
    path = shutil.which("chromium")
    if path is None:
        pytest.fail("chromium is not installed: `make install` installs it (apt-get install -y chromium as root)")
    return path


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    site = tmp_path_factory.mktemp("docs") / "site"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env={**env, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return site


def _math(page: Path, chromium: str) -> tuple[dict, list[str]]:
    check = check_page(page, chromium=chromium, evaluate=PROBE, timeout=120)
    return check.value, check.errors


def test_site_serves_mathjax_and_no_cdn(site):
    html = (site / "papers" / "temperature" / "index.html").read_text()
    assert "javascripts/mathjax/tex-chtml-full.js" in html
    assert "unpkg.com" not in html and "cdn.jsdelivr" not in html and "fonts.googleapis" not in html
    assert (site / "javascripts" / "mathjax" / "tex-chtml-full.js").stat().st_size > 500_000
    assert len(list((site / "javascripts" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))) > 10


def test_math_renders_in_chromium(site, chromium):
    """Every page with math: the paper notes, the theory and hf API pages, and every other API page with math."""
    pages = [p for p in PAGES if 'class="arithmatex"' in (site / p / "index.html").read_text()]
    assert set(REQUIRED) <= set(pages), "pages without math"
    problems = {}
    checks = check_pages([site / p / "index.html" for p in pages], chromium=chromium, evaluate=PROBE, timeout=120)
    for page, check in zip(pages, checks):
        value, errors = check.value, check.errors
        found = {
            "MathJax did not load": not value["loaded"],
            "formulas left as raw TeX": value.get("raw"),
            "MathJax errors (undefined macros?)": value.get("errors"),
            "TeX outside math": value.get("tex"),
            "MathJax's web fonts did not load": value.get("fonts") == 0,
            "console errors or files that failed to load": errors,
        }
        if any(found.values()):
            problems[page] = {k: v for k, v in found.items() if v}
    assert problems == {}


def _page(folder: Path, body: str, mathjax: bool = True) -> Path:
    scripts = '<script src="javascripts/mathjax.js"></script>'
    if mathjax:
        scripts += '<script src="javascripts/mathjax/tex-chtml-full.js"></script>'
    page = folder / "page.html"
    page.write_text(f"<!doctype html><html><head>{scripts}</head><body><article>{body}</article></body></html>")
    return page


def test_checker_catches_undefined_macros_raw_tex_and_missing_mathjax(site, chromium, tmp_path):
    shutil.copytree(site / "javascripts", tmp_path / "javascripts")
    good = r'<span class="arithmatex">\(\boldsymbol\alpha = \operatorname{Tr}(A)\)</span>'
    value, errors = _math(_page(tmp_path, good), chromium)
    assert value["raw"] == [] and value["errors"] == [] and value["formulas"] == 1 and errors == []

    undefined = r'<span class="arithmatex">\(\notamacro x\)</span> and \(y\) outside'
    value, _ = _math(_page(tmp_path, undefined), chromium)
    assert value["errors"] and "notamacro" in value["errors"][0]
    assert value["tex"] == ["\\(", "\\)"]

    value, _ = _math(_page(tmp_path, good, mathjax=False), chromium)
    assert value == {"loaded": False}


def test_build_without_the_mathjax_package_stops_with_one_line(monkeypatch):
    """The docs hook fails the build with the install step when the MathJax package is missing (no CDN fallback)."""
    import importlib.metadata
    import importlib.util

    from mkdocs.exceptions import PluginError

    spec = importlib.util.spec_from_file_location("mathjax_hook", ROOT / "docs" / "_hooks" / "mathjax.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    assert hook.mathjax_files(hook.mathjax_es5())  # installed here: the component and its fonts

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(hook.importlib.metadata, "distribution", missing)
    with pytest.raises(PluginError, match=r"django-static-mathjax, which is not installed: pip install") as err:
        hook.mathjax_es5()
    assert "\n" not in str(err.value)
