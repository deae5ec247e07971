"""Taxonomies are data: JSON files shipped in `taxonomies/`, addressed by id.

A conversation names its taxonomy by id (one shipped here) or carries it inline.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from attunebench.data.schema import Conversation, Taxonomy

DEFAULT_TAXONOMY_ID = "attunebench-default"


class UnknownTaxonomyError(LookupError):
    pass


def shipped_taxonomy_ids() -> list[str]:
    folder = resources.files("attunebench.data") / "taxonomies"
    names = (p.name for p in folder.iterdir())
    return sorted(name.removesuffix(".json") for name in names if name.endswith(".json"))


@cache
def load_taxonomy(taxonomy_id: str) -> Taxonomy:
    path = resources.files("attunebench.data") / "taxonomies" / f"{taxonomy_id}.json"
    if not path.is_file():
        known = ", ".join(shipped_taxonomy_ids())
        raise UnknownTaxonomyError(f"unknown taxonomy {taxonomy_id!r} (shipped: {known})")
    return Taxonomy.model_validate(json.loads(path.read_text(encoding="utf-8")))


def taxonomy_of(conversation: Conversation) -> Taxonomy:
    if isinstance(conversation.taxonomy, Taxonomy):
        return conversation.taxonomy
    return load_taxonomy(conversation.taxonomy)


def normalise_label(
    raw: str, labels: tuple[object, ...] | Taxonomy, kind: str = "emotions"
) -> str | None:
    """A label as a model or a corpus writes it, as the taxonomy names it, or None: case,
    surrounding space and listed synonyms are forgiven, nothing else is guessed."""
    taxonomy_labels = getattr(labels, kind) if isinstance(labels, Taxonomy) else labels
    wanted = raw.strip().strip("[]").strip().lower()
    for label in taxonomy_labels:
        name = getattr(label, "name", label)
        synonyms = getattr(label, "synonyms", ())
        if wanted == str(name).lower() or wanted in (s.lower() for s in synonyms):
            return str(name)
    return None
