"""The person gap against planted truth, through a real run: `attunebench run --person both`
with a simulated reader of the person's words, a simulated reader of the replies alone and
`baseline/random`, on synthetic conversations; then the analysis.

- A reader of the person answers at its planted accuracy where the prompt shows their words
  and at chance where they are hidden: its gap is its score above chance.
- A reader of the replies answers every item alike with the words shown or hidden: its gap is
  exactly 0, with an interval of [0, 0] (the pairing: an unpaired interval would be wide).
- Traps: items dropped from one twin (the reply reader's misses, on the hidden side only) must
  not move its gap; baselines added (one of them failing on some items) change nothing.
"""

from __future__ import annotations

import dataclasses
import zlib
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from attunebench.analysis import Options, build_summary, load_runs
from attunebench.analysis.loading import Runs
from attunebench.analysis.schema import PersonGap, Summary
from attunebench.cli import app
from attunebench.data.jsonl import write_conversations
from attunebench.data.schema import LABELLED_FIELDS, Conversation
from attunebench.report.render import render_html, render_markdown
from attunebench.tasks.helpers.twins import is_person_hidden
from planted import synthetic

TASKS = ("emotion", "preference", "rating")
ACCURACY = 0.9
# Preference's headline: each pair in both orders, 0.5 when the two picks disagree. The reader
# of the person, with nothing of theirs to read, picks a position in both orders: exactly 0.5.
PREFERENCE_CHANCE = 0.5
RANDOM = "baseline/random"


def models_file(path: Path) -> Path:
    table = ", ".join(f"{task} = {ACCURACY}" for task in TASKS)
    lines = [
        f'[models.{name}]\nspec = "sim/oracle"\noptions = {{ seed = {seed}, reads = "{name}", '
        f"accuracy = {{ {table} }} }}\n"
        for seed, name in enumerate(("person", "replies"), 1)
    ]
    path.write_text("\n".join(lines))
    return path


def realistic(conversation: Conversation) -> Conversation:
    """A synthetic conversation as an import gives it: its provenance names the format's
    fields, and no rating comes before the person's first message (a prompt showing nothing
    they said gives a reader of the person nothing to read in either twin)."""
    provenance = {name: "simulated" for name in LABELLED_FIELDS}
    first, *rest = conversation.turns
    return conversation.model_copy(
        update={
            "source": conversation.source.model_copy(update={"provenance": provenance}),
            "turns": (first.model_copy(update={"feedback": None}), *rest),
        }
    )


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run of the three models on 40 synthetic conversations, 4 items per task each."""
    root = tmp_path_factory.mktemp("person-gap")
    plan = synthetic.Plan(accuracy={}, conversations=40, items_per_conversation=4, seed=5)
    conversations = [realistic(c) for c in synthetic.conversations(plan)]
    write_conversations(root / "data.jsonl", conversations)
    out = root / "run"
    arguments = ["run", "--data", str(root / "data.jsonl"), "--person", "both", "--out", str(out)]
    arguments += ["--models-file", str(models_file(root / "models.toml")), "--no-cache"]
    arguments += ["--no-progress", "--model", "person", "--model", "replies", "--model", RANDOM]
    arguments += [f"--task={task}" for task in TASKS]
    result = CliRunner().invoke(app, arguments)
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def runs(run_dir: Path) -> Runs:
    return load_runs([run_dir])


@pytest.fixture(scope="module")
def summary(runs: Runs) -> Summary:
    return build_summary(runs, Options(resamples=1000))


def headline(summary: Summary, task: str, model: str, variant: str) -> float | None:
    metric = summary.person_gap[task][model].metric
    (row,) = (
        r
        for r in summary.scores
        if (r.task, r.model, r.variant, r.metric) == (task, model, variant, metric)
    )
    return row.value


def covers(gap: PersonGap, value: float) -> bool:
    assert gap.ci_low is not None and gap.ci_high is not None
    return gap.ci_low <= value <= gap.ci_high


def test_a_reader_of_the_person_has_a_gap_equal_to_its_score_above_chance(
    summary: Summary,
) -> None:
    gaps = {task: summary.person_gap[task]["person"] for task in TASKS}
    for task, gap in gaps.items():
        assert gap.value is not None and gap.ci_low is not None and gap.ci_low > 0, gap
        assert gap.statement is not None and gap.statement.startswith(
            f"person reads the person on {task}:"
        )
        # The headline itself on both sides (macro-F1, a correlation), not the mean score: the
        # same numbers as the score rows of the shown items and of their twins.
        assert gap.shown == headline(summary, task, "person", "blind")
        assert gap.hidden == headline(summary, task, "person", "blind+person-hidden")
        assert gap.value == pytest.approx(gap.shown - gap.hidden)  # type: ignore[operator]
        assert gap.n == (120 if task == "rating" else 160) and gap.n_conversations == 40
    # Preference: right 90% of the time against exactly chance with the words hidden.
    preference = gaps["preference"]
    assert preference.hidden == PREFERENCE_CHANCE and preference.shown is not None
    assert preference.value == pytest.approx(preference.shown - PREFERENCE_CHANCE)
    # ... and the planted 0.9 - 0.5 within about four standard errors (160 items: 0.024).
    assert abs(preference.value - (ACCURACY - PREFERENCE_CHANCE)) < 0.1
    # Rating: a correlation, 0 at chance; the whole shown score is its score above chance.
    rating = gaps["rating"]
    assert rating.shown is not None and covers(rating, rating.shown)
    # Emotion: macro-F1 at chance is not 0; random answers shown estimate it.
    random_emotion = headline(summary, "emotion", RANDOM, "blind")
    emotion = gaps["emotion"]
    assert random_emotion is not None and emotion.shown is not None
    assert abs(emotion.value - (emotion.shown - random_emotion)) < 0.05  # type: ignore[operator]


def test_a_reader_of_the_replies_has_a_gap_of_zero(summary: Summary) -> None:
    for task in TASKS:
        gap = summary.person_gap[task]["replies"]
        assert (gap.value, gap.ci_low, gap.ci_high) == (0.0, 0.0, 0.0), gap
        assert gap.shown is not None and gap.shown > 0.3  # it reads something: the gold
        assert gap.statement is not None
        assert gap.statement.startswith(f"no evidence that replies reads the person on {task}")
    # Random answers to twins are drawn afresh: a gap with an interval around 0.
    for task in TASKS:
        assert covers(summary.person_gap[task][RANDOM], 0.0)


def test_a_twin_never_heads_a_task_nor_joins_the_rank_statistics(summary: Summary) -> None:
    assert {info.headline_variant for info in summary.tasks} == {"blind"}
    assert all(not r.headline for r in summary.scores if is_person_hidden(r.variant))
    assert set(summary.rank_correlation.tasks) <= set(TASKS)
    assert not any(is_person_hidden(d.variant) for d in summary.discriminability.tasks)
    assert not any(is_person_hidden(lead.variant) for lead in summary.leads)
    assert not any(
        r.model_kind == "reference" and is_person_hidden(r.variant) for r in summary.scores
    )


def answered(runs: Runs, keep: Any) -> Runs:
    return dataclasses.replace(runs, records=tuple(r for r in runs.records if keep(r)))


def test_items_dropped_from_one_twin_do_not_bias_the_gap(runs: Runs) -> None:
    """The reply reader's misses, lost on the hidden side only, would raise its hidden score
    and fake a negative gap if the two sides were scored on their own items."""

    def kept(record: Any) -> bool:
        missed = record.model == "replies" and record.score == 0.0
        return record.task == "preference" and not (missed and is_person_hidden(record.variant))

    preference = answered(runs, lambda r: r.task == "preference")
    trapped = answered(runs, kept)
    options = Options(resamples=500, include_simulated=True)
    whole, dropped = build_summary(preference, options), build_summary(trapped, options)
    before, after = (
        whole.person_gap["preference"]["replies"],
        dropped.person_gap["preference"]["replies"],
    )
    assert (after.value, after.ci_low, after.ci_high) == (0.0, 0.0, 0.0)
    assert after.n < before.n
    rows = {
        r.variant: r.value
        for r in dropped.scores
        if r.model == "replies" and r.metric == after.metric and r.task == "preference"
    }
    shown, hidden = rows["blind"], rows["blind+person-hidden"]
    assert shown is not None and hidden is not None and hidden - shown > 0.05  # the trap bites


def test_baselines_added_change_nothing(runs: Runs) -> None:
    without = answered(runs, lambda r: r.model != RANDOM)

    def failing(record: Any) -> Any:
        if record.model == RANDOM and zlib.crc32(repr(record.key).encode()) % 3 == 0:
            return record.model_copy(update={"status": "failed", "score": None, "scores": {}})
        return record

    with_failures = dataclasses.replace(runs, records=tuple(map(failing, runs.records)))
    for options, added in (
        (Options(resamples=300), runs),
        (Options(resamples=300, include_simulated=True), with_failures),
    ):
        alone, beside = build_summary(without, options), build_summary(added, options)
        for task in TASKS:
            for model in ("person", "replies"):
                assert alone.person_gap[task][model] == beside.person_gap[task][model]
        assert set(beside.person_gap["preference"]) == {"person", "replies", RANDOM}


def test_the_report_shows_the_gap_beside_the_headline_and_in_words(summary: Summary) -> None:
    gap = summary.person_gap["preference"]["person"]
    assert gap.statement is not None
    for page in (render_markdown(summary), render_html(summary)):
        assert "person gap" in page
        assert f"{gap.value:.3f}" in page
        assert gap.statement in page
        assert "no evidence that replies reads the person on preference" in page


def test_twins_alone_have_no_headline_and_say_so(runs: Runs) -> None:
    alone = answered(runs, lambda r: is_person_hidden(r.variant) and r.task == "preference")
    found = build_summary(alone, Options(resamples=200))
    assert found.tasks == [] and found.person_gap == {}
    assert [w.kind for w in found.warnings if w.task == "preference"] == ["person_hidden_only"]
    assert {r.variant for r in found.scores} == {"blind+person-hidden"}
    assert not any(r.headline for r in found.scores)
