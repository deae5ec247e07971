"""Baselines answer from the hint, through its answer form, in the JSON the tasks' one parser
reads, honestly and seeded; the fitted ones from the train items' hints and golds, as a run
teaches them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from baseline_harness import asked, taught

from attunebench.answerform import TaskHint
from attunebench.data.jsonl import read_conversations, write_conversations
from attunebench.data.sample import sample_path
from attunebench.data.schema import Conversation
from attunebench.data.taxonomy import load_taxonomy
from attunebench.engine import RECORDS_FILE, RunConfig, read_records, run
from attunebench.engine.training import TrainSetError
from attunebench.models.base import GenerateParams, ProviderError
from attunebench.models.baselines import KnnBaseline
from attunebench.models.embeddings import SentenceEncoder, load_encoder
from attunebench.models.modelsfile import ModelEntry
from attunebench.models.registry import Provider, ProviderConfigError, SpecError, make_provider
from attunebench.tasks import load_tasks
from attunebench.tasks.base import Item, Output
from attunebench.tasks.behavior import BehaviorGold, BehaviorPrediction
from attunebench.tasks.emotion import EmotionGold, EmotionPrediction
from attunebench.tasks.helpers.judging import parse_pairwise, parse_rubric
from attunebench.tasks.helpers.parsing import parse_choice
from testkit.servers import form_of

TAXONOMY = load_taxonomy("attunebench-default")
EMOTIONS = tuple(label.name for label in TAXONOMY.emotions)
BEHAVIORS = tuple(label.name for label in TAXONOMY.behaviors)
PARAMS = GenerateParams()
TASKS = load_tasks()


def conversation(number: int, turns: list[dict[str, Any]]) -> Conversation:
    return Conversation.model_validate(
        {
            "id": f"train-{number}",
            "source": {"kind": "sample", "name": "baseline-tests"},
            "taxonomy": "attunebench-default",
            "turns": [{"index": i, **turn} for i, turn in enumerate(turns)],
        }
    )


def parse_emotion(text: str) -> EmotionPrediction:
    """The answer read by the emotion task's own parse step, as a run reads it."""
    gold = EmotionGold(primary=EMOTIONS[0], intensity=3, valence=0.0, arousal=0.5)
    item = Item("emotion", conversation(9, [{"user": "x"}]), 0, "state", TAXONOMY, gold)
    prediction: EmotionPrediction = TASKS.get("emotion")().parse(item, {"answer": Output(text)})
    return prediction


def parse_behaviors(text: str) -> tuple[str, ...]:
    gold = BehaviorGold(behaviors=(BEHAVIORS[0],))
    item = Item("behavior", conversation(9, [{"user": "x"}]), 0, "r0", TAXONOMY, gold)
    prediction: BehaviorPrediction = TASKS.get("behavior")().parse(item, {"answer": Output(text)})
    return prediction.behaviors


def turn(
    user: str, primary: str, replies: list[tuple[str, list[str]]], chosen: int = 0
) -> dict[str, Any]:
    return {
        "user": user,
        "state": {"primary": primary, "intensity": 4, "valence": -0.6, "arousal": 0.7},
        "responses": [
            {"id": f"r{i}", "text": text, "behaviors": behaviors}
            for i, (text, behaviors) in enumerate(replies)
        ],
        "preference": {"chosen": f"r{chosen}"},
    }


WORK = turn(
    "My manager shouted at me in front of the whole team and I am livid.",
    "anger",
    [
        ("What did he say to you? That sounds humiliating.", ["question", "reflection"]),
        ("Ok.", ["dismissing"]),
    ],
)
GRIEF = turn(
    "My grandmother passed away on Sunday and the house feels empty.",
    "sadness",
    [
        ("I'm so sorry about your grandmother; missing her like this is natural.", ["validation"]),
        ("Cheer up.", ["dismissing"]),
    ],
)
EXAM = turn(
    "My final exam is tomorrow morning and I cannot stop shaking.",
    "anxiety",
    [
        (
            "Feeling nervous before an exam is very common, and you have prepared.",
            ["validation", "reassurance"],
        ),
        ("Sleep.", ["suggestion"]),
    ],
)


@pytest.fixture
def train_file(tmp_path: Path) -> Path:
    """Anger is the majority emotion; validation the majority behavior; longer replies win."""
    path = tmp_path / "train.jsonl"
    write_conversations(path, [conversation(0, [WORK, GRIEF]), conversation(1, [EXAM, WORK])])
    return path


@pytest.fixture(scope="session")
def minilm() -> SentenceEncoder:
    """The encoder knn uses, loaded once for the session (load_encoder caches it per process)."""
    pytest.importorskip("sentence_transformers")
    return load_encoder()


def hint(kind: Any, key: str = "item-1", **fields: Any) -> TaskHint:
    return TaskHint(kind=kind, item_key=key, form=form_of(kind), **fields)


def emotion_hint(text: str, key: str = "item-1") -> TaskHint:
    return hint("emotion", key, text=text, labels=EMOTIONS)


async def answer(provider: Provider, item: TaskHint, params: GenerateParams = PARAMS) -> str:
    return (await provider.generate([], params, item)).text


# --- baseline/random -------------------------------------------------------------------------


async def test_random_is_reproducible_per_seed_and_item() -> None:
    items = [emotion_hint("anything", key=f"item-{i}") for i in range(40)]
    first = [await answer(make_provider("baseline/random"), item) for item in items]
    again = [await answer(make_provider("baseline/random?seed=0"), item) for item in items]
    other = [await answer(make_provider("baseline/random", seed=1), item) for item in items]
    by_run_seed = [
        await answer(make_provider("baseline/random"), i, GenerateParams(seed=1)) for i in items
    ]
    assert first == again
    assert other != first
    assert by_run_seed == other  # the run's seed, when the request carries one, wins
    assert len(set(first)) > 20  # items differ from one another


async def test_random_covers_every_label_and_parses() -> None:
    provider = make_provider("baseline/random")
    primaries = set()
    for i in range(400):
        parsed = parse_emotion(await answer(provider, emotion_hint("x", f"k{i}")))
        primaries.add(parsed.primary)
        assert parsed.emotions == (parsed.primary,)
        assert parsed.intensity in (1, 2, 3, 4, 5)
        assert parsed.valence is not None and parsed.arousal is not None
    assert primaries == set(EMOTIONS)
    behaviors = parse_behaviors(
        await answer(provider, hint("behavior", text="reply", labels=BEHAVIORS))
    )
    assert len(behaviors) == 1
    picks = {
        parse_choice(
            await answer(provider, hint("preference", f"p{i}", candidates={"A": "a", "B": "b"}))
        )
        for i in range(50)
    }
    assert picks == {"A", "B"}
    reply = await answer(provider, hint("response", text="I feel low"))
    assert reply and not reply.startswith("{")
    assert parse_pairwise(
        await answer(provider, hint("judge_pairwise", candidates={"A": "a", "B": "b"}))
    )["winner"] in ("A", "B")
    assert (
        1
        <= parse_rubric(await answer(provider, hint("judge_rubric", candidates={"A": "a"})))[
            "score"
        ]
        <= 10
    )


# --- baseline/majority and baseline/longer ----------------------------------------------------


def fitted(spec: str, train: Path, **options: Any) -> Provider:
    return taught(make_provider(spec, train=str(train), **options))


async def test_majority_answers_the_usual_answer_of_the_train_items(train_file: Path) -> None:
    provider = fitted("baseline/majority", train_file)
    asked_about = [conversation(5, [turn("I am fine, thanks.", "joy", [("Good.", ["other"])])])]
    emotion = parse_emotion(await answer(provider, asked("emotion", asked_about)[0]))
    assert emotion.primary == "anger"  # 2 of the 4 train messages
    assert (emotion.intensity, emotion.valence, emotion.arousal) == (4, -0.6, 0.7)
    # 8 labelled replies: dismissing on 3, validation on 2, so no label reaches half.
    behavior = await answer(provider, asked("behavior", asked_about)[0])
    assert parse_behaviors(behavior) == ("dismissing",)
    # Each train pair is learned in both orders it is asked in, so neither place is preferred
    # more: the majority's pick is one letter, the same whatever the replies.
    pairs = asked("preference", [conversation(6, [WORK])])
    assert [parse_choice(await answer(provider, pair)) for pair in pairs] == ["A", "A"]


async def test_majority_answers_only_the_questions_its_train_items_ask(train_file: Path) -> None:
    provider = fitted("baseline/majority", train_file)
    with pytest.raises(ProviderError, match="no 'emotion' item asking this question") as error:
        await answer(provider, hint("emotion", text="x", labels=("joy", "sadness")))
    assert not error.value.retryable
    assert not provider.answers_form(form_of("rating"))  # the split has no rating
    assert "has no item asking 'rating' questions" in provider.unsupported_reason("rating")


async def test_longer_prefers_the_longer_reply_as_answer_and_as_judge() -> None:
    provider = make_provider("baseline/longer")
    long, short = "I hear you, and that sounds exhausting.", "Ok."
    for kind, parse in (("preference", parse_choice), ("judge_pairwise", parse_pairwise)):
        first = await answer(provider, hint(kind, "p|ab", candidates={"A": long, "B": short}))
        second = await answer(provider, hint(kind, "p|ba", candidates={"A": short, "B": long}))
        picks = [parse(text) for text in (first, second)]
        assert [p if isinstance(p, str) else p["winner"] for p in picks] == ["A", "B"]
    same = {"A": "abc", "B": "xyz"}
    assert parse_choice(await answer(provider, hint("preference", candidates=same))) == "tie"


def test_fitted_baselines_refuse_to_run_without_a_train_split(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="option train: Field required"):
        make_provider("baseline/majority")
    with pytest.raises(SpecError, match="option train: Field required"):
        make_provider("baseline/knn")
    with pytest.raises(ProviderConfigError, match="does not exist"):
        make_provider("baseline/majority", train=str(tmp_path / "missing.jsonl"))


def test_a_bad_train_line_is_named_by_file_line_and_field(train_file: Path) -> None:
    lines = train_file.read_text().splitlines()
    broken = json.loads(lines[1])
    broken["turns"][0]["state"]["intensity"] = 9
    train_file.write_text(lines[0] + "\n" + json.dumps(broken) + "\n")
    with pytest.raises(TrainSetError, match=r"train\.jsonl:2: turns\.0\.state\.intensity"):
        taught(make_provider("baseline/majority", train=str(train_file)))


def test_options_are_checked(train_file: Path) -> None:
    with pytest.raises(SpecError, match="given twice"):
        make_provider(f"baseline/knn?train={train_file}", train=str(train_file))
    with pytest.raises(SpecError, match="option colour"):
        make_provider("baseline/lexicon?colour=red")
    with pytest.raises(SpecError, match="unknown baseline 'oracle'"):
        make_provider("baseline/oracle")
    assert (
        make_provider(f"baseline/knn?train={train_file}&k=3").spec
        == f"baseline/knn?train={train_file}&k=3"
    )


# --- baseline/lexicon -------------------------------------------------------------------------


async def test_lexicon_reads_anger_and_joy_from_the_words() -> None:
    provider = make_provider("baseline/lexicon")
    angry = parse_emotion(
        await answer(provider, emotion_hint("I am furious and angry, this is an outrage!"))
    )
    joyful = parse_emotion(
        await answer(provider, emotion_hint("What a wonderful, happy day, I love it!"))
    )
    flat = parse_emotion(await answer(provider, emotion_hint("The bus comes at noon.")))
    assert (angry.primary, joyful.primary, flat.primary) == ("anger", "joy", "neutral")
    assert angry.valence is not None and angry.valence < -0.5
    assert joyful.valence is not None and joyful.valence > 0.5
    assert flat.valence == 0 and flat.intensity == 1
    assert angry.intensity is not None and angry.intensity > 3
    assert angry.arousal is None  # the lexicon has no arousal, and none is invented


async def test_lexicon_names_labels_only_where_an_answer_names_labels() -> None:
    provider = make_provider("baseline/lexicon")
    behaviors = await answer(
        provider, hint("behavior", text="Have you tried sleeping?", labels=BEHAVIORS)
    )
    assert parse_behaviors(behaviors) == ()  # no NRC emotion is named like a behaviour
    for kind in ("preference", "rating", "outcome", "response", "judge_pairwise"):
        assert not provider.answers_form(form_of(kind)), kind


# --- baseline/knn -----------------------------------------------------------------------------


async def test_knn_answers_with_the_nearest_train_example(
    train_file: Path, minilm: SentenceEncoder
) -> None:
    provider = fitted("baseline/knn", train_file, k=1)
    grief = parse_emotion(
        await answer(
            provider, emotion_hint("Since my grandfather died last week our home feels so empty.")
        )
    )
    exam = parse_emotion(
        await answer(
            provider, emotion_hint("I have a big test at school tomorrow and I am trembling.")
        )
    )
    assert (grief.primary, exam.primary) == ("sadness", "anxiety")
    assert grief.intensity == 4 and grief.valence == -0.6
    behaviors = await answer(
        provider,
        hint(
            "behavior",
            text="What exactly did he say? That must have felt humiliating.",
            labels=BEHAVIORS,
        ),
    )
    assert parse_behaviors(behaviors) == ("question", "reflection")
    retrieved = await answer(
        provider, hint("response", text="Lost my gran on the weekend, the house is so quiet.")
    )
    assert retrieved == GRIEF["responses"][0]["text"]


async def test_knn_check_refuses_an_encoder_it_cannot_load(train_file: Path) -> None:
    provider = make_provider("baseline/knn", train=str(train_file), encoder="no-org/no-encoder")
    assert isinstance(provider, KnnBaseline)
    with pytest.raises(ProviderConfigError, match=r"baseline/knn.*no local copy"):
        await provider.check()


async def test_knn_votes_over_k_neighbours_and_picks_replies_like_preferred_ones(
    train_file: Path, minilm: SentenceEncoder
) -> None:
    provider = fitted("baseline/knn", train_file, k=3)
    # Of the 4 train messages, 2 are the anger one: any 3 neighbours hold at least one of them,
    # and a message about a shouting boss has both as its nearest.
    angry = await answer(provider, emotion_hint("My boss yelled at me at work today."))
    assert parse_emotion(angry).primary == "anger"
    # the pairs most like this one, in the order shown, preferred the warm reply in B's place
    warm = {"A": "Cheer up, ok.", "B": "I'm so sorry; it is natural to miss her this much."}
    cold = {"A": warm["B"], "B": warm["A"]}
    assert parse_choice(await answer(provider, hint("preference", "p|ab", candidates=warm))) == "B"
    assert parse_choice(await answer(provider, hint("preference", "p|ba", candidates=cold))) == "A"


# --- every baseline ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "kind"),
    [
        ("baseline/majority", "rating"),
        ("baseline/majority", "judge_rubric"),
        ("baseline/lexicon", "response"),
        ("baseline/knn", "judge_rubric"),
        ("baseline/longer", "emotion"),
    ],
)
async def test_unsupported_forms_are_failures_not_answers(
    train_file: Path, spec: str, kind: str
) -> None:
    options = {"train": str(train_file)} if spec in ("baseline/majority", "baseline/knn") else {}
    provider = taught(make_provider(spec, **options))
    assert not provider.answers_form(form_of(kind))
    with pytest.raises(ProviderError, match=f"'{kind}'") as error:
        await answer(
            provider, hint(kind, text="x", labels=EMOTIONS, candidates={"A": "a", "B": "b"})
        )
    assert not error.value.retryable
    with pytest.raises(ProviderError, match="TaskHint"):
        await provider.generate([], PARAMS, None)
    await provider.aclose()


@pytest.mark.parametrize("spec", ["baseline/majority", "baseline/knn", "baseline/longer"])
async def test_as_pairwise_judges_they_pick_as_they_do_for_preference(
    train_file: Path, spec: str, minilm: SentenceEncoder
) -> None:
    options = {"train": str(train_file)} if spec != "baseline/longer" else {}
    provider = taught(make_provider(spec, **options))
    pairs = [
        {"A": "Cheer up, ok.", "B": "I'm so sorry; it is natural to miss her this much."},
        {"A": "That sounds so hard, I'm glad you told me.", "B": "Whatever."},
    ]
    for pair in pairs:
        choice = parse_choice(await answer(provider, hint("preference", "p|ab", candidates=pair)))
        verdict = await answer(provider, hint("judge_pairwise", "p|ab", candidates=pair))
        assert parse_pairwise(verdict)["winner"] == choice


@pytest.mark.parametrize(
    "spec",
    ["baseline/random", "baseline/majority", "baseline/longer", "baseline/lexicon", "baseline/knn"],
)
async def test_a_baseline_answers_exactly_the_forms_it_says(
    tmp_path: Path, spec: str, request: pytest.FixtureRequest
) -> None:
    """On every registered task's queries about the sample: an answer where `answers_form`
    says so, a non-retryable failure elsewhere."""
    if spec == "baseline/knn":
        request.getfixturevalue("minilm")
    sample = read_conversations(sample_path())
    train = tmp_path / "train.jsonl"
    write_conversations(train, sample[0::2])
    options = {"train": str(train)} if spec in ("baseline/majority", "baseline/knn") else {}
    provider = taught(make_provider(spec, **options))
    answered = set()
    for task in TASKS.names():
        for item in asked(task, sample[1::2])[:2]:
            assert item.form is not None
            if provider.answers_form(item.form):
                assert await answer(provider, item), (spec, task)
                answered.add(task)
            else:
                with pytest.raises(ProviderError) as error:
                    await answer(provider, item)
                assert not error.value.retryable
    assert answered, spec


async def test_an_edited_train_file_changes_the_answers_despite_a_shared_cache(
    tmp_path: Path, train_file: Path
) -> None:
    """Baselines are not cached: the cache key sees the train file's path, not its contents."""

    async def primaries(out: str) -> set[str]:
        entry = ModelEntry(
            name="majority", spec="baseline/majority", options={"train": str(train_file)}
        )
        config = RunConfig(
            data=sample_path(),
            out=tmp_path / out,
            models=(entry,),
            tasks=("emotion",),
            limit=3,
            cache_path=tmp_path / "cache.sqlite",
            progress=False,
            check_servers=False,
        )
        result = await run(config)
        assert result.complete and result.totals.cache_hits == 0
        return {r.prediction["primary"] for r in read_records(config.out / RECORDS_FILE)}

    assert await primaries("first") == {"anger"}
    write_conversations(train_file, [conversation(0, [GRIEF, GRIEF, WORK])])  # same path
    assert await primaries("second") == {"sadness"}
