"""The payments list (`collect export --payments FILE`): per arrival from a recruitment
platform, its identifiers as the platform gave them, its state and minutes. The only place the
sealed identifiers are opened.
"""

from __future__ import annotations

import csv
from pathlib import Path

from sqlalchemy.orm import Session

from attunebench.collect.crud import all_participants, sealed_identities
from attunebench.collect.platform import PlatformKeys, state
from attunebench.collect.study import Study
from attunebench.collect.timing import minutes_spent

COLUMNS = ("participant_id", "study_id", "session_id", "state", "minutes", "enrolment")


def payment_rows(session: Session, study: Study, keys: PlatformKeys) -> list[dict[str, str]]:
    """One row per platform arrival, in the order they arrived."""
    sealed = sealed_identities(session)
    rows = []
    for participant in all_participants(session):
        if participant.id not in sealed:
            continue
        arrival = keys.open(sealed[participant.id])
        rows.append(
            {
                "participant_id": arrival.participant,
                "study_id": arrival.study,
                "session_id": arrival.session,
                "state": state(participant, study),
                "minutes": f"{minutes_spent(participant):.1f}",
                "enrolment": participant.enrolment,
            }
        )
    return rows


def write_payments(path: Path, rows: list[dict[str, str]]) -> None:
    """CSV, written whole to a private file (it names people on the platform)."""
    partial = path.with_name(path.name + ".partial")
    with partial.open("w", newline="", encoding="utf-8") as handle:
        partial.chmod(0o600)
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    partial.replace(path)
