"""The public claims API (issue 39, item 1): ``iclab.claims`` is where paper packages and plugins get the records,
the rules, the gates and the shared combine rules; its rules table is the one the docs quote."""

from __future__ import annotations

import re
from pathlib import Path

import iclab.claims
from iclab.claims import TEST_KINDS, rule_table
from iclab.claims._resample import TRUTHS
from iclab.claims._rule import rule_table_markdown

ROOT = Path(__file__).resolve().parents[1]


def test_every_public_name_imports_and_the_records_come_from_one_place():
    from iclab.claims import ClaimRecord, Measure, Rule

    assert {ClaimRecord.__module__, Measure.__module__, Rule.__module__} <= {
        "iclab.claims._records",
        "iclab.claims._rule",
    }
    missing = [n for n in iclab.claims.__all__ if not hasattr(iclab.claims, n)]
    assert not missing and len(set(iclab.claims.__all__)) == len(iclab.claims.__all__)


def test_paper_packages_and_the_example_plugin_import_the_public_api_only():
    """A paper package is written as a plugin would be: no ``iclab.claims._…`` import outside ``iclab.claims``."""
    files = [p for p in (ROOT / "src/iclab/experiments").rglob("*.py") if p.parent.name != "experiments"]
    files += list((ROOT / "examples").rglob("*.py"))
    private = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in files
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if re.match(r"\s*(from|import) iclab\.claims\._\w+", line)
    ]
    assert len(files) > 40 and not private, private


def test_the_rule_table_covers_every_test_kind_and_names_each_least_favourable_truth():
    rows = rule_table()
    assert [r["kind"] for r in rows] == list(TEST_KINDS)
    for r in rows:
        assert all(r[c] and "|" not in r[c] for c in r), r  # a markdown table cell each
    resampled = {r["kind"] for r in rows} & set(TRUTHS)
    assert resampled == {"direction", "equivalence", "value", "absence"}  # every-cell: at the statistic level


def test_the_api_page_quotes_the_rule_table_as_the_code_makes_it():
    page = (ROOT / "docs/api/claims.md").read_text()
    quoted = re.search(r"<!-- rules:begin -->\n(.*?)\n<!-- rules:end -->", page, re.S)
    assert quoted and quoted.group(1) == rule_table_markdown(), "regenerate the table of docs/api/claims.md"
    assert "::: iclab.claims" in page
    assert "api/claims.md" in (ROOT / "mkdocs.yml").read_text()


def test_identical_units_are_named_as_such_not_as_one_unit():
    """Issue 39: five seeds with one value said "no uncertainty: … (one unit, or none measured)"."""
    import pandas as pd

    from iclab.claims import ClaimRecord, Measure, Rule, judge_records

    rec = ClaimRecord(
        "x", "a claim", "arXiv:0000.00000", "effect direction", quantity="q",
        measure=Measure({"part": "p"}, "acc", ("seed",)), rule=Rule("direction", smallest=0.01),
    )  # fmt: skip
    rows = pd.DataFrame([{"part": "p", "seed": s, "acc": 0.5} for s in range(5)])
    same = judge_records([rec], None, rows)["x"]
    assert same.verdict == "not judged" and "its 5 units all gave the same value" in same.reason, same.reason
    one = judge_records([rec], None, rows.iloc[:1])["x"]
    assert one.verdict == "not judged" and "5 units" not in one.reason
