"""`attunebench data ...`: schema, validate, stats, import, export."""

from __future__ import annotations

import json

import typer
from rich.console import Console

from attunebench.cli.data_import import app as import_app
from attunebench.data.schema import Conversation

app = typer.Typer(help="Inspect, validate, import and export attunebench/v1 datasets.", no_args_is_help=True)
console = Console()
app.add_typer(import_app, name="import")


@app.command()
def schema() -> None:
    """Print the JSON Schema of one attunebench/v1 conversation record."""
    print(json.dumps(Conversation.model_json_schema(), indent=2))
