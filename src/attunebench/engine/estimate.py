"""What a run may cost at most, estimated before its first call (`run --max-cost USD`).

Every planned call is priced at its most (`engine.spend.call_cost`); each judged item adds one
call per judge, its prompt the subject's with the subject's allowance as the reply. The cache
is not consulted, so the estimate is an upper bound on what the calls' outputs can cost.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from attunebench.engine.caller import BoundModel, merge_params
from attunebench.engine.scheduler import Unit
from attunebench.engine.spend import CHARS_PER_TOKEN, call_cost
from attunebench.models.base import Message
from attunebench.models.registry import parse_spec
from attunebench.tasks.base import AnswerMode, PlanError

PAID = frozenset({"openai", "anthropic"})


def unpriced(bound: Mapping[str, BoundModel]) -> str | None:
    """Why a cap cannot hold: a paid provider's model whose entry sets no price; None."""
    for name, model in bound.items():
        entry = model.entry
        if parse_spec(entry.spec)[0] in PAID and "price" not in entry.model_fields_set:
            return (
                f"--max-cost needs a price for every paid model: {name} ({entry.spec}) sets "
                "none; give its models-file entry price = { input = ..., output = ... } "
                "(USD per million tokens; zeros for a server of your own)"
            )
    return None


def estimate(
    units: Iterable[Unit], bound: Mapping[str, BoundModel], judges: Sequence[str]
) -> dict[str, float]:
    """Per model, the most the planned calls can cost, in USD (judges' calls included)."""
    costs: defaultdict[str, float] = defaultdict(float)
    for unit in units:
        model = bound[unit.model]
        mode: AnswerMode = "choice" if model.choosing else "generate"
        for task, item in unit.work:
            queries = task.queries(item, mode if mode in task.answer_modes else "generate")
            for query in queries:
                asked = bound[query.model or unit.model]
                form = query.choice if asked.choosing else None
                messages = list(form.messages) if form is not None else query.messages
                params = merge_params(asked.entry.params, query.params)
                costs[asked.entry.name] += call_cost(asked, messages, params)
                if not task.needs_judge:
                    continue
                reply = "x" * model.provider.call_budget(params) * CHARS_PER_TOKEN
                for judge in judges:
                    judged = [*query.messages, Message("assistant", reply)]
                    costs[judge] += call_cost(bound[judge], judged, bound[judge].entry.params)
    return dict(costs)


def check_estimate(cap: float, spent: float, by_model: Mapping[str, float]) -> None:
    """Refuse, in one line, a run whose estimate (with what it spent already) passes `cap`."""
    planned = sum(by_model.values())
    if spent + planned <= cap:
        return
    name, most = max(by_model.items(), key=lambda pair: pair[1])
    before = f" and ${spent:,.4f} spent already" if spent else ""
    raise PlanError(
        f"estimated cost ${spent + planned:,.4f} (every planned call at its prompt and whole "
        f"output allowance{before}) is over --max-cost ${cap:,.4f}; the largest share: {name} "
        f"${most:,.4f} ({most / planned:.0%}); nothing was called"
    )
