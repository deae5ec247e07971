"""`python -m attunebench.models.assemble [NAME ...]`: assemble and verify the local models'
files (all four by default; `make ladder-models`), one line each; a file that is not the pinned
one is one line naming it and both digests, and the exit status 1."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from attunebench.models.local_models import LOCAL_MODELS, LocalModelError, local_model


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Assemble and verify the local models' files.")
    parser.add_argument(
        "names", nargs="*", help=f"local models (default: {', '.join(LOCAL_MODELS)})"
    )
    args = parser.parse_args(argv)
    try:
        models = [local_model(name) for name in args.names] or list(LOCAL_MODELS.values())
        for model in models:
            path = model.path()
            sys.stdout.write(f"{model.name}: {path} ({model.size:,} bytes, verified)\n")
    except LocalModelError as error:
        sys.stderr.write(f"error: {error}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
