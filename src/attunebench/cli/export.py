"""`attunebench export lm-eval DATASET --out DIR`: a task folder for lm-evaluation-harness."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from attunebench.cli.consoles import CommandConsole, command_group
from attunebench.cli.errors import clear_errors, folder_out
from attunebench.data.validate import DatasetError

app = command_group("AttuneBench's tasks for other evaluation harnesses.")
out = CommandConsole()


@app.command("lm-eval")
def lm_eval(
    dataset: Annotated[Path, typer.Argument(help="An attunebench/v1 JSON Lines file.")],
    folder: Annotated[Path, typer.Option("--out", help="The task folder to write.")],
) -> None:
    """Write the choice tasks as lm-evaluation-harness multiple_choice tasks."""
    folder_out(folder)
    from attunebench.export.lm_eval import PREFIX, export

    with clear_errors(DatasetError):
        written = export(dataset, folder)
    for name, count in written.items():
        out.print(f"{PREFIX}{name}: {count} questions", markup=False, highlight=False)
    out.print(
        f"lm_eval --model hf --model_args pretrained=PATH --include_path {folder} "
        f"--tasks {','.join(PREFIX + name for name in written)}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
