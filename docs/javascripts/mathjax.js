// MathJax 3 for pymdownx.arithmatex (generic mode), served with the site (docs/_hooks/mathjax.py copies it from
// a package). MathJax typesets the page once at startup. There is deliberately no `document$.subscribe`
// re-typeset: the site has no instant navigation, and resetting TeX while MathJax is still starting up left
// every macro of a lazily loaded package (\boldsymbol) a red undefined macro. An undefined macro is a TeX error
// (noundefined is off), so tests/test_docs_math.py catches it.
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"]],
    displayMath: [["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true,
    packages: {"[-]": ["noundefined"]},
  },
  options: {ignoreHtmlClass: ".*|", processHtmlClass: "arithmatex"},
};
