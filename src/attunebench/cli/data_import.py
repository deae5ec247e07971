"""`attunebench data import ...`: one subcommand per corpus, plus generic CSV."""

from __future__ import annotations

import typer

app = typer.Typer(help="Import a real corpus into attunebench/v1 JSON Lines.", no_args_is_help=True)
