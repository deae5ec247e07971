"""`attunebench collect simulate`: scripted participants (persona.py) take a running study over
HTTP, through its open link, as simulated participants."""

from __future__ import annotations

import asyncio
import random
import re
from dataclasses import dataclass, field
from itertools import chain, cycle, islice
from urllib.parse import urlencode

import httpx

from attunebench.collect.htmlpage import Form, Page, parse_page
from attunebench.collect.persona import ClickThrough, FirstPick, Persona

RETRIES = 3  # replies that fail to generate are asked for again this often, then given up
MAX_TURNS = 100  # the longest conversation a study file allows


class SimulationError(RuntimeError):
    """The app answered in a way no participant could go on from; the message says where."""


@dataclass
class Outcome:
    enrolled: int = 0
    finished: int = 0
    screened_out: int = 0
    turns: int = 0
    # Finished participants of a platform study who arrived a second time with the same
    # account, and were refused.
    refused_again: int = 0
    # The personal links of the participants who clicked through (`careless`): the planted
    # truth the study's careless marks are checked against.
    careless_links: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _join_base(url: str) -> tuple[str, str]:
    found = re.match(r"^(https?://[^/]+)(/join/[A-Za-z0-9_-]+)/?$", url.strip())
    if found is None:
        raise SimulationError(
            f"{url} is not a study's open link (http://host/join/...: `collect status` shows it)"
        )
    return found.group(1), found.group(2)


class Walk:
    """One simulated participant, from its personal link to the thank-you page: its own `own`
    messages, then more where the study needs more turns before it may end."""

    def __init__(self, client: httpx.AsyncClient, persona: Persona, path: str, own: int) -> None:
        self.client, self.persona, self.path, self.own = client, persona, path, own
        self.written = 0
        # Each turn's first answers, for the questions asked again (retest probes).
        self.states: dict[int, dict[str, list[str]]] = {}
        self.picks: dict[int, FirstPick] = {}

    def form(self, page: Page, action: str) -> Form:
        form = page.form(f"/{action}")
        if form is None:
            raise SimulationError(f"{self.path}: the {page.step} page has no {action} form")
        return form

    async def post(self, action: str, page: Page, data: dict[str, list[str]]) -> httpx.Response:
        form = self.form(page, action)
        body = {**{k: [v] for k, v in form.hidden().items()}, **data}
        for _ in range(10):
            response = await self.client.post(form.action, data=body)
            if response.status_code != 429:
                break
            await asyncio.sleep(float(response.headers.get("retry-after", "5")))
        if response.status_code == 422:
            raise SimulationError(f"{self.path}: {action} answer refused: {response.text[:300]}")
        if response.status_code != 303:
            raise SimulationError(f"{self.path}: {action} answered {response.status_code}")
        return response

    async def page(self) -> Page:
        response = await self.client.get(self.path)
        if response.status_code != 200:
            raise SimulationError(f"{self.path}: page answered {response.status_code}")
        return parse_page(response.text)

    async def run(self) -> None:
        retries = 0
        while True:
            page = await self.page()
            stage = (page.step or "").partition(":")[0]
            if stage == "done":
                return
            if stage == "consent":
                await self.post("consent", page, {"agree": ["yes"]})
            elif stage == "traits":
                data: dict[str, list[str]] = {}
                self.persona.answer_questions(self.form(page, "traits"), data)
                await self.post("traits", page, data)
            elif stage == "message":
                await self.message(page)
            elif stage == "pending":
                retries += 1
                if retries > RETRIES:
                    raise SimulationError(f"{self.path}: the replies never came")
                await self.post("generate", page, {})
            elif stage == "judge":
                data = self.persona.judge(self.form(page, "judge"), page.replies)
                self.picks[_turn(page)] = FirstPick(data["choice"][0], dict(page.replies))
                await asyncio.sleep(self.persona.think_s)
                await self.post("judge", page, data)
                retries = 0
            elif stage == "probe":
                await self.probe(page)
            elif stage == "survey":
                await self.post("survey", page, self.persona.survey(self.form(page, "survey")))
            else:
                raise SimulationError(f"{self.path}: unexpected page {page.step!r}")

    async def message(self, page: Page) -> None:
        messages = self.persona.messages
        if self.written >= self.own and page.form("/end") is not None:
            await self.post("end", page, {})
            return
        form = self.form(page, "message")
        limit = int(form.named("message")[0].attrs.get("maxlength", "2000"))
        text = messages[self.written % len(messages)][:limit]
        data = self.persona.message(form, text)
        self.states[_turn(page)] = data
        await asyncio.sleep(self.persona.think_s)
        await self.post("message", page, data)
        self.written += 1

    async def probe(self, page: Page) -> None:
        """An earlier turn's question, asked again: answered from this walk's first answer."""
        form = page.form("/probe")
        turn = _turn(page)
        if form is None or (turn not in self.states and turn not in self.picks):
            raise SimulationError(f"{self.path}: a question of turn {turn} it never answered")
        if form.has("choice"):
            data = self.persona.pick_again(page.replies, self.picks[turn])
        else:
            data = self.persona.state_again(form, self.states[turn])
        await self.post("probe", page, data)


def _turn(page: Page) -> int:
    """The turn a page is about, from its step (`judge:3`, `probe:1:pick`)."""
    return int((page.step or "").split(":")[1])


def platform_identifiers(params: list[str], seed: int, n: int) -> dict[str, str]:
    """The identifiers a recruitment platform would put in participant `n`'s link: its
    participant id (24 hex digits, as Prolific's), the study's, and the session's."""
    rng = random.Random(f"{seed}:{n}:platform")
    made = [f"{rng.getrandbits(96):024x}", f"{seed:012x}study", f"{rng.getrandbits(96):024x}"]
    return dict(zip(params, made, strict=False))


async def _arrive(
    client: httpx.AsyncClient, join: str, seed: int, n: int
) -> tuple[str, Page, bool] | None:
    """The open link as participant `n` reaches it (with a platform's identifiers where the
    study recruits on one): the address it opened, the page, and whether it came with them;
    None if the open link refused the platform's account (it took part before)."""
    page = parse_page((await client.get(join)).text)
    if not page.platform_params:
        return join, page, False
    opened = f"{join}?{urlencode(platform_identifiers(page.platform_params, seed, n))}"
    response = await client.get(opened)
    if response.status_code == 409:
        return None
    return opened, parse_page(response.text), True


async def _enrol(
    client: httpx.AsyncClient, join: str, seed: int, n: int
) -> tuple[str | None, bool]:
    """A personal link through the open link (None when screened out), and whether it came
    from a platform. SimulationError if the study is full."""
    arrived = await _arrive(client, join, seed, n)
    if arrived is None:
        raise SimulationError(f"{join}: participant {n}'s account was refused at once")
    opened, page, by_platform = arrived
    form = page.form(join)
    if form is None:
        raise SimulationError(f"{opened}: no enrolment form (is the link right?)")
    data = {"simulated": ["1"], **{k: [v] for k, v in form.hidden().items()}}
    screening = form.values("screening")
    if screening:
        data["screening"] = screening[:1]
    response = await client.post(join, data=data)
    if response.status_code == 409:
        raise SimulationError("the study is full (its enrolment cap is reached)")
    if response.status_code == 200:
        return None, by_platform  # the screening question turned the participant away
    if response.status_code != 303:
        raise SimulationError(f"{join}: enrolment answered {response.status_code}")
    return response.headers["location"], by_platform


def _messages(usable: list[list[str]], first: int) -> list[str]:
    """A conversation's messages, then those of the conversations after it (round again from
    the first), as many as the most turns a study allows."""
    conversations = islice(cycle(usable), first, None)
    return list(islice(chain.from_iterable(conversations), MAX_TURNS))


async def simulate(
    url: str,
    participants: int,
    seed: int,
    conversations: list[list[str]],
    concurrency: int = 4,
    retest_noise: float = 0.0,
    careless: float = 0.0,
    think_s: float = 0.0,
) -> Outcome:
    """Run `participants` scripted participants through the study at `url` (its open link);
    `careless` of them click through (persona.ClickThrough)."""
    base, join = _join_base(url)
    outcome = Outcome()
    gate = asyncio.Semaphore(concurrency)
    usable = [c for c in conversations if c]
    if not usable:
        raise SimulationError("no messages to write: the corpus is empty")

    async def one(n: int, client: httpx.AsyncClient) -> None:
        rng = random.Random(f"{seed}:{n}")
        first = rng.randrange(len(usable))
        messages = _messages(usable, first)
        async with gate:
            path, by_platform = await _enrol(client, join, seed, n)
            if path is None:
                outcome.screened_out += 1
                return
            outcome.enrolled += 1
            retest_rng = random.Random(f"{seed}:{n}:retest")
            clicks = random.Random(f"{seed}:{n}:careless").random() < careless
            kind = ClickThrough if clicks else Persona
            persona = kind(rng, messages, retest_noise, retest_rng, think_s)
            walk = Walk(client, persona, path, own=len(usable[first]))
            if clicks:
                outcome.careless_links.append(path)
            await walk.run()
            outcome.finished += 1
            outcome.turns += walk.written
            if by_platform:
                if await _arrive(client, join, seed, n) is not None:
                    raise SimulationError(f"{path}: a second arrival of its account was let in")
                outcome.refused_again += 1

    timeout = httpx.Timeout(300.0)
    async with httpx.AsyncClient(base_url=base, timeout=timeout) as client:
        results = await asyncio.gather(
            *(one(n, client) for n in range(participants)), return_exceptions=True
        )
    for result in results:
        if isinstance(result, SimulationError):
            outcome.problems.append(str(result))
        elif isinstance(result, BaseException):
            raise result
    return outcome
