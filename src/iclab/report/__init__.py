"""Figures in one style, per-run ``report.md``, and the combined report of ``iclab reproduce``."""

from iclab.report._combined import write_combined_report
from iclab.report._run_report import comparison_table_md, run_summary, write_run_report
from iclab.report._style import MARKERS, PALETTE, color, new_figure, save_figure, theory_vs_sim

__all__ = [
    "write_run_report",
    "write_combined_report",
    "run_summary",
    "comparison_table_md",
    "PALETTE",
    "MARKERS",
    "color",
    "new_figure",
    "save_figure",
    "theory_vs_sim",
]
