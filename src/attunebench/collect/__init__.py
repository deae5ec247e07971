"""The collection web app: genuine conversations with anonymised models, annotated turn by turn.

Its modules are imported where they are used, so `attunebench --help` does not load the web
stack.
"""

# Here, not in `settings` (which needs pydantic-settings): the CLI names it in every `collect`
# command's options, and the CLI must import without the `collect` extra (`make demo`).
DEFAULT_DATABASE_URL = "sqlite:///attunebench-collect.db"
