"""The one Jinja environment of the collection app: autoescaped, strict about undefined names."""

from __future__ import annotations

import re

from fastapi.templating import Jinja2Templates
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape


def paragraphs(text: str) -> list[str]:
    """Split a study text into paragraphs at blank lines, joining the lines of each: a TOML
    string is wrapped for the editor, not for the page, so its line breaks mean nothing.

    >>> paragraphs("One.\\n\\nTwo\\nlines.")
    ['One.', 'Two lines.']
    """
    parts = (part.split() for part in re.split(r"\n\s*\n", text))
    return [" ".join(words) for words in parts if words]


def make_templates() -> Jinja2Templates:
    """The app's templates, every one compiled now: compiled on first use instead, each would
    cost its first visitor a few hundred milliseconds, and the request threads that meet it
    at once would compile it once each."""
    env = Environment(
        loader=PackageLoader("attunebench.collect", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        # Templates are package data: checking their files for changes on every page is waste.
        auto_reload=False,
    )
    env.filters["paragraphs"] = paragraphs
    for name in env.list_templates(extensions=["html"]):
        env.get_template(name)
    return Jinja2Templates(env=env)
