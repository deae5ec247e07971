"""Reading and merging run directories; bad input names file, line and field; run directories
written by v1 (records "attunebench-record/v1", no conversations.jsonl) are still read."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest

from attunebench import rundir
from attunebench.analysis.loading import RunLoadError, load_runs
from attunebench.analysis.summary import Options, build_summary

ACCURACY = {"m/a": {"emotion": 0.5}, "m/b": {"emotion": 0.6}}
V1_RUN = Path(__file__).parent / "data" / "v1-run"


def test_runs_of_different_models_on_the_same_data_merge(make_run: Callable[..., Path]) -> None:
    first = make_run(ACCURACY, name="first", models=["m/a"])
    second = make_run(ACCURACY, name="second", models=["m/b"])
    runs = load_runs([first, second])
    assert {r.model for r in runs.records} >= {"m/a", "m/b"}
    assert len(runs.runs) == 2 and len(runs.dataset_hashes) == 1
    assert len(runs.conversations) == 40  # from the run directories' conversations.jsonl
    assert not [n for n in runs.notices if n.kind == "duplicate_records"]
    assert all(r.format == "attunebench-record/v2" for r in runs.records)


def test_runs_on_different_data_are_refused_unless_allowed(make_run: Callable[..., Path]) -> None:
    first = make_run(ACCURACY, name="first")
    other = make_run(ACCURACY, name="other", conversations=12)
    with pytest.raises(RunLoadError, match="different datasets"):
        load_runs([first, other])
    runs = load_runs([first, other], allow_mixed_datasets=True)
    assert any(n.kind == "mixed_datasets" for n in runs.notices)


def test_the_later_run_replaces_the_same_items(make_run: Callable[..., Path]) -> None:
    first = make_run(ACCURACY, name="first")
    again = make_run(ACCURACY, name="again", seed=0)
    runs = load_runs([first, again])
    assert len(runs.records) == len(load_runs([first]).records)
    assert any(n.kind == "duplicate_records" for n in runs.notices)


def test_a_bad_line_names_its_file_line_and_field(make_run: Callable[..., Path]) -> None:
    run = make_run(ACCURACY)
    lines = (run / "records.jsonl").read_text().splitlines()
    broken = json.loads(lines[2])
    broken["status"] = "maybe"
    lines[2] = json.dumps(broken)
    (run / "records.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(RunLoadError, match=r"records\.jsonl, line 3: status"):
        load_runs([run])


def test_a_torn_last_line_is_dropped(make_run: Callable[..., Path]) -> None:
    run = make_run(ACCURACY)
    complete = len(load_runs([run]).records)
    with (run / "records.jsonl").open("a") as handle:
        handle.write('{"format": "attunebench-record/v2", "task": "emo')
    assert len(load_runs([run]).records) == complete


def test_a_folder_that_is_not_a_run_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RunLoadError, match=r"run\.json is missing"):
        load_runs([tmp_path])


def test_without_conversations_file_a_changed_dataset_is_not_used(
    make_run: Callable[..., Path],
) -> None:
    run = make_run(ACCURACY)
    (run / rundir.CONVERSATIONS_FILE).unlink()  # as a run directory written before it existed
    assert len(load_runs([run]).conversations) == 40  # the dataset, found by its hash
    with (run / "dataset.jsonl").open("a") as handle:
        handle.write("\n")
    runs = load_runs([run])
    assert not runs.conversations
    assert any(n.kind == "dataset_unavailable" for n in runs.notices)


# --- v1 run directories ----------------------------------------------------------------------


def v1_lines() -> list[dict[str, object]]:
    lines = (V1_RUN / "records.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_a_v1_run_directory_is_read_as_v2(tmp_path: Path) -> None:
    run = shutil.copytree(V1_RUN, tmp_path / "v1-run")
    runs = load_runs([run])
    assert len(runs.records) == len(v1_lines()) == 72
    assert {r.format for r in runs.records} == {"attunebench-record/v2"}
    assert len(runs.conversations) == 6  # no conversations.jsonl: the dataset, by its hash
    pair = next(r for r in runs.records if r.task == "preference")
    gold = pair.gold or {}
    assert (gold["first"], gold["second"], gold["first_turn"]) == ("r1", "r2", pair.turn_index)
    assert gold["len_first"] > 0 and gold["len_second"] > 0
    levels = {
        (r.conversation_id, r.turn_index): (r.gold or {})["level"]
        for r in runs.records
        if r.task == "emotion"
    }
    assert levels["chat5", 0] == "conversation" and levels["chat4", 0] == "turn"


def test_a_v1_run_directory_gives_the_numbers_its_records_hold(tmp_path: Path) -> None:
    run = shutil.copytree(V1_RUN, tmp_path / "v1-run")
    options = Options(resamples=200, permutations=99, min_conversations=5)  # 6 in the run
    summary = build_summary(load_runs([run]), options)
    lines = v1_lines()
    # emotion: each model's mean score on the items every model answered
    answered: dict[tuple[object, object], set[object]] = defaultdict(set)
    for line in lines:
        if line["task"] == "emotion" and line["status"] != "failed":
            answered[line["conversation_id"], line["turn_index"]].add(line["model"])
    common = {key for key, models in answered.items() if len(models) == 3}
    assert len(common) == 11  # m/c's call failed on one item
    # each task's mean per-item score (emotion's headline is macro-F1, preference's the score)
    rows = {(r.task, r.model): r for r in summary.scores if r.metric == "score"}
    for model in ("m/a", "m/b", "m/c"):
        mine = [
            float(str(line["score"]))
            for line in lines
            if (line["task"], line["model"]) == ("emotion", model)
            and (line["conversation_id"], line["turn_index"]) in common
        ]
        row = rows["emotion", model]
        assert row.value == pytest.approx(sum(mine) / len(mine)) and row.n == 11
        assert row.ci_low is not None
    assert rows["emotion", "m/c"].n_failed == 1 and rows["emotion", "m/b"].n_invalid == 1
    # the longer-reply reference, from the lengths v1 kept in `meta`
    seen: dict[tuple[object, object], float] = {}
    for line in lines:
        if line["task"] == "preference":
            meta, gold = line["meta"], line["gold"]
            assert isinstance(meta, dict) and isinstance(gold, dict)
            longer = "r1" if meta["len_a"] > meta["len_b"] else "r2"
            tie = meta["len_a"] == meta["len_b"]
            # equal lengths: the cue has no preference, half right
            seen[line["conversation_id"], line["turn_index"]] = (
                0.5 if tie else float(longer == gold["chosen"])
            )
    reference = rows["preference", "reference/longer-reply"]
    assert reference.value == pytest.approx(sum(seen.values()) / len(seen))
    emotion = next(t for t in summary.tasks if t.name == "emotion")
    assert emotion.gold_levels == {"conversation": 1, "turn": 10}
    assert emotion.provenance == ["first-person"]
    assert summary.provenance.runs[0].seed == 11 and summary.provenance.status == "complete"
    assert summary.diagnostics.worst_items and summary.diagnostics.worst_items[0].text


def test_the_same_records_in_another_order_give_the_same_summary(
    make_run: Callable[..., Path],
) -> None:
    """Records are written in the order calls finish, which differs from run to run: the
    summary of the same records must not (float sums, ties among the worst items). The trap:
    a shuffled copy whose records are the same lines in reverse order."""
    accuracy = {"m/a": {"emotion": 0.5, "preference": 0.6}, "m/b": {"emotion": 0.7}}
    run = make_run(accuracy, name="run", invalid_rate=0.1, failed_rate=0.05)
    shuffled = run.parent / "shuffled"
    shutil.copytree(run, shuffled)
    path = shuffled / rundir.RECORDS_FILE
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(reversed(lines)), encoding="utf-8")
    options = Options(seed=0, resamples=200)
    summaries = []
    for directory in (run, shuffled):
        summary = build_summary(load_runs([directory]), options).model_dump(mode="json")
        summary.pop("provenance")  # the run's path
        summaries.append(json.dumps(summary, sort_keys=True))
    assert lines != list(reversed(lines))
    assert summaries[0] == summaries[1]


def written_before_parts(run: Path, name_of: Callable[[int], str]) -> None:
    """The run's records as written before the gold named its part, and its conversations'
    sources renamed by their position."""
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    assert all(r["gold"]["part"] for r in records if r.get("gold"))
    for record in records:
        if record.get("gold"):
            del record["gold"]["part"]
    (run / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    path = run / rundir.CONVERSATIONS_FILE
    conversations = [json.loads(line) for line in path.read_text().splitlines()]
    for i, conversation in enumerate(conversations):
        conversation["source"]["name"] = name_of(i)
    path.write_text("".join(json.dumps(c) + "\n" for c in conversations))


def test_records_written_before_the_gold_named_its_part_take_it_from_the_conversations(
    make_run: Callable[..., Path],
) -> None:
    run = make_run(ACCURACY)
    written_before_parts(run, lambda i: "part-one" if i % 2 else "part-two")
    runs = load_runs([run])
    part_of = {cid: c.source.name for cid, c in runs.conversations.items()}
    assert all(r.gold["part"] == part_of[r.conversation_id] for r in runs.records if r.gold)
    summary = build_summary(runs, Options(resamples=50, permutations=20))
    said = [n for n in summary.warnings if n.kind == "corpus_parts"]
    assert [n.task for n in said] == ["emotion"]
    assert "2 corpus parts (part-one, part-two)" in said[0].message
    single = make_run(ACCURACY, name="single")
    written_before_parts(single, lambda i: "one-corpus")
    found = build_summary(load_runs([single]), Options(resamples=50, permutations=20))
    assert not [n for n in found.warnings if n.kind == "corpus_parts"]
