"""`attunebench ...`: the command line (typer + rich). One module per command group."""

from __future__ import annotations

from typing import Annotated

import typer

from attunebench import __version__
from attunebench.cli import collect as collect_commands
from attunebench.cli import data as data_commands
from attunebench.cli import demo as demo_command
from attunebench.cli import export as export_commands
from attunebench.cli import report as report_commands
from attunebench.cli import run as run_command
from attunebench.cli import simulators as simulators_commands
from attunebench.cli import suite as suite_commands
from attunebench.cli.consoles import command_group

app = command_group(
    "Emotional intelligence of language models, measured on real annotated conversations.",
    name="attunebench",
    pretty_exceptions_enable=False,
)
app.add_typer(data_commands.app, name="data")
app.command("run")(run_command.run)
app.command("merge")(run_command.merge)
app.add_typer(suite_commands.app, name="suite")
app.add_typer(collect_commands.app, name="collect")
app.add_typer(export_commands.app, name="export")
app.command("report")(report_commands.report)
app.command("power")(report_commands.power)
app.command("demo")(demo_command.demo)
app.add_typer(simulators_commands.app, name="simulators")


def _version(shown: bool) -> None:
    if shown:
        typer.echo(f"attunebench {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Emotional intelligence of language models, measured on real annotated conversations."""


def main() -> None:
    app()
