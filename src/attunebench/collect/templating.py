"""The one Jinja environment of the collection app (autoescaped, strict about undefined names),
and how labels read to a participant: plain words on the page ("Saying back what I said, in
other words" for "restatement"), the taxonomy's names in the data."""

from __future__ import annotations

import re
from dataclasses import dataclass

from fastapi.templating import Jinja2Templates
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from attunebench.collect.questions import PANAS_ITEMS
from attunebench.collect.study import Study
from attunebench.data.schema import Taxonomy

# For the shipped attunebench-default taxonomy.
PLAIN_BEHAVIORS = {
    "question": "Asking me questions",
    "restatement": "Saying back what I said, in other words",
    "reflection": "Naming how I feel",
    "self-disclosure": "Sharing a similar experience of its own",
    "reassurance": "Reassuring me, or pointing out my strengths",
    "suggestion": "Suggesting what I could do",
    "information": "Giving facts or resources",
    "validation": "Saying my feelings make sense",
    "lecturing": "Lecturing me, or saying what I should have done",
    "dismissing": "Playing down my feelings or my problem",
    "deflecting": "Changing the subject, or sending me elsewhere without listening",
    "over-apologising": "Apologising too much instead of engaging",
    "generic": "Words that could be sent to anyone",
    "other": "Small talk, or something else",
}


@dataclass(frozen=True, slots=True)
class LabelText:
    text: str
    hint: str


def label_texts(taxonomy: Taxonomy) -> dict[str, LabelText]:
    """What the page shows for each label of the taxonomy, by label name.

    >>> from attunebench.data.schema import TaxonomyLabel
    >>> t = Taxonomy(id="attunebench-default", version="1", behaviors=(
    ...     TaxonomyLabel(name="restatement", description="Restates what the user said."),))
    >>> label_texts(t)["restatement"].text
    'Saying back what I said, in other words'
    """
    texts = {label.name: LabelText(label.name, label.description) for label in taxonomy.emotions}
    phrases = PLAIN_BEHAVIORS if taxonomy.id == "attunebench-default" else {}
    for label in taxonomy.behaviors:
        plain = phrases.get(label.name)
        # The description repeats the phrase in a researcher's voice ("the user"): leave it out.
        hint = "" if plain else label.description
        texts[label.name] = LabelText(plain or label.name, hint)
    return texts


def paragraphs(text: str) -> list[str]:
    """Split a study text into paragraphs at blank lines, joining the lines of each: a TOML
    string is wrapped for the editor, not for the page, so its line breaks mean nothing.

    >>> paragraphs("One.\\n\\nTwo\\nlines.")
    ['One.', 'Two lines.']
    """
    parts = (part.split() for part in re.split(r"\n\s*\n", text))
    return [" ".join(words) for words in parts if words]


def make_templates(study: Study, taxonomy: Taxonomy) -> Jinja2Templates:
    """The app's templates, every page seeing the study and its labels, and every one compiled
    now: compiled on first use instead, each would cost its first visitor a few hundred
    milliseconds, and the request threads that meet it at once would compile it once each."""
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
    labels = label_texts(taxonomy)
    env.globals.update(study=study, taxonomy=taxonomy, labels=labels, panas_items=PANAS_ITEMS)
    for name in env.list_templates(extensions=["html"]):
        env.get_template(name)
    return Jinja2Templates(env=env)
