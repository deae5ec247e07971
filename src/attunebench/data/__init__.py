"""The attunebench/v1 dataset model, taxonomies and IO.

Parquet and Hugging Face `datasets` IO live in `attunebench.data.parquet` (not imported here, so
that loading the package does not load pyarrow).
"""

from attunebench.data.jsonl import iter_conversations, read_conversations, write_conversations
from attunebench.data.sample import sample_path
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
from attunebench.data.stats import DatasetStats, StatsBuilder, compute_stats
from attunebench.data.taxonomy import DEFAULT_TAXONOMY_ID, load_taxonomy, taxonomy_of
from attunebench.data.validate import (
    DatasetError,
    FileReport,
    Problem,
    load_validated,
    validate_file,
)

__all__ = [
    "DEFAULT_TAXONOMY_ID",
    "FORMAT",
    "Context",
    "Conversation",
    "DatasetError",
    "DatasetStats",
    "FileReport",
    "Outcome",
    "Participant",
    "Preference",
    "Problem",
    "Response",
    "Source",
    "State",
    "StatsBuilder",
    "Taxonomy",
    "TaxonomyLabel",
    "Turn",
    "compute_stats",
    "iter_conversations",
    "load_taxonomy",
    "load_validated",
    "read_conversations",
    "sample_path",
    "taxonomy_of",
    "validate_file",
    "write_conversations",
]
