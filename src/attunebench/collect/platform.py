"""Recruitment-platform links (`[enrolment.platform]`): the identifiers a platform such as
Prolific opens the study link with, kept only to match a payment to a participant and refuse
the same account a second attempt: sealed (Fernet) under a key derived from the study's secret,
opened only by `collect export --payments`, with a keyed hash of the participant id beside."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from cryptography.fernet import Fernet, InvalidToken

from attunebench.collect.crud import aware, now
from attunebench.collect.models import ParticipantRow
from attunebench.collect.schemas import State
from attunebench.collect.study import Study

# What a platform may put in a link: printable ASCII without spaces (Prolific ids are 24 hex
# digits, MTurk worker ids 12-14 letters and digits), bounded.
_IDENTIFIER = re.compile(r"^[\x21-\x7e]{1,128}$")


class ArrivalError(ValueError):
    """A platform link without its participant identifier, or with one no platform makes."""


@dataclass(frozen=True, slots=True)
class Arrival:
    """The identifiers a platform gave one arrival, as it gave them."""

    participant: str
    study: str = ""
    session: str = ""


def arrival_from(values: Mapping[str, str], names: Mapping[str, str]) -> Arrival:
    """The arrival whose identifiers `values` holds under `names` (role -> key).

    >>> arrival_from({"PROLIFIC_PID": "5f3a", "STUDY_ID": "s1"},
    ...              {"participant": "PROLIFIC_PID", "study": "STUDY_ID"})
    Arrival(participant='5f3a', study='s1', session='')
    """
    given = {role: values.get(key, "").strip() for role, key in names.items()}
    if not given.get("participant"):
        raise ArrivalError("the link does not say who you are on the recruitment platform")
    for role, value in given.items():
        if value and not _IDENTIFIER.match(value):
            raise ArrivalError(f"the link's {role} identifier is not one a platform makes")
    return Arrival(**given)


class PlatformKeys:
    """The sealing key and the hashing key, both derived from the study's secret."""

    def __init__(self, secret: str) -> None:
        def derive(purpose: str) -> bytes:
            return hashlib.sha256(f"attunebench-platform-{purpose}\x00{secret}".encode()).digest()

        self._fernet = Fernet(base64.urlsafe_b64encode(derive("seal")))
        self._hash_key = derive("hash")

    def account_hash(self, arrival: Arrival) -> str:
        """Keyed hash of the platform's participant id: the same account, the same hash."""
        message = arrival.participant.encode()
        return hmac.new(self._hash_key, message, hashlib.sha256).hexdigest()

    def seal(self, arrival: Arrival) -> str:
        plain = json.dumps([arrival.participant, arrival.study, arrival.session])
        return self._fernet.encrypt(plain.encode()).decode("ascii")

    def open(self, sealed: str) -> Arrival:
        """The identifiers back; ValueError if sealed under another secret."""
        try:
            participant, study, session = json.loads(self._fernet.decrypt(sealed.encode()))
        except InvalidToken:
            raise ValueError("identifiers sealed under another secret") from None
        return Arrival(participant, study, session)


def state(participant: ParticipantRow, study: Study) -> State:
    """Where a participant stands for the platform. Declining consent and leaving through the
    support page are screened out too: the platform pays or releases them the same way."""
    if participant.finished_at is not None:
        return "finished"
    if participant.screened_out_at or participant.declined_at or participant.left_at:
        return "screened out"
    platform = study.enrolment.platform
    timeout = platform.timeout_minutes if platform and participant.platform_hash else None
    waited = now() - aware(participant.created_at)
    if timeout is not None and waited > timedelta(minutes=timeout):
        return "timed out"
    return "started"
