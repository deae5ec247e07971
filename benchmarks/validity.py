"""Whether the report's numbers mean what they say: planted-truth figures, one function per key.

Usage: python benchmarks/validity.py [--studies 1000] [--corners] [--seed 0]

One function per key of the JSON line printed last (`KEYS`); each takes the shared `state`:

- `false_distinct_rate`: on identical true rankings, the share of simulated studies whose rank
  verdict says "distinct" in the worst design of 10-20 conversations and 4-12 models
  (`analysis.studies.false_distinct_rate`, `--studies` per design, 1,000 by default; about
  0.2 s a study); `false_distinct_cells` gives every design's rate, and the rates the rule
  alone gives without its minimum of conversations;
- `coverage`: conversations -> the share of simulated studies whose 95% cluster-bootstrap
  interval holds a model's true mean score (`analysis.studies.coverage`), at 5, 10, 20 and 50
  conversations (at least 1,000 studies each).

`--corners` runs only the designs at the ends of the ranges (10 and 20 conversations, 4 and
12 models).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from attunebench.analysis import studies


def _false_distinct(state: dict[str, Any]) -> studies.FalseDistinct:
    """The simulated studies, run once and kept in `state` for both keys that read them."""
    if "false_distinct" not in state:
        sizes, models = ((10, 20), (4, 12)) if state["corners"] else ((10, 15, 20), (4, 8, 12))
        state["false_distinct"] = studies.false_distinct_rate(
            studies.designs(sizes, models), studies=state["studies"], seed=state["seed"]
        )
    found: studies.FalseDistinct = state["false_distinct"]
    return found


def false_distinct_rate(state: dict[str, Any]) -> float:
    return _false_distinct(state).worst[1]


def false_distinct_cells(state: dict[str, Any]) -> dict[str, Any]:
    found = _false_distinct(state)
    return {
        "worst": found.worst[0],
        "studies_per_design": found.studies,
        "rates": found.rates,
        "without_minimum": found.without_minimum,
    }


def coverage(state: dict[str, Any]) -> dict[str, float]:
    found = studies.coverage(studies=max(state["studies"], 1000), seed=state["seed"])
    return {str(size): share for size, share in found.items()}


KEYS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "false_distinct_rate": false_distinct_rate,
    "false_distinct_cells": false_distinct_cells,
    "coverage": coverage,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--studies", type=int, default=1000, help="simulated studies per design")
    parser.add_argument("--corners", action="store_true", help="the ends of the design ranges")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    state: dict[str, Any] = {"studies": args.studies, "corners": args.corners, "seed": args.seed}
    result = {key: measure(state) for key, measure in KEYS.items()}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
