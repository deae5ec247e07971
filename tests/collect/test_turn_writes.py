"""The turn's writes made by statements of their own, not the ORM's flush: crud.add_turn and
crud.save_judgement leave the loaded rows holding what the database holds (and nothing to load
again); crud.store_pending_replies stores a turn's replies exactly when flow.where says the
participant waits for them at that turn, and at most once."""

from __future__ import annotations

from typing import Any

from collect_harness import invite
from sqlalchemy import event, inspect
from sqlalchemy.orm import Session

from attunebench.collect import crud
from attunebench.collect.bootstrap import init_database
from attunebench.collect.db import Database, make_engine
from attunebench.collect.flow import Stage, where
from attunebench.collect.generation import Reply
from attunebench.collect.models import ParticipantRow, TurnRow
from attunebench.collect.schemas import JudgeAnswer, MessageAnswer, StateAnswer
from attunebench.collect.study import Study

REPLIES = [
    Reply(position="A", model="mock/a", text="First.", flags=[], latency_ms=5),
    Reply(position="B", model="mock/b", text="Second.", flags=["named"], latency_ms=7),
]


def _participant(session: Session, token: str) -> ParticipantRow:
    found = crud.participant_by_token(session, token)
    assert found is not None
    return found


def _to_message(session: Session, token: str, study: Study) -> None:
    participant = _participant(session, token)
    crud.consent(session, participant, study)
    crud.save_traits(participant, {"age_band": "18-30"})


def _add_turn(session: Session, token: str, text: str) -> None:
    answer = MessageAnswer(message=text, state=StateAnswer(emotions=["sadness"], intensity=3))
    crud.add_turn(session, _participant(session, token), answer, safety_notice=False)


def _stored(database: Database, token: str, turn: int) -> list[tuple[str, str, str]]:
    with database.read() as session:
        replies = _participant(session, token).turns[turn].replies
        return [(r.position, r.model, r.text) for r in replies]


def test_replies_are_stored_once_and_only_while_the_turn_waits(
    database_url: str, study: Study
) -> None:
    init_database(database_url, study, "# toml", None)
    database = Database(make_engine(database_url))
    waiting, gone, early = invite(database_url, 3)
    with database.write() as session:
        for token in (waiting, gone, early):
            _to_message(session, token, study)
        _add_turn(session, waiting, "First message.")
        _add_turn(session, gone, "A message, then gone.")
        _participant(session, gone).left_at = crud.now()
    with database.write() as session:
        stages = {t: where(_participant(session, t), study) for t in (waiting, gone, early)}
        assert stages[waiting].stage == Stage.PENDING and stages[waiting].turn == 0
        assert stages[gone].stage == Stage.LEFT and stages[early].stage == Stage.MESSAGE
        assert not crud.store_pending_replies(session, gone, 0, REPLIES)  # left: not waiting
        assert not crud.store_pending_replies(session, early, 0, REPLIES)  # no such turn
        assert not crud.store_pending_replies(session, waiting, 1, REPLIES)  # another turn
        assert crud.store_pending_replies(session, waiting, 0, REPLIES)
    expected = [("A", "mock/a", "First."), ("B", "mock/b", "Second.")]
    assert _stored(database, waiting, 0) == expected
    assert _stored(database, gone, 0) == []
    with database.write() as session:
        participant = _participant(session, waiting)
        assert where(participant, study).stage == Stage.JUDGE
        assert participant.turns[0].replies[1].flags == ["named"]
        # A second request for the same turn (another tab) stores nothing more.
        assert not crud.store_pending_replies(session, waiting, 0, REPLIES)
    assert _stored(database, waiting, 0) == expected
    database.dispose()


def test_a_later_turn_is_the_one_that_waits(database_url: str, study: Study) -> None:
    """Replies for an earlier turn, once the participant has gone on, are not stored."""
    init_database(database_url, study, "# toml", None)
    database = Database(make_engine(database_url))
    (token,) = invite(database_url)
    with database.write() as session:
        _to_message(session, token, study)
        _add_turn(session, token, "One.")
        # Stored as the old path would have: the turn is then judged and a second one written.
        assert crud.store_pending_replies(session, token, 0, REPLIES)
    with database.write() as session:
        participant = _participant(session, token)
        participant.turns[0].picked_at = crud.now()
        participant.turns[0].continued = "A"
        _add_turn(session, token, "Two.")
    with database.write() as session:
        at = where(_participant(session, token), study)
        assert (at.stage, at.turn) == (Stage.PENDING, 1)
        assert not crud.store_pending_replies(session, token, 0, REPLIES)
        assert crud.store_pending_replies(session, token, 1, REPLIES)
    assert len(_stored(database, token, 0)) == 2 and len(_stored(database, token, 1)) == 2
    database.dispose()


def _columns(turn: TurnRow) -> dict[str, Any]:
    values = {c.key: getattr(turn, c.key) for c in inspect(TurnRow).column_attrs}
    values = {k: crud.aware(v) if hasattr(v, "tzinfo") else v for k, v in values.items()}
    return {**values, "behaviors": [reply.behaviors for reply in turn.replies]}


def test_written_turns_read_as_the_database_holds_them(database_url: str, study: Study) -> None:
    init_database(database_url, study, "# toml", None)
    database = Database(make_engine(database_url))
    (token,) = invite(database_url)
    statements: list[str] = []
    event.listen(database.engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    with database.write() as session:
        _to_message(session, token, study)
    answer = MessageAnswer(
        message="A first message.",
        state=StateAnswer(emotions=["sadness"], intensity=2),
        need_text="To be heard.",
        need_behaviors=("question",),
    )
    with database.write() as session:
        participant = _participant(session, token)
        turn = crud.add_turn(session, participant, answer, safety_notice=True)
        statements.clear()
        written = _columns(turn)
        assert participant.turns[-1] is turn and turn.participant is participant
        assert statements == []  # every column is there: nothing is read back
        assert where(participant, study).stage == Stage.PENDING
    with database.read() as session:
        assert _columns(_participant(session, token).turns[0]) == written
        assert written["safety_notice"] and written["need_behaviors"] == ["question"]
    with database.write() as session:
        assert crud.store_pending_replies(session, token, 0, REPLIES)
    judged = JudgeAnswer(choice="B", strength=2, comment="B asked.", behaviors={"B": ("question",)})
    with database.write() as session:
        participant = _participant(session, token)
        crud.save_judgement(session, participant, judged, study)
        statements.clear()
        written = _columns(participant.turns[0])
        assert statements == [] and where(participant, study).stage == Stage.MESSAGE
    with database.read() as session:
        assert _columns(_participant(session, token).turns[0]) == written
    assert written["choice"] == "B" and written["comment"] == "B asked."
    assert written["behaviors"] == [[], ["question"]] and written["picked_at"] is not None
    assert (written["continued"], written["continued_by"]) == ("B", "pick")
    database.dispose()
