"""The ladder's results page from planted figures: the two slices side by side and each
claim's verdict, as `make ladder` writes them (the quick run has no pair to order)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[2]
BIG, SMALL = "qwen2.5-coder-1.5b-instruct", "qwen2.5-coder-0.5b-instruct"
PAIR = f"{BIG} - {SMALL}"


def ladder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ladder", REPO / "benchmarks" / "ladder.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def figure(value: float, low: float, high: float) -> dict[str, Any]:
    return {"value": value, "ci_low": low, "ci_high": high, "metric": "m", "statement": None}


def planted() -> dict[str, Any]:
    """Emotion's order above 0 on both slices; rating's below 0 on the first, covering 0 on
    the second; outcome asked on the first slice only; the 1.5B's emotion gap on both."""
    first_order = {
        "emotion": figure(0.236, 0.073, 0.317),
        "rating": figure(-0.213, -0.346, -0.049),
        "outcome": figure(-0.08, -0.2, 0.05),
    }
    second_order = {"emotion": figure(0.168, 0.058, 0.297), "rating": figure(0.02, -0.1, 0.2)}
    return {
        "models": [{"name": SMALL}, {"name": BIG}],
        "headline": {t: {BIG: figure(0.3, 0.2, 0.4)} for t in first_order},
        "differences": {t: {PAIR: f} for t, f in first_order.items()},
        "person_gap": {"emotion": {BIG: figure(0.1, 0.02, 0.2), SMALL: figure(0.0, -0.1, 0.1)}},
        "conversations_needed": {"emotion": {"note": "first-slice power sentence"}},
        "references": {},
        "server_busy_share": {},
        "second_slice": {
            "conversations": 20,
            "after": 30,
            "tasks": ["emotion", "preference", "rating"],
            "models": [SMALL, BIG],
            "person_hidden_twins": {BIG: ["emotion"]},
            "headline": {t: {BIG: figure(0.25, 0.1, 0.4)} for t in second_order},
            "differences": {t: {PAIR: f} for t, f in second_order.items()},
            "person_gap": {"emotion": {BIG: figure(0.03, -0.05, 0.1)}},
            "conversations_needed": {"emotion": {"note": "second-slice power sentence"}},
        },
    }


def test_each_claim_gets_its_verdict_on_the_page() -> None:
    module = ladder()
    figures = planted()
    figures["replication"] = module.replications(figures)
    order, gaps = figures["replication"]["order"], figures["replication"]["person_gap"]
    assert {t: v["holds"] for t, v in order.items()} == {
        "emotion": "both",
        "rating": "first",
        "outcome": "first slice only",
    }
    assert gaps["emotion"][BIG]["holds"] == "first"  # the second's interval covers 0
    assert gaps["emotion"][SMALL]["holds"] == "first slice only"  # no twins on the second
    lines = module._second_lines(figures) + module._held_lines(figures)
    power = module._detail_lines(figures)  # each slice's power sentence, one under the other
    found = power.index("- emotion: first-slice power sentence")
    assert power[found + 1] == "  - the second slice as the pilot: second-slice power sentence"
    assert "| emotion | — | — | 0.300 [0.200, 0.400] | 0.250 [0.100, 0.400] " in "\n".join(lines)
    closing = lines[lines.index("## Which claims held on both slices") + 2 :]
    assert closing[0] == f"- Holds on both slices: emotion, the order {PAIR}."
    assert closing[-1].startswith("- First slice only (not asked on the second), where it ")
    assert f"where it does not hold: outcome, the order {PAIR}; " in closing[-1]
