"""Choice mode, shared by the providers that give option probabilities.

A choice question ends with its options as single-character keys and "Answer: ("; the answer
is each key's probability as the next token. A model without a chat template reads the
question as plain text (`completion_prompt`), each key scored as its continuation, as
lm-evaluation-harness scores an option. A key missing from a server's top-k gets the floor,
the smallest probability the server did return, and is listed in `floored`. Tokens that differ
by space or case, or that write the parenthesis again ("(A"), count for the same key: chat
models often start their own turn that way (Qwen2.5-Coder 1.5B put 0.85 of its first token's
mass on "(B", "(C", ...). The probabilities are renormalised over the keys."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from attunebench.models.base import ChoiceOutput, Message

CONTINUATION_PREFIX = ""  # a key follows "Answer: (" directly: lm-eval's target_delimiter


def completion_prompt(messages: Sequence[Message]) -> str:
    """The messages as one plain-text prompt, for a model with no chat template."""
    return "\n\n".join(message.content.strip() for message in messages)


def prefilled(messages: Sequence[Message]) -> list[Message]:
    """The messages of a choice question with the answer's opening (the last line of the last
    message, "Answer: (") moved into an assistant turn that the model continues.

    >>> [(m.role, m.content) for m in prefilled([Message("user", "Pick one.\\nAnswer: (")])]
    [('user', 'Pick one.'), ('assistant', 'Answer: (')]
    """
    *before, last = messages
    question, _, opening = last.content.rpartition("\n")
    if not question or not opening.endswith("("):
        return list(messages)
    return [*before, Message(last.role, question.rstrip()), Message("assistant", opening)]


def _key_of(token: str, keys: Sequence[str]) -> str | None:
    stripped = token.strip()
    if stripped.startswith("(") and stripped != "(":
        stripped = stripped[1:].strip()
    if stripped in keys:
        return stripped
    folded = {key.lower(): key for key in keys}
    return folded.get(stripped.lower()) if len(folded) == len(keys) else None


def from_top_logprobs(
    top: Mapping[str, float],
    keys: Sequence[str],
    *,
    input_tokens: int = 0,
    output_tokens: int = 0,
) -> ChoiceOutput:
    """The keys' probabilities from a server's top-k next-token log probabilities."""
    found: dict[str, float] = dict.fromkeys(keys, 0.0)
    seen: set[str] = set()
    for token, logprob in top.items():
        key = _key_of(token, keys)
        if key is not None:
            found[key] += math.exp(logprob)
            seen.add(key)
    floor = min((math.exp(lp) for lp in top.values()), default=1.0)
    floored = tuple(key for key in keys if key not in seen)
    for key in floored:
        found[key] = floor
    return ChoiceOutput(
        probabilities=normalised(found),
        floored=floored,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
    )


def normalised(weights: Mapping[str, float]) -> dict[str, float]:
    total = sum(weights.values())
    if total <= 0:
        return {key: 1.0 / len(weights) for key in weights}
    return {key: value / total for key, value in weights.items()}


def from_loglikelihoods(loglikelihoods: Mapping[str, float]) -> dict[str, float]:
    """The keys' probabilities from each key's exact log-likelihood as the continuation."""
    top = max(loglikelihoods.values())
    return normalised({key: math.exp(value - top) for key, value in loglikelihoods.items()})
