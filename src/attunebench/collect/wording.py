"""How labels read to a participant: plain words on the page ("Saying back what I said, in
other words" for "restatement"), the taxonomy's names in the data."""

from __future__ import annotations

from dataclasses import dataclass

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
