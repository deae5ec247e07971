"""How the commands print: the console every command prints with, and how help is shown.

Piped or redirected (no terminal, no COLUMNS), the console is wide enough that a table is
written whole: rich would cut it at 80 columns, and a log lost its right-hand columns. Help and
usage errors are click's plain text (`HELP_MARKUP`): typer's rich panels show `<bool>` beside a
flag, which takes no value, and a usage error is then plain lines, as the commands' own are.
"""

from __future__ import annotations

import os
from typing import Any, Final

import typer
from rich.console import Console, ConsoleDimensions

PIPED_WIDTH = 1000  # columns: wider than any table the commands print
HELP_MARKUP: Final = None  # plain help, no markup read in it


def command_group(help: str, **more: Any) -> typer.Typer:
    """A group of commands as every group of this CLI is: its help, plain (`HELP_MARKUP`),
    shown when it is called with no command."""
    return typer.Typer(help=help, no_args_is_help=True, rich_markup_mode=HELP_MARKUP, **more)


class CommandConsole(Console):
    @property
    def size(self) -> ConsoleDimensions:
        found = super().size
        if self.is_terminal or os.environ.get("COLUMNS"):
            return found
        return ConsoleDimensions(PIPED_WIDTH, found.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self.width, self.height = new_size
