"""A planted set-up for judge panels: conversations whose replies name the models that wrote
them, `sim/oracle` subjects, and `sim/judge` judges with known biases.

Every conversation has four turns: two where the participant picked between two replies of a
human writer (the response task's references), and one for each subject model, whose reply
stands against a writer's. On a subject's turn the participant prefers the model's reply, the
writer's, or neither (a tie) with the chances its `sim/oracle` reply would win, lose or tie in
the response task (which writes the chosen reply with probability `quality`, else the
rejected): tie 1/2, model `quality`/2, writer (1 - `quality`)/2. So the participants' win rate
for the model on the audit pairs, and its true response win rate, are both
0.25 + `quality`/2, and a judge errs alike on both.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

QUALITY = {"acme-1": 0.3, "other-1": 0.8}
FAMILY = {"acme-1": "acme", "other-1": "other"}
FAVOUR_BY = 0.3
POSITION = 0.3
NEUTRAL_ACCURACY = 0.85
JUDGE_FAMILY = {"judge-neutral": "other", "judge-position": "none", "judge-self": "acme"}
JUDGES = {
    "judge-neutral": f"{{ seed = 11, accuracy = {NEUTRAL_ACCURACY} }}",
    "judge-position": f"{{ seed = 12, position = {POSITION} }}",
    "judge-self": f'{{ seed = 13, favour = ["acme-1"], favour_by = {FAVOUR_BY} }}',
}


def true_win_rate(model: str) -> float:
    return 0.25 + QUALITY[model] / 2


def _text(rng: np.random.Generator, stem: str) -> str:
    return f"{stem} " + " ".join("word" for _ in range(int(rng.integers(5, 40))))


def _turn(index: int, rng: np.random.Generator, model: str | None) -> dict[str, object]:
    author = model or "writer"
    responses = [
        {"id": "a", "model": author, "text": _text(rng, f"reply a{index}")},
        {"id": "b", "model": "writer", "text": _text(rng, f"reply b{index}")},
    ]
    if model is None:
        preference: dict[str, object] = {"chosen": "a" if rng.random() < 0.5 else "b"}
    else:
        u, quality = rng.random(), QUALITY[model]
        preference = {"tie": True} if u < 0.5 else {"chosen": "a" if u < 0.5 + quality / 2 else "b"}
    return {
        "index": index,
        "user": f"message {index}",
        "responses": responses,
        "preference": preference,
    }


def write_data(path: Path, conversations: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    lines = []
    for c in range(conversations):
        turns = [_turn(0, rng, None), _turn(1, rng, "acme-1"), _turn(2, rng, "other-1")]
        turns.append(_turn(3, rng, None))
        lines.append(
            json.dumps(
                {
                    "format": "attunebench/v1",
                    "id": f"c{c:03d}",
                    "source": {"kind": "simulated", "name": "panel-planted", "license": "CC0-1.0"},
                    "participant": {"id": f"p{c:03d}"},
                    "taxonomy": "attunebench-default",
                    "turns": turns,
                }
            )
        )
    path.write_text("\n".join(lines) + "\n")


def _quality(quality: float) -> str:
    """The oracle's chance of writing the chosen reply: the response task's `accuracy`."""
    return f"accuracy = {{ response = {quality} }}"


def write_models(path: Path) -> None:
    lines = []
    for name, quality in QUALITY.items():
        lines += [
            f"[models.{name}]",
            'spec = "sim/oracle"',
            f'family = "{FAMILY[name]}"',
            f"options = {{ seed = {len(lines)}, {_quality(quality)} }}",
            "",
        ]
    for name, options in JUDGES.items():
        family = [f'family = "{JUDGE_FAMILY[name]}"']
        lines += [f"[models.{name}]", 'spec = "sim/judge"', *family, f"options = {options}", ""]
    path.write_text("\n".join(lines))
