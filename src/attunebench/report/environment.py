"""The one Jinja environment of the reports: autoescaped, strict about undefined names.

HTML (and anything not named `.md`) is autoescaped, so text from runs and datasets (model
names, conversation text, raw outputs) can never become markup; the markdown leaderboard is
not HTML, so it escapes table syntax with the `cell` filter instead.
"""

from __future__ import annotations

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

DASH = "—"


def number(value: float | None, digits: int = 3) -> str:
    """A number for a table; missing ones as a dash.

    >>> number(0.12345), number(None)
    ('0.123', '—')
    """
    return DASH if value is None else f"{value:.{digits}f}"


def percent(value: float | None) -> str:
    """A share as a whole percentage.

    >>> percent(0.256)
    '26%'
    """
    return DASH if value is None else f"{100 * value:.0f}%"


def interval(low: float | None, high: float | None, digits: int = 3) -> str:
    """An interval as [low, high]; empty when either end is missing.

    >>> interval(0.1, 0.25)
    '[0.100, 0.250]'
    """
    if low is None or high is None:
        return ""
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def cell(value: object) -> str:
    """Text safe inside a markdown table cell: pipes escaped, lines joined.

    >>> cell("a|b\\nc")
    'a\\\\|b c'
    """
    return str(value).replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def make_environment() -> Environment:
    env = Environment(
        loader=PackageLoader("attunebench.report", "templates"),
        autoescape=select_autoescape(
            disabled_extensions=("md",), default=True, default_for_string=True
        ),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(number=number, percent=percent, cell=cell)
    env.globals["interval"] = interval
    return env
