"""Per-run figures and ``report.md``, the combined report of ``iclab reproduce``, and its check in
headless Chromium."""

from iclab.report._browser import PageCheck, check_page, find_chromium
from iclab.report._combined import PAPERS, write_combined_report
from iclab.report._html import md_to_html
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
    "run_summary",
    "rejudged_summary",
    "run_timing",
    "fmt_seconds",
    "comparison_table_md",
    "md_to_html",
    "PAPERS",
    "check_page",
    "find_chromium",
    "PageCheck",
]
