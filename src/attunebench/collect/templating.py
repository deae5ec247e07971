"""The one Jinja environment of the collection app: autoescaped, strict about undefined names."""

from __future__ import annotations

import re

from fastapi.templating import Jinja2Templates
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape


def paragraphs(text: str) -> list[str]:
    """Split a study text on blank lines; each part is escaped and shown as one paragraph.

    >>> paragraphs("One.\\n\\nTwo\\nlines.")
    ['One.', 'Two\\nlines.']
    """
    return [part.strip() for part in re.split(r"\n\s*\n", text) if part.strip()]


def make_environment() -> Environment:
    env = Environment(
        loader=PackageLoader("attunebench.collect", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["paragraphs"] = paragraphs
    return env


def make_templates() -> Jinja2Templates:
    return Jinja2Templates(env=make_environment())
