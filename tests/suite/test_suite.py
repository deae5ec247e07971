"""The shipped suites: what their manifests promise, the refusals, and a run end to end."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attunebench.analysis import RunLoadError, load_runs
from attunebench.cli import app
from attunebench.data.jsonl import read_conversations
from attunebench.engine.runner import RunConfig
from attunebench.engine.suite_run import suite_slices
from attunebench.suite import SuiteError, load_manifest, suite_digest, suite_names
from attunebench.suite.build import load_suite, missing_corpora
from attunebench.tasks import make_tasks

REPO = Path(__file__).resolve().parents[2]
V1_RUN = REPO / "tests" / "analysis" / "data" / "v1-run"


def _chat(conversation_id: str) -> str:
    return conversation_id.rsplit("-agent_", 1)[0]


def test_the_mini_suite_is_part_of_the_full_one_with_ten_conversations_per_task() -> None:
    assert {"open-v1", "open-v1-mini"} <= set(suite_names())
    full, mini = load_manifest("open-v1"), load_manifest("open-v1-mini")
    assert (full.tasks, full.seed, full.version) == (mini.tasks, mini.seed, mini.version)
    for task, keys in mini.items.items():
        assert set(keys) <= set(full.items[task])
        assert len({key.split("|")[0] for key in keys}) >= 10, task
    for part in full.parts:
        evaluated = {_chat(c) for c in part.conversations}
        # one side per chat, and no chat (either side) both evaluated and in the train split
        assert len(evaluated) == len(part.conversations)
        assert not evaluated & {_chat(c) for c in part.train}
        assert all(len(sha) == 64 for sha in part.files.values())
    assert suite_digest("open-v1") != suite_digest("open-v1-mini")


def test_suite_list_names_each_suite_and_its_counts() -> None:
    result = CliRunner().invoke(app, ["suite", "list"])
    assert result.exit_code == 0, result.output
    full = load_manifest("open-v1")
    assert f"open-v1 version 2  digest {suite_digest('open-v1')[:12]}" in result.output
    totals = " ".join(str(len(keys)) for keys in full.items.values())
    assert f"all {totals}" in " ".join(result.output.replace("│", " ").split())


def test_a_missing_corpus_is_named_with_where_it_is_expected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "esconv").mkdir()
    line = missing_corpora(load_manifest("open-v1"), tmp_path)
    assert line is not None and "\n" not in line
    assert f"convai1 expected at {tmp_path / 'convai1'}" in line
    assert f"topical_chat expected at {tmp_path / 'topical_chat'}" in line
    assert "esconv expected" not in line
    assert "fetch them with: attunebench data fetch convai1 topical_chat;" in line
    # No ../shared/data beside the current folder, no corpora in the user's data folder.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    result = CliRunner().invoke(
        app,
        ["run", "--suite", "open-v1", "--model", "baseline/random", "--out", str(tmp_path / "r")],
        env={"ATTUNEBENCH_DATA_DIR": str(tmp_path)},
    )
    assert result.exit_code == 2
    expected = tmp_path / "xdg" / "attunebench" / "corpora" / "convai1"
    assert f"convai1 expected at {expected}" in result.output
    assert "attunebench data fetch convai1 topical_chat" in result.output
    assert not (tmp_path / "r").exists()


def test_a_suite_fixes_its_data_tasks_and_seed(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "run",
            "--suite",
            "open-v1",
            "--task",
            "emotion",
            "--seed",
            "3",
            "--model",
            "baseline/random",
            "--out",
            str(tmp_path / "r"),
        ],
    )
    assert result.exit_code == 2
    assert "drop --task, --seed" in result.output
    with pytest.raises(SuiteError, match="unknown suite 'open-v9'"):
        load_manifest("open-v9")


def _with_suite(tmp_path: Path, name: str, suite: dict[str, str] | None) -> Path:
    folder = tmp_path / name
    shutil.copytree(V1_RUN, folder)
    info = json.loads((folder / "run.json").read_text())
    if suite is not None:
        info["suite"] = suite
    (folder / "run.json").write_text(json.dumps(info))
    return folder


def test_runs_on_different_suite_versions_or_digests_are_not_ranked(tmp_path: Path) -> None:
    v1 = {"name": "open-v1", "version": "1", "digest": "a" * 64}
    same = [_with_suite(tmp_path, n, v1) for n in ("one", "two")]
    assert len(load_runs(same).runs) == 2  # the same suite: merged as before
    for other in (
        {**v1, "version": "2"},
        {**v1, "digest": "b" * 64},
        None,  # a run on no suite
    ):
        shutil.rmtree(tmp_path / "other", ignore_errors=True)
        runs = [same[0], _with_suite(tmp_path, "other", other)]
        with pytest.raises(RunLoadError) as refused:
            load_runs(runs, allow_mixed_datasets=True)
        message = str(refused.value)
        assert "\n" not in message and "different suite versions or digests" in message
        assert "open-v1 version 1, digest aaaaaaaaaaaa" in message


def test_changed_corpus_files_are_refused(data_dir: Path, tmp_path: Path) -> None:
    for corpus in ("esconv", "topical_chat"):
        (tmp_path / corpus).symlink_to(data_dir / corpus)
    (tmp_path / "convai1").mkdir()
    (tmp_path / "convai1" / "data_1501534800.tar.gz").write_bytes(b"not the release")
    with pytest.raises(SuiteError, match=r"convai1-human-bot: .*data_1501534800\.tar\.gz has SHA"):
        load_suite("open-v1-mini", tmp_path)


def test_run_and_report_the_mini_suite_with_baselines(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    train = out / "suite" / "open-v1-mini-train.jsonl"
    models = ["baseline/random", "baseline/lexicon", f"baseline/majority?train={train}"]
    args = ["run", "--suite", "open-v1-mini", "--out", str(out), "--no-cache", "--no-progress"]
    for model in models:
        args += ["--model", model]
    result = CliRunner().invoke(app, args, env={"ATTUNEBENCH_DATA_DIR": str(data_dir)})
    assert result.exit_code == 0, result.output
    info = json.loads((out / "run.json").read_text())
    manifest = load_manifest("open-v1-mini")
    assert info["suite"] == {
        "name": "open-v1-mini",
        "version": manifest.version,
        "digest": suite_digest("open-v1-mini"),
        "train": "suite/open-v1-mini-train.jsonl",  # the references are fitted on it
        "train_sha256": manifest.train_sha256,
    }
    assert info["dataset_sha256"] == manifest.dataset_sha256
    assert (info["tasks"], info["seed"]) == (list(manifest.tasks), manifest.seed)
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    random_keys = {
        "|".join((r["conversation_id"], str(r["turn_index"]), r["item_id"], r["variant"]))
        for r in records
        if r["model"] == "baseline/random"
    }
    assert random_keys == {key for keys in manifest.items.values() for key in keys}
    again = CliRunner().invoke(app, args, env={"ATTUNEBENCH_DATA_DIR": str(data_dir)})
    assert again.exit_code == 0, again.output  # the same command resumes: nothing to redo
    assert "0 calls" in again.output and len(
        (out / "records.jsonl").read_text().splitlines()
    ) == len(records)
    report = CliRunner().invoke(
        app,
        [
            "report",
            str(out),
            "--out",
            str(tmp_path / "rep"),
            "--format",
            "json",
            "--resamples",
            "200",
        ],
    )
    assert report.exit_code == 0, report.output
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())
    assert summary["provenance"]["runs"][0]["suite"] == info["suite"]
    scored = {(s["model"], s["task"]) for s in summary["scores"]}
    assert {("baseline/random", task) for task in manifest.tasks} <= scored
    fits = {s["fit"] for s in summary["scores"] if s["model_kind"] == "reference"}
    assert fits <= {"train", "none"} and "train" in fits  # the suite's own train split


@pytest.mark.slow  # building the suite from the corpora is most of it (8-16 s here)
def test_the_mini_suite_with_person_hidden_twins_gives_the_person_gap(
    data_dir: Path, tmp_path: Path
) -> None:
    """`--person both` is allowed with `--suite`: the suite's item check passes on the shown
    items, each gets its twin, and the report gives every task's person gap."""
    out = tmp_path / "run"
    args = ["run", "--suite", "open-v1-mini", "--out", str(out), "--no-cache", "--no-progress"]
    args += ["--person", "both", "--model", "baseline/random", "--model", "sim/oracle"]
    result = CliRunner().invoke(app, args, env={"ATTUNEBENCH_DATA_DIR": str(data_dir)})
    assert result.exit_code == 0, result.output
    info = json.loads((out / "run.json").read_text())
    assert info["person"] == "both"
    manifest = load_manifest("open-v1-mini")
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    shown = {
        "|".join((r["conversation_id"], str(r["turn_index"]), r["item_id"], r["variant"]))
        for r in records
        if r["model"] == "baseline/random" and not r["variant"].endswith("person-hidden")
    }
    assert shown == {key for keys in manifest.items.values() for key in keys}
    assert sum(r["variant"].endswith("person-hidden") for r in records) == len(records) // 2
    report = tmp_path / "rep"
    args = ["report", str(out), "--out", str(report), "--format", "json", "--resamples", "200"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    gaps = json.loads((report / "summary.json").read_text())["person_gap"]
    assert set(gaps) == set(manifest.tasks)
    for task, by_model in gaps.items():
        assert set(by_model) == {"baseline/random", "sim/oracle"}, task
        for gap in by_model.values():
            assert gap["n"] > 0 and gap["n_conversations"] >= 10
            assert gap["value"] is not None and (gap["ci_low"] is not None or gap["reason"])
        # random answers an item and its twin alike: its gap is exactly 0, not a noise a
        # reader takes for an effect (it was -0.079 [-0.150, +0.003] on emotion)
        random = by_model["baseline/random"]
        assert (random["value"], random["ci_low"], random["ci_high"]) == (0.0, 0.0, 0.0), task
        assert random["shown"] == random["hidden"], task


@pytest.mark.slow  # building the suite from the corpora is most of it
def test_each_tasks_slice_is_the_shortest_of_each_part_in_turn(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`suite_slices`, which `make demo-llm`, the ladder and the Qwen benchmark share: per
    task, a run of that task alone on the conversations carrying its items, the shortest of
    each corpus part first, the parts taken in turn; never labelled as the suite itself."""
    monkeypatch.setenv("ATTUNEBENCH_DATA_DIR", str(data_dir))
    manifest = load_manifest("open-v1-mini")
    slices, train = suite_slices("open-v1-mini", tmp_path, 4, tasks={"emotion", "rating"})
    assert sorted(c.tasks for c in slices) == [("emotion",), ("rating",)]  # only those asked
    assert train.is_file() and all(c.suite is None and c.seed == manifest.seed for c in slices)
    suite = read_conversations(tmp_path / "suite" / "open-v1-mini.jsonl")
    for config in slices:
        (task,) = make_tasks(config.tasks, config.task_options, config.seed)
        chosen = read_conversations(config.data)
        assert config.data == tmp_path / "data" / f"{task.name}.jsonl" and len(chosen) == 4
        carrying = [c for c in suite if next(iter(task.items([c])), None) is not None]
        taken = {c.id for c in chosen}
        per_part = []
        for part in manifest.parts:
            mine = sorted(
                (c for c in carrying if c.id in part.conversations),
                key=lambda c: (sum(len(t.user) for t in c.turns), c.id),
            )
            picked = [c.id for c in mine if c.id in taken]
            assert picked == [c.id for c in mine[: len(picked)]], (task.name, part.name)
            per_part.append(len(picked) if len(picked) < len(mine) else None)
        counts = [n for n in per_part if n is not None]  # parts not yet run out
        assert max(counts) - min(counts) <= 1, (task.name, per_part)  # in turn


def test_a_second_slice_continues_the_first_and_shares_no_conversation(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`skip`: the ladder's second slice is the next conversations of the same order, so
    disjoint from the first slice, which stays as it was (file and content)."""
    monkeypatch.setenv("ATTUNEBENCH_DATA_DIR", str(data_dir))
    asked = {"emotion", "rating"}

    def ids(configs: list[RunConfig]) -> dict[str, list[str]]:
        return {c.tasks[0]: [x.id for x in read_conversations(c.data)] for c in configs}

    first_configs, _ = suite_slices("open-v1-mini", tmp_path, 3, tasks=asked)
    first = ids(first_configs)
    before = {c.data: c.data.read_bytes() for c in first_configs}
    second_configs, _ = suite_slices("open-v1-mini", tmp_path, 4, tasks=asked, skip=3)
    second = ids(second_configs)
    longer = ids(suite_slices("open-v1-mini", tmp_path / "longer", 7, tasks=asked)[0])
    assert {c.data.name for c in second_configs} == {
        "emotion.after-3.jsonl",
        "rating.after-3.jsonl",
    }
    assert {c.data: c.data.read_bytes() for c in first_configs} == before  # left as it was
    for task in asked:
        assert len(first[task]) == 3 and len(second[task]) == 4, task
        assert not set(first[task]) & set(second[task]), task
        assert first[task] + second[task] == longer[task], task  # the same order, continued
