"""Do the report's numbers mean what they say? Planted-truth figures, one function per key.

- `false_distinct_rate`: on identical true rankings, the share of simulated studies whose rank
  verdict says "distinct", in the worst design of 10-20 conversations and 4-12 models
  (`analysis.studies.false_distinct_rate`, at least 1,000 studies per design); beside it,
  every design's rate and the rates the rule alone gives without its minimum of conversations.
- `coverage`: conversations -> the share of simulated studies whose 95% cluster-bootstrap
  interval holds a model's true mean score (`analysis.studies.coverage`), at 5, 10, 20 and
  50 conversations.

    .venv/bin/python benchmarks/validity.py [--only KEY ...] [--studies N] [--corners]

`--corners` runs only the designs at the ends of the ranges (10 and 20 conversations, 4 and
12 models). The last line printed is JSON.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

from attunebench.analysis.studies import Design, coverage, designs, false_distinct_rate


def false_distinct_key(args: argparse.Namespace) -> dict[str, Any]:
    sizes, models = ((10, 20), (4, 12)) if args.corners else ((10, 15, 20), (4, 8, 12))
    chosen: list[Design] = designs(sizes, models)
    found = false_distinct_rate(chosen, studies=args.studies, seed=args.seed)
    name, rate = found.worst
    return {
        "false_distinct_rate": rate,
        "false_distinct_worst_cell": name,
        "false_distinct_studies_per_cell": found.studies,
        "false_distinct_cells": found.rates,
        "false_distinct_without_minimum": found.without_minimum,
    }


def coverage_key(args: argparse.Namespace) -> dict[str, Any]:
    found = coverage(studies=max(args.studies, 1000), seed=args.seed)
    return {"coverage": {str(size): share for size, share in found.items()}}


KEYS: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {
    "false_distinct_rate": false_distinct_key,
    "coverage": coverage_key,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=sorted(KEYS), default=sorted(KEYS))
    parser.add_argument("--studies", type=int, default=1000, help="simulated studies per cell")
    parser.add_argument("--corners", action="store_true", help="the ends of the design ranges")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    figures: dict[str, Any] = {}
    for key in args.only:
        started = time.perf_counter()
        figures.update(KEYS[key](args))
        figures[f"{key}_seconds"] = round(time.perf_counter() - started, 1)
        print(f"{key}: done in {figures[f'{key}_seconds']} s", flush=True)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
