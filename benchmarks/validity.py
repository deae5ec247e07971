"""Whether the report's numbers mean what they say: what trivial strategies score on the
headlines of real corpora, and planted-truth figures of the statistics. One function per key.

Usage: python benchmarks/validity.py [--keys K1,K2] [--data-dir DIR] [--work DIR] [--knn/--no-knn]
       [--lexicon/--no-lexicon] [--studies 1000] [--corners] [--shuffles 200] [--seed 0] [--quick]

One function per key of the JSON line printed last (`KEYS`); each takes the shared `state`.
`--keys` computes only those named.

Headlines (on the shared corpora, imported with the project's own importers: ESConv's HF
splits, MultiESC, FailedESConv, USS; `--data-dir`, default $ATTUNEBENCH_DATA_DIR or
../shared/data). Each task's items are built as a run builds them and each task's declared
references (constant, position-only, length-only, the pair cues) scored with the task's own
metrics, fitted as the report fits them (cross-fitted by conversation, read within folds).
With `--knn` (the default) `baseline/knn`, fitted on MultiESC's valid split, runs on MultiESC
test through `attunebench run` and `attunebench report`, its headline read with its interval.

- `headline_metrics`: task -> the name of its headline metric;
- `trivial_headlines`: task -> reference (and knn) -> corpus -> headline value;
- `preference_best_position_cue`: corpus -> the best position cue's accuracy (and its name);
- `preference_content_cues`: corpus -> cue -> accuracy (sentiment and emotion words from the
  lexicon baseline's VADER and NRC, beside the task's own content references);
- `references_on_shuffled_gold`: task -> reference -> its mean headline over `--shuffles`
  shuffles of the gold across conversations on MultiESC test (`planted.shuffled_gold`), where
  nothing a reference reads predicts the answer; `references_shuffled_chance` gives each
  one's chance level there (the same fits scored against an independent shuffle), and
  `references_in_sample_on_shuffled_gold` the headline of each fitted reference fitted on the
  very items it guesses, as references were fitted before (the trap: length-only's is above
  chance).

Statistics (simulated studies):

- `false_distinct_rate`: on identical true rankings, the share of simulated studies whose rank
  verdict says "distinct" in the worst design of 10-20 conversations and 4-12 models
  (`planted.studies.false_distinct_rate`, `--studies` per design, 1,000 by default; about
  0.2 s a study); `false_distinct_cells` gives every design's rate, and the rates the rule
  alone gives without its minimum of conversations;
- `coverage`: conversations -> the share of simulated studies whose 95% cluster-bootstrap
  interval holds a model's true mean score (`planted.studies.coverage`), at 5, 10, 20 and 50
  conversations (at least 1,000 studies each);
- `power_calibration`: task (`emotion`, `rating`) -> for a planted pair of models whose
  headlines differ by about +0.14 (`planted.power_studies`): `planted_difference`;
  `true_n80`, the conversations at which the report's own test of their difference reaches
  80% power (`true_power` at each size, from `--studies` studies per size, at least 200);
  `range_coverage`, the share of 40 pilots of 30 conversations whose range from
  `attunebench power` holds `true_n80`; `median_named_n`, the median central figure among
  the pilots that name one; `named_share`, the share that name one;
- `self_consistency_recovery`: planted retest noise (0.1, 0.2, 0.3) -> {`planted`, `measured`},
  each task -> the people's own consistency on its headline, planted and as the analysis
  measures it (`summary.json`'s `self_consistency`) from 2,000 probes per task
  (`planted.retest_study`: 400 conversations of 5 turns, each turn's emotion check and pick
  asked again); a few seconds a noise level;
- `coverage_macro_f1`: design (`emotion_1`, `emotion_turns`, `behavior`, `two_parts`: pooled
  from two corpus parts, read within each) -> conversations
  (10, 20, 50) -> the share of studies whose macro-F1 interval holds the truth (the
  population's per-label F1 over the labels of the study's gold) and the estimate's mean error
  (`planted.f1_studies`, `--studies` per cell); `coverage_macro_f1_every_label` gives the same
  against the mean over every label of the population, which no study sees whole;
- `ppi_scenarios`: scenario (`same`, `audited_better`, `audited_slightly_better`,
  `verbosity_bias`, `small_audit`) -> the share of studies given a corrected score (the audit
  large enough to bound the shift between the audited and judged replies), the coverage of the
  people's true win rate over those studies, and their median widening (`planted.ppi_studies`).

Corpus parts (on `open-v1`, built from the shared corpora as `attunebench run --suite open-v1`
builds it, its references fitted on the suite's train split; a missing corpus skips the script):

- `corpus_part_references`: task (rating, outcome, emotion) -> `reference/constant`, the
  `corpus-part rule` (each conversation's part's train mean rating, mean per field, majority
  label) and, for outcome, the `field-set rule` (the train mean per part and set of fields an
  item asks) -> corpus -> its headline, read within the corpus parts; each rule also on the
  view across parts (`..., parts pooled`), where knowing the corpus still scores. Outcome's
  corpora include `planted-survey` (`planted.planted_parts.survey_corpus`: a second survey
  question about half of the people skipped, those who answered rating 2.50 on average, the
  others 2.17; its first half the train split).

`--corners` runs only the designs at the ends of the ranges (10 and 20 conversations, 4 and
12 models). `--quick` runs every key on a tiny input: 10 studies per design (3 for the rank
verdict's, at the corners), 200 resamples, 3 shuffles of the gold, a smaller "very large"
draw, the first 30 conversations of each corpus and no knn run; the JSON line is
printed last as always.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Hashable, Mapping
from pathlib import Path
from typing import Any

from attunebench.analysis.bootstrap import DEFAULT_RESAMPLES
from attunebench.analysis.comparisons.power import Settings
from attunebench.analysis.summary import Options, build_summary
from attunebench.data.jsonl import read_conversations
from attunebench.data.schema import Conversation
from attunebench.suite.build import SuiteData, load_suite
from attunebench.suite.manifest import SuiteError
from attunebench.tasks import emotion, load_tasks, make_tasks, outcome, rating
from attunebench.tasks.base import Guess, Item, Task, View
from attunebench.tasks.helpers import pair_cues as cues
from attunebench.tasks.helpers.fitting import Fitted, out_of_sample
from attunebench.tasks.helpers.grouping import Grouped
from attunebench.tasks.preference import picks
from planted import (
    f1_studies,
    planted_parts,
    power_studies,
    ppi_studies,
    retest_study,
    shuffled_gold,
    studies,
)
from testkit import prerequisites

CORPORA = {
    "multiesc-test": ("esconv", ["--variant", "multiesc", "--split", "test"]),
    "multiesc-valid": ("esconv", ["--variant", "multiesc", "--split", "valid"]),
    "esconv-test": ("esconv", ["--variant", "hf", "--split", "test"]),
    "esconv-valid": ("esconv", ["--variant", "hf", "--split", "valid"]),
    "failed-esconv": ("esconv", ["--variant", "failed"]),
    "uss": ("uss", []),
}
# Per task: MultiESC test and one more corpus that has its gold.
HEADLINE_CORPORA = {
    "rating": ("multiesc-test", "failed-esconv"),
    "outcome": ("multiesc-test", "failed-esconv"),
    "emotion": ("multiesc-test", "esconv-valid"),
    "behavior": ("multiesc-test", "esconv-valid"),
    "preference": ("multiesc-test", "uss"),
}
PREFERENCE_CORPORA = ("esconv-valid", "esconv-test", "multiesc-valid", "multiesc-test")
POSITION = (
    "reference/later-reply",
    "reference/earlier-reply",
    "reference/distance",
    "reference/visible-position-classifier",
)


def cli(*args: str) -> None:
    command = [sys.executable, "-c", "from attunebench.cli import main; main()", *args]
    subprocess.run(command, check=True, capture_output=True, text=True)


def corpora(data_dir: Path, work: Path, first: int | None = None) -> dict[str, list[Conversation]]:
    """Each corpus imported with the project's importer (kept in `work`); its `first`
    conversations only, where given."""
    out = {}
    for name, (source, options) in CORPORA.items():
        path = work / f"{name}.jsonl"
        if not path.exists():
            cli("data", "import", source, str(data_dir / source), *options, "--out", str(path))
        out[name] = read_conversations(path)[:first]
    return out


def task_items(task: Task[Any, Any], conversations: list[Conversation]) -> list[Item[Any]]:
    """The task's items on its headline variant (blind, or its only one)."""
    return [i for i in task.items(conversations) if i.variant in ("", "blind")]


def item_views(items: list[Item[Any]]) -> list[View[Any, Any]]:
    """Each item as a view with no prediction, which references read the gold of."""
    return shuffled_gold.item_views(items)


def reference_values(
    task: Task[Any, Any], views: list[View[Any, Any]], metric: str | None = None
) -> dict[str, float | None]:
    """Each declared reference's value of a metric (default: the headline) on these items,
    fitted as the report fits it (cross-fitted by conversation, read within the folds)."""
    wanted = task.scoring.metric(metric)
    golds = [v.gold for v in views]
    ids = [v.record.conversation_id for v in views]
    out = {}
    for name, reference in task.scoring.references().items():
        fitted = out_of_sample(reference, golds, ids)
        value = shuffled_gold.headline(wanted, views, golds, fitted)
        out[name] = None if value is None else round(value, 4)
    return out


def knn_headlines(work: Path, tasks: list[str]) -> dict[str, dict[str, Any]]:
    """baseline/knn (fitted on MultiESC valid) on MultiESC test: headline with its interval."""
    run, report = work / "run-knn", work / "report-knn"
    model = f"baseline/knn?train={work / 'multiesc-valid.jsonl'}"
    data = str(work / "multiesc-test.jsonl")
    options = [a for t in tasks for a in ("--task", t)]
    cli("run", "--data", data, "--model", model, *options, "--out", str(run))
    cli("report", str(run), "--out", str(report), "--data", data)
    summary = json.loads((report / "summary.json").read_text())
    return {
        row["task"]: {"value": row["value"], "ci": [row["ci_low"], row["ci_high"]]}
        for row in summary["scores"]
        if row["headline"] and row["model"].startswith("baseline/knn")
    }


def trivial_headlines(state: dict[str, Any]) -> dict[str, Any]:
    """task -> reference -> corpus -> the headline's value (knn: value and interval)."""
    tasks, data = state["tasks"], state["corpora"]
    out: dict[str, Any] = {}
    for task_name, names in HEADLINE_CORPORA.items():
        task = tasks[task_name]
        found: dict[str, dict[str, Any]] = {}
        for corpus in names:
            views = item_views(task_items(task, data[corpus]))
            for reference, value in reference_values(task, views).items():
                found.setdefault(reference, {})[corpus] = value
        out[task_name] = found
    for task_name, knn in state.get("knn", {}).items():
        if task_name in out:
            out[task_name]["baseline/knn"] = {"multiesc-test": knn}
    return out


def headline_metrics(state: dict[str, Any]) -> dict[str, str]:
    return {name: state["tasks"][name].scoring.headline_metric for name in HEADLINE_CORPORA}


def preference_items(state: dict[str, Any]) -> dict[str, list[Item[Any]]]:
    """The preference items of each corpus, and of ESConv and MultiESC pooled."""
    if "preference_items" not in state:
        task, data = state["tasks"]["preference"], state["corpora"]
        found = {name: task_items(task, data[name]) for name in CORPORA}
        found["esconv+multiesc"] = [i for n in PREFERENCE_CORPORA for i in found[n]]
        state["preference_items"] = found
    items: dict[str, list[Item[Any]]] = state["preference_items"]
    return items


def preference_best_position_cue(state: dict[str, Any]) -> dict[str, Any]:
    """Per corpus, the best position cue (the task's references) and every cue's accuracy;
    beside them, a classifier of both replies' positions: what a prompt quoting the earlier
    reply inside the transcript would show (the alternative to cutting it there)."""
    task = state["tasks"]["preference"]
    out = {}
    for corpus, items in preference_items(state).items():
        views = item_views(items)
        values = reference_values(task, views)
        best = max(POSITION, key=lambda name: values.get(name) or 0.0)
        golds, ids = [v.gold for v in views], [v.record.conversation_id for v in views]
        both = out_of_sample(picks(cues.both_positions_classifier), golds, ids)
        scores = [guess[1].score for guess in both.guesses if guess is not None]
        out[corpus] = {
            "cue": best,
            "accuracy": values[best],
            "pairs": len(views),
            "cues": {name: values[name] for name in POSITION},
            "both_positions_classifier": round(sum(scores) / len(scores), 4) if scores else None,
        }
    return out


def lexicon_cues(task: Task[Any, Any], items: list[Item[Any]]) -> dict[str, float | None]:
    """Sentiment (VADER compound) and emotion words (NRC hits): the reply with more."""
    from attunebench.models.baselines.lexicon import compound, nrc_counts
    from attunebench.tasks.preference import pair_of

    measures: dict[str, Callable[[str], float]] = {
        "reference/more-positive": compound,
        "reference/more-emotion-words": lambda text: float(sum(nrc_counts(text).values())),
    }
    hits: dict[str, list[float]] = {name: [] for name in measures}
    for item in items:
        pair, gold = pair_of(item, task.pairs), item.gold  # type: ignore[attr-defined]
        for name, measure in measures.items():
            a, b = measure(pair.first.text), measure(pair.second.text)
            if a == b:  # no preference: half right, as the task's content references score it
                hits[name].append(0.0 if gold.tie else 0.5)
                continue
            hits[name].append(float((gold.first if a > b else gold.second) == gold.key))
    return {k: round(sum(v) / len(v), 4) if v else None for k, v in hits.items()}


def preference_content_cues(state: dict[str, Any]) -> dict[str, Any]:
    task = state["tasks"]["preference"]
    out = {}
    for corpus, items in preference_items(state).items():
        values = reference_values(task, item_views(items))
        found = {k: v for k, v in values.items() if k not in POSITION}
        if state["lexicon"]:
            found.update(lexicon_cues(task, items))
        out[corpus] = found
    return out


def _false_distinct(state: dict[str, Any]) -> studies.FalseDistinct:
    """The simulated studies, run once and kept in `state` for both keys that read them."""
    if "false_distinct" not in state:
        sizes, models = ((10, 20), (4, 12)) if state["corners"] else ((10, 15, 20), (4, 8, 12))
        state["false_distinct"] = studies.false_distinct_rate(
            studies.designs(sizes, models),
            studies=QUICK_RANK_STUDIES if state["quick"] else state["studies"],
            resamples=state["resamples"],
            seed=state["seed"],
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
    least = state["studies"] if state["quick"] else max(state["studies"], 1000)
    found = studies.coverage(studies=least, resamples=state["resamples"], seed=state["seed"])
    return {str(size): share for size, share in found.items()}


def self_consistency_recovery(state: dict[str, Any]) -> dict[str, Any]:
    """Per planted noise, each task's planted ceiling and the one the analysis measures."""
    registry = load_tasks()
    tasks = [registry.get(name)() for name in RETEST_CEILINGS]
    options = Options(resamples=200, permutations=100, subgroup_permutations=100)
    out = {}
    for noise in (0.1, 0.2, 0.3):
        conversations = QUICK_RETEST_CONVERSATIONS if state["quick"] else 400
        plan = retest_study.Plan(
            conversations=conversations, turns=5, noise=noise, seed=state["seed"]
        )
        runs = retest_study.runs(plan, tasks, {"model/like-people": noise})
        found = build_summary(runs, options).self_consistency
        out[str(noise)] = {
            "planted": {task: planted(noise) for task, planted in RETEST_CEILINGS.items()},
            "measured": {task: found[task].value for task in RETEST_CEILINGS},
        }
    return out


# Per task whose items are asked again: its headline's planted ceiling at a noise.
RETEST_CEILINGS: dict[str, Callable[[float], float]] = {
    "emotion": lambda noise: retest_study.macro_f1(retest_study.SHARES, noise),
    "preference": retest_study.agreement,
}


def _macro_f1(state: dict[str, Any]) -> dict[str, dict[int, f1_studies.Cell]]:
    """The macro-F1 studies, run once and kept in `state` for both keys that read them."""
    if "macro_f1" not in state:
        state["macro_f1"] = f1_studies.coverage(
            studies=state["studies"],
            resamples=state["resamples"],
            seed=state["seed"],
            truth_conversations=QUICK_TRUTH if state["quick"] else None,
        )
    found: dict[str, dict[int, f1_studies.Cell]] = state["macro_f1"]
    return found


# The designs by the names the key gives them (the multi-label one is the behavior task's).
MACRO_F1_DESIGNS = {
    "emotion_1": "emotion_1",
    "emotion_turns": "emotion_turns",
    "multi_label": "behavior",
    "two_parts": "two_parts",
}


def coverage_macro_f1(state: dict[str, Any]) -> dict[str, Any]:
    return {
        MACRO_F1_DESIGNS[design]: {
            str(n): {"coverage": c.coverage, "bias": round(c.bias, 4)} for n, c in by.items()
        }
        for design, by in _macro_f1(state).items()
    }


def coverage_macro_f1_every_label(state: dict[str, Any]) -> dict[str, Any]:
    return {
        MACRO_F1_DESIGNS[design]: {
            str(n): {"coverage": c.every_label_coverage, "bias": round(c.every_label_bias, 4)}
            for n, c in by.items()
        }
        for design, by in _macro_f1(state).items()
    }


def ppi_scenarios(state: dict[str, Any]) -> dict[str, Any]:
    found = ppi_studies.scenarios(
        studies=state["studies"], resamples=state["resamples"], seed=state["seed"]
    )
    return {
        name: {
            "corrected_share": share.corrected_share,
            "coverage": share.coverage,
            "widened_by": share.widened_by,
        }
        for name, share in found.items()
    }


# power_calibration: 40 pilots (a median over few is noisy: a central figure goes as 1 / d^2,
# and d's standard error at 30 conversations is about d), at least 200 studies per size (3
# pilots and 10 studies with --quick).
POWER_PILOTS, POWER_STUDIES = 40, 200
QUICK_POWER = power_studies.Design(
    studies=10,
    pilots=3,
    settings=Settings(sizes=(10, 50, 200, 1000), simulations=50, resamples=50),
    population=300,
    sizes=(50, 200),
)


def power_calibration(state: dict[str, Any]) -> dict[str, Any]:
    """Per task, the planted pair's true conversations for 80% power and what pilots state."""
    design = (
        QUICK_POWER
        if state["quick"]
        else power_studies.Design(studies=max(state["studies"], POWER_STUDIES), pilots=POWER_PILOTS)
    )
    found = power_studies.calibration(design, seed=state["seed"])
    return {
        task: {
            "planted_difference": round(c.truth.difference, 4),
            "true_n80": None if c.truth.n80 is None else round(c.truth.n80),
            "true_power": {str(n): p for n, p in c.truth.power.items()},
            "studies_per_size": design.studies,
            "range_coverage": None if c.range_coverage is None else round(c.range_coverage, 3),
            "median_named_n": c.median_named_n,
            "named_share": round(c.named_share, 3),
            "pilots": c.pilots,
            "pilot_conversations": power_studies.PILOT,
        }
        for task, c in found.items()
    }


def _shuffled(state: dict[str, Any]) -> dict[str, dict[str, shuffled_gold.ShuffledReference]]:
    """The shuffled-gold study of every headline task on MultiESC test, run once."""
    if "shuffled" not in state:
        conversations = state["corpora"]["multiesc-test"]
        state["shuffled"] = {
            name: shuffled_gold.references_on_shuffled_gold(
                task, task_items(task, conversations), state["shuffles"], state["seed"]
            )
            for name, task in state["tasks"].items()
        }
    found: dict[str, dict[str, shuffled_gold.ShuffledReference]] = state["shuffled"]
    return found


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def references_on_shuffled_gold(state: dict[str, Any]) -> dict[str, dict[str, float | None]]:
    return {
        task: {name: _rounded(r.mean) for name, r in found.items()}
        for task, found in _shuffled(state).items()
    }


def references_shuffled_chance(state: dict[str, Any]) -> dict[str, dict[str, float | None]]:
    return {
        task: {name: _rounded(r.chance) for name, r in found.items()}
        for task, found in _shuffled(state).items()
    }


def references_in_sample_on_shuffled_gold(
    state: dict[str, Any],
) -> dict[str, dict[str, float | None]]:
    return {
        task: {name: _rounded(r.in_sample) for name, r in found.items() if r.in_sample is not None}
        for task, found in _shuffled(state).items()
    }


# Corpus parts ----------------------------------------------------------------------------
# `corpus_part_references`: what knowing only which corpus part a conversation comes from (and,
# for outcome, which fields an item asks) scores on the headlines, beside `reference/constant`.

SUITE = "open-v1"
PART_RULE, FIELD_SET_RULE = "corpus-part rule", "field-set rule"
# Per task, the task's own group answer (its mean rating, mean per field, majority label) and
# how an item is guessed from it: what each rule learns per group of the suite's train items.
PART_GROUPS: dict[str, Grouped[Any]] = {
    "rating": Grouped(rating.usual_ratings, rating.rating_guess),
    "outcome": Grouped(outcome.usual_values, outcome.values_guess),
    "emotion": Grouped(emotion.usual_label, emotion.label_guess),
}
GroupKey = Callable[[Item[Any]], Hashable]


def _part(item: Item[Any]) -> Hashable:
    return item.conversation.source.name


def _part_and_fields(item: Item[Any]) -> Hashable:
    return _part(item), tuple(sorted(item.gold.scales))


def group_rule(
    grouped: Grouped[Any], key: GroupKey, train: list[Item[Any]], items: list[Item[Any]]
) -> list[Guess]:
    """Each item guessed as the usual answer of the train items of its group (`key`: its
    corpus part, or part and fields asked); no guess where no train item shares its group."""
    members: dict[Hashable, list[Any]] = {}
    for item in train:
        members.setdefault(key(item), []).append(item.gold)
    usual = {k: grouped.usual(golds, False) for k, golds in members.items()}
    return [
        grouped.guess(usual[key(item)], item.gold) if key(item) in usual else None for item in items
    ]


def _headline(
    task: Task[Any, Any], items: list[Item[Any]], guesses: list[Guess], metric: str | None = None
) -> float | None:
    """The headline (or `metric`) of these guesses at the items, read as the report reads it."""
    wanted = task.scoring.metric(metric)
    golds = [item.gold for item in items]
    value = shuffled_gold.headline(wanted, item_views(items), golds, Fitted(guesses, "train"))
    return _rounded(value)


def part_references(
    task: Task[Any, Any],
    train: list[Item[Any]],
    items: list[Item[Any]],
    rules: Mapping[str, GroupKey],
) -> dict[str, float | None]:
    """`reference/constant` fitted on the train items, and each rule, on the headline; each
    rule also on the view across parts, where the task has one."""
    constant = task.scoring.references()["reference/constant"]
    golds = [item.gold for item in items]
    fitted = out_of_sample(
        constant, golds, [i.conversation.id for i in items], [i.gold for i in train]
    )
    out = {"reference/constant": _headline(task, items, fitted.guesses)}
    pooled = f"pooled_{task.scoring.headline_metric}"
    has_view = any(metric.name == pooled for metric in task.scoring.metrics)
    for name, key in rules.items():
        guesses = group_rule(PART_GROUPS[task.name], key, train, items)
        out[name] = _headline(task, items, guesses)
        if has_view:
            out[f"{name}, parts pooled"] = _headline(task, items, guesses, pooled)
    return out


def _suite_tasks(state: dict[str, Any]) -> tuple[dict[str, Task[Any, Any]], SuiteData]:
    """The suite's tasks as its manifest makes them, and its data, from the shared corpora."""
    root = prerequisites.shared_data(state["data_dir"])
    try:
        suite = load_suite(SUITE, root)
    except SuiteError as error:
        prerequisites.missing(str(error), prerequisites.MISSING_DATA)
    manifest = suite.manifest
    made = make_tasks(list(manifest.tasks), manifest.tasks, manifest.seed)
    return {task.name: task for task in made}, suite


def corpus_part_references(state: dict[str, Any]) -> dict[str, Any]:
    """task -> reference or rule -> corpus -> headline: on open-v1 (fitted on its train
    split), and for outcome also on a planted corpus whose second survey question some
    people skipped (`planted.planted_parts.survey_corpus`, half of it the train split)."""
    tasks, suite = _suite_tasks(state)
    out: dict[str, Any] = {}
    for name in PART_GROUPS:
        task = tasks[name]
        rules = {PART_RULE: _part}
        if name == "outcome":
            rules[FIELD_SET_RULE] = _part_and_fields
        found = part_references(
            task, task_items(task, suite.train), task_items(task, suite.evaluated), rules
        )
        out[name] = {key: {SUITE: value} for key, value in found.items()}
    planted, _ = planted_parts.survey_corpus(seed=state["seed"])
    half = len(planted) // 2
    task = tasks["outcome"]
    found = part_references(
        task,
        task_items(task, planted[:half]),
        task_items(task, planted[half:]),
        {PART_RULE: _part, FIELD_SET_RULE: _part_and_fields},
    )
    for key, value in found.items():
        out["outcome"][key][planted_parts.SURVEY_PART] = value
    return out


HEADLINE_KEYS = (
    "headline_metrics",
    "trivial_headlines",
    "preference_best_position_cue",
    "preference_content_cues",
    "references_on_shuffled_gold",
    "references_shuffled_chance",
    "references_in_sample_on_shuffled_gold",
)
KEYS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "headline_metrics": headline_metrics,
    "trivial_headlines": trivial_headlines,
    "preference_best_position_cue": preference_best_position_cue,
    "preference_content_cues": preference_content_cues,
    "references_on_shuffled_gold": references_on_shuffled_gold,
    "references_shuffled_chance": references_shuffled_chance,
    "references_in_sample_on_shuffled_gold": references_in_sample_on_shuffled_gold,
    "false_distinct_rate": false_distinct_rate,
    "false_distinct_cells": false_distinct_cells,
    "coverage": coverage,
    "self_consistency_recovery": self_consistency_recovery,
    "coverage_macro_f1": coverage_macro_f1,
    "coverage_macro_f1_every_label": coverage_macro_f1_every_label,
    "ppi_scenarios": ppi_scenarios,
    "power_calibration": power_calibration,
    "corpus_part_references": corpus_part_references,
}
QUICK_STUDIES, QUICK_RANK_STUDIES, QUICK_RESAMPLES = 10, 3, 200
QUICK_CONVERSATIONS, QUICK_TRUTH, QUICK_RETEST_CONVERSATIONS = 30, 20_000, 40


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    default = os.environ.get("ATTUNEBENCH_DATA_DIR", "../shared/data")
    parser.add_argument("--keys", default=",".join(KEYS), help="the keys to compute")
    parser.add_argument("--data-dir", type=Path, default=Path(default))
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--knn", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--lexicon", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--studies", type=int, default=1000, help="simulated studies per design")
    parser.add_argument("--corners", action="store_true", help="the ends of the design ranges")
    parser.add_argument("--shuffles", type=int, default=200, help="shuffles of the gold")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="every key on a tiny input")
    args = parser.parse_args()
    if args.quick:
        args.shuffles = 3
    keys = [key for key in args.keys.split(",") if key]
    unknown = sorted(set(keys) - set(KEYS))
    if unknown:
        parser.error(f"unknown keys {', '.join(unknown)} (known: {', '.join(KEYS)})")
    quick = args.quick
    state: dict[str, Any] = {
        "studies": QUICK_STUDIES if quick else args.studies,
        "resamples": QUICK_RESAMPLES if quick else DEFAULT_RESAMPLES,
        "corners": args.corners or quick,
        "seed": args.seed,
        "lexicon": args.lexicon,
        "shuffles": args.shuffles,
        "quick": quick,
        "data_dir": args.data_dir,
    }
    if set(keys) & set(HEADLINE_KEYS):
        work = args.work or Path(tempfile.mkdtemp(prefix="attunebench-validity-"))
        work.mkdir(parents=True, exist_ok=True)
        registry = load_tasks()
        state["tasks"] = {name: registry.get(name)() for name in HEADLINE_CORPORA}
        state["corpora"] = corpora(args.data_dir, work, QUICK_CONVERSATIONS if quick else None)
        if args.knn and not quick and "trivial_headlines" in keys:
            state["knn"] = knn_headlines(work, ["rating", "outcome"])
    result = {key: KEYS[key](state) for key in keys}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
