"""`attunebench ...`: the command line (typer + rich). One module per command group."""

from __future__ import annotations

import typer

from attunebench.cli import data as data_commands

app = typer.Typer(
    name="attunebench",
    help="Emotional-intelligence benchmark for language models on real, first-person annotated conversations.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(data_commands.app, name="data")


def main() -> None:
    app()
