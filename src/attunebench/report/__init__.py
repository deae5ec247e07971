"""Reports from a summary: one self-contained HTML page (inline SVG, no script) or markdown."""

from attunebench.report.environment import make_environment
from attunebench.report.render import SECTIONS, Format, render_html, render_markdown, write_report

__all__ = [
    "SECTIONS",
    "Format",
    "make_environment",
    "render_html",
    "render_markdown",
    "write_report",
]
