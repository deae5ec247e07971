"""Reading records written as `attunebench-record/v1`: each line upgraded to v2 as it is read.

v1 records held the prediction and gold as free-form dicts and kept some of a task's facts in
`meta` (an emotion item's gold level, a pair's lengths and order). v2 holds the task's typed
gold and prediction; the upgrade moves each fact where v2 keeps it, so an analysis reads a v1
run directory as it reads a v2 one.
"""

from __future__ import annotations

import json
from typing import Any

V1 = b'"attunebench-record/v1"'


def _pair_gold(gold: dict[str, Any], meta: dict[str, Any], turn_index: int) -> dict[str, Any]:
    first, second = str(meta.get("first", "")), str(meta.get("second", ""))

    def turn(key: str) -> int:
        """A reply key `TURN:ID` names its turn; a bare id is of the item's own turn."""
        where, colon, _ = key.rpartition(":")
        return int(where) if where.isdigit() else (0 if colon else turn_index)

    return {
        "level": "pair",
        "derived": bool(meta.get("derived", False)),
        "first": first,
        "second": second,
        "chosen": gold.get("chosen"),
        "tie": bool(gold.get("tie", False)),
        "strength": gold.get("strength"),
        "first_turn": turn(first),
        "second_turn": turn(second),
        "len_first": int(meta.get("len_a") or 0),
        "len_second": int(meta.get("len_b") or 0),
    }


def _upgrade(record: dict[str, Any]) -> dict[str, Any]:
    task, meta = record.get("task"), dict(record.get("meta") or {})
    found, guessed = record.get("gold"), record.get("prediction")
    gold: dict[str, Any] = found if isinstance(found, dict) else {}
    prediction: dict[str, Any] | None = guessed if isinstance(guessed, dict) else None
    if task == "emotion":
        gold = {**gold, "level": meta.pop("gold_level", "turn")}
        if prediction is not None:
            prediction = {
                **prediction,
                "asked": [n for n in ("intensity", "valence", "arousal") if n in gold],
            }
    elif task == "behavior":
        gold = {**gold, "level": "reply"}
    elif task in ("preference", "judge_audit"):
        gold = _pair_gold(gold, meta, int(record.get("turn_index", 0)))
    elif task == "response":
        gold = {**gold, "level": "turn"}
        prediction = prediction if prediction is not None and "reply" in prediction else None
    record.update(format="attunebench-record/v2", gold=gold or None, prediction=prediction)
    if meta.get("judge_unusable") and record.get("status") == "ok":
        record.update(status="invalid", score=0.0, error="no usable verdict from any judge")
    return record


def upgrade_line(line: bytes) -> bytes:
    """A records.jsonl line as v2 (v2 lines, and lines that are not JSON, pass unchanged)."""
    if V1 not in line:
        return line
    try:
        record = json.loads(line)
    except ValueError:
        return line
    if not isinstance(record, dict) or record.get("format") != "attunebench-record/v1":
        return line
    return json.dumps(_upgrade(record)).encode()
