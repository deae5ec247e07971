"""The collection web app: genuine conversations with anonymised models, annotated turn by turn.

Public API: `create_app` (the FastAPI app factory), `Settings`, `load_study`/`Study`,
`init_database` (what `attunebench collect init` runs) and `export_file`. They are imported on
first use, so `attunebench --help` does not load the web stack.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from attunebench.collect.app import create_app
    from attunebench.collect.bootstrap import init_database
    from attunebench.collect.export import export_file
    from attunebench.collect.settings import Settings
    from attunebench.collect.study import Study, StudyError, load_study

# Here, not in `settings` (which needs pydantic-settings): the CLI names it in every `collect`
# command's options, and the CLI must import without the `collect` extra (`make demo`).
DEFAULT_DATABASE_URL = "sqlite:///attunebench-collect.db"

_WHERE = {
    "create_app": "app",
    "init_database": "bootstrap",
    "export_file": "export",
    "Settings": "settings",
    "Study": "study",
    "StudyError": "study",
    "load_study": "study",
}

__all__ = [
    "DEFAULT_DATABASE_URL",
    "Settings",
    "Study",
    "StudyError",
    "create_app",
    "export_file",
    "init_database",
    "load_study",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"attunebench.collect.{_WHERE[name]}"), name)
