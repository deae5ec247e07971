"""Reports from a summary: one self-contained HTML page (inline SVG, no script) or markdown."""

from attunebench.report.render import SECTIONS, render_html, render_markdown, write_report

__all__ = ["SECTIONS", "render_html", "render_markdown", "write_report"]
