"""The collection app under faults: fuzzed requests get no server error, a SIGKILL of the server
loses no acknowledged answer (SQLite, and PostgreSQL when ATTUNEBENCH_TEST_POSTGRES_URL is set),
and participants answering at the same time never see each other's data."""

from __future__ import annotations

import hashlib
import random
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from webapp_harness import LiveApp, Participant, hidden, join_slug, prepare, stored

from attunebench.collect.app import create_app
from attunebench.collect.models import ParticipantRow
from attunebench.collect.settings import Settings

# The schema FastAPI builds from the app's routes (the app does not serve it).
SCHEMA = schemathesis.openapi.from_dict(create_app(Settings(database_url="sqlite://")).openapi())
FUZZ = settings(
    max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveApp, list[str]]]:
    """The app, its invitation tokens, and last in the list the open link's slug."""
    folder = tmp_path_factory.mktemp("live")
    url = f"sqlite:///{folder / 'collect.db'}"
    tokens = prepare(url, 20)
    app = LiveApp(url, folder / "server.log").start()
    try:
        yield app, [*tokens, join_slug(url)]
    finally:
        app.stop()


@SCHEMA.parametrize()
@FUZZ
def test_schemathesis_finds_no_server_error(
    case: schemathesis.Case, live: tuple[LiveApp, list[str]]
) -> None:
    app, known = live
    tokens, slug = known[:-1], known[-1]
    parameters = case.path_parameters or {}
    # Half the cases reach a real participant or the real open link (the rest test unknown and
    # malformed links).
    digest = hashlib.sha256(repr(parameters).encode()).digest()
    if "token" in parameters and digest[0] % 2:
        parameters["token"] = tokens[digest[1] % len(tokens)]
    if "slug" in parameters and digest[0] % 2:
        parameters["slug"] = slug
    response = case.call(base_url=app.base, timeout=30)
    assert response.status_code < 500, (case.method, case.formatted_path, response.text[:500])


FIELDS = (
    "message",
    "emotions",
    "primary",
    "intensity",
    "intensity_unset",
    "valence",
    "arousal",
    "need",
    "need_behaviors",
    "choice",
    "strength",
    "comment",
    "behaviors_A",
    "behaviors_B",
    "agree",
    "q_age_band",
    "q_overall",
    "panas_upset",
    "screening",
    "simulated",
)
values = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        [
            "",
            "yes",
            "A",
            "B",
            "tie",
            "sadness",
            "-1",
            "1e309",
            "NaN",
            "101",
            "\x00",
            "<script>",
            "31+",
        ]
    ),
    st.text(min_size=2000, max_size=3000),
)
forms = st.dictionaries(
    st.sampled_from(FIELDS) | st.text(max_size=10),
    st.lists(values, min_size=1, max_size=3),
    max_size=8,
)
ACTIONS = ("consent", "traits", "message", "generate", "judge", "end", "survey")


@FUZZ
@given(action=st.sampled_from(ACTIONS), form=forms, keep_step=st.booleans(), seed=st.integers(0, 3))
def test_fuzzed_answers_at_any_stage_are_never_a_server_error(
    live: tuple[LiveApp, list[str]],
    action: str,
    form: dict[str, list[str]],
    keep_step: bool,
    seed: int,
) -> None:
    app, known = live
    participant = Participant(app.base, known[seed])
    try:
        html = participant.page()
        data: dict[str, object] = dict(form)
        if 'name="csrf"' in html:  # not on the last pages (done, declined), which take no answer
            data["csrf"] = hidden(html, "csrf")
            if keep_step:
                data["step"] = hidden(html, "step")
        response = participant.client.post(f"/p/{participant.token}/{action}", data=data)
        assert response.status_code < 500, (action, form, response.text[:500])
        assert participant.client.get(f"/p/{participant.token}").status_code == 200
    finally:
        participant.close()


def _in_threads(participants: list[Participant], until: Callable[[], bool]) -> list[BaseException]:
    """Each participant answers page after page in a thread of its own until it is done, its
    server goes away, or `until()` holds; returns what went wrong other than the server going."""
    errors: list[BaseException] = []

    def walk(participant: Participant) -> None:
        try:
            while not until() and participant.answer():
                pass
        except httpx.TransportError:
            pass  # the server was killed under it
        except BaseException as error:  # reported by the test that started the thread
            errors.append(error)

    threads = [threading.Thread(target=walk, args=(p,)) for p in participants]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    return errors


def _check_acknowledged(participant: Participant, row: ParticipantRow) -> None:
    """Every answer the server acknowledged is in the database, at the step it answered (an
    answer stored just before a kill, unacknowledged, may sit between them)."""
    for action, data in participant.acked:
        turn = int(str(data["step"]).partition(":")[2])
        if action == "consent":
            assert row.consented_at is not None
        elif action == "traits":
            assert row.traits == {"age_band": "31+"}
        elif action == "message":
            assert row.turns[turn].user_text == data["message"]
        elif action in ("judge", "generate"):
            assert len(row.turns[turn].replies) == 2
            assert action == "generate" or row.turns[turn].choice == data["choice"]
        elif action == "survey":
            assert row.finished_at is not None


def test_a_killed_server_loses_no_acknowledged_answer(database_url: str, tmp_path: Path) -> None:
    tokens = prepare(database_url, 6)
    acked: dict[str, list[tuple[str, dict[str, object]]]] = {token: [] for token in tokens}
    rng = random.Random(3)
    for round_ in range(3):  # killed twice mid-run, then left to finish
        app = LiveApp(database_url, tmp_path / f"server-{round_}.log").start()
        participants = [
            Participant(app.base, token, marker=f"p{n}", acked=acked[token])
            for n, token in enumerate(tokens)
        ]
        target = sum(map(len, acked.values())) + rng.randint(8, 20)
        finished = threading.Event()
        killer = threading.Thread(target=_kill_at, args=(app, acked, target, finished))
        if round_ < 2:
            killer.start()
        errors = _in_threads(participants, lambda: False)
        finished.set()
        if round_ < 2:
            killer.join(30)
            assert app.process is not None and app.process.returncode == -9, "not killed"
        app.stop()
        assert not errors, errors[:3]
        rows = stored(database_url, tokens)
        for participant in participants:
            _check_acknowledged(participant, rows[participant.token])
            participant.close()
    assert all(rows[token].finished_at is not None for token in tokens)  # the last round's


def _kill_at(
    app: LiveApp,
    acked: dict[str, list[tuple[str, dict[str, object]]]],
    target: int,
    finished: threading.Event,
) -> None:
    """SIGKILL the server once `target` answers in all have been acknowledged."""
    while not finished.is_set():
        if sum(map(len, acked.values())) >= target:
            app.kill()
            return
        time.sleep(0.001)


def test_concurrent_participants_never_see_each_others_data(
    database_url: str, tmp_path: Path
) -> None:
    tokens = prepare(database_url, 8)
    app = LiveApp(database_url, tmp_path / "server.log").start()
    participants = [Participant(app.base, token) for token in tokens]
    try:
        errors = _in_threads(participants, lambda: False)
    finally:
        app.stop()
    assert not errors, errors[:3]
    markers = {p.marker for p in participants}
    rows = stored(database_url, tokens)
    for participant in participants:
        foreign = markers - {participant.marker}
        assert participant.pages and any(participant.marker in page for page in participant.pages)
        leaked = {m for page in participant.pages for m in foreign if m in page}
        assert not leaked, f"{participant.marker} was shown {leaked}"
        row = rows[participant.token]
        assert row.finished_at is not None and len(row.turns) == 3
        assert all(turn.user_text.startswith(participant.marker) for turn in row.turns)
        assert participant.marker in str(row.turns[0].need_text)
        participant.close()
