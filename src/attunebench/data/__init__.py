"""The attunebench/v1 dataset model, taxonomies and IO."""

from attunebench.data.jsonl import iter_conversations, read_conversations, write_conversations
from attunebench.data.schema import (
    FORMAT,
    Context,
    Conversation,
    Outcome,
    Participant,
    Preference,
    Response,
    Source,
    State,
    Taxonomy,
    TaxonomyLabel,
    Turn,
)
from attunebench.data.taxonomy import DEFAULT_TAXONOMY_ID, load_taxonomy, taxonomy_of

__all__ = [
    "DEFAULT_TAXONOMY_ID",
    "FORMAT",
    "Context",
    "Conversation",
    "Outcome",
    "Participant",
    "Preference",
    "Response",
    "Source",
    "State",
    "Taxonomy",
    "TaxonomyLabel",
    "Turn",
    "iter_conversations",
    "load_taxonomy",
    "read_conversations",
    "taxonomy_of",
    "write_conversations",
]
