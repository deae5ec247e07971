"""The attunebench/v1 dataset model, taxonomies and IO.

Parquet and Hugging Face `datasets` IO live in `attunebench.data.parquet` (not imported here, so
that loading the package does not load pyarrow).
"""

from attunebench.data.jsonl import read_conversations, write_conversations
from attunebench.data.schema import Conversation, Taxonomy
from attunebench.data.taxonomy import load_taxonomy
from attunebench.data.validate import load_validated

__all__ = [
    "Conversation",
    "Taxonomy",
    "load_taxonomy",
    "load_validated",
    "read_conversations",
    "write_conversations",
]
