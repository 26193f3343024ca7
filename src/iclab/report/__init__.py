"""Per-run figures and ``report.md``, the combined report of ``iclab reproduce``, the paper-settings report of the
shipped reference runs (``iclab report --reference``), and the reports' check in headless Chromium."""

from iclab.report._browser import PageCheck, check_page, check_pages, find_chromium
from iclab.report._combined import write_combined_report
from iclab.report._html import md_to_html
from iclab.report._judging import plan_sizes
from iclab.report._sizes import ClaimSize, SizePlan, Choice, choose_sizes, fmt_hours
from iclab.report._reference import Reference, load_reference, reference_runs, reference_summary, ship_reference
from iclab.report._reference_report import TITLE as REFERENCE_REPORT_TITLE
from iclab.report._reference_report import write_reference_report
from iclab.report._sections import PAPERS
from iclab.report._run_report import (
    comparison_table_md,
    fmt_seconds,
    rejudged_summary,
    run_and_report,
    run_summary,
    run_timing,
    write_run_report,
)

__all__ = [
    "write_run_report",
    "run_and_report",
    "write_combined_report",
    "write_reference_report",
    "REFERENCE_REPORT_TITLE",
    "Reference",
    "load_reference",
    "reference_runs",
    "reference_summary",
    "ship_reference",
    "run_summary",
    "rejudged_summary",
    "plan_sizes",
    "SizePlan",
    "ClaimSize",
    "Choice",
    "choose_sizes",
    "fmt_hours",
    "run_timing",
    "fmt_seconds",
    "comparison_table_md",
    "md_to_html",
    "PAPERS",
    "check_page",
    "check_pages",
    "find_chromium",
    "PageCheck",
]
