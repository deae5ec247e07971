"""Choice mode, shared by the providers that give option probabilities.

A choice question (`tasks.base.ChoiceForm`) ends with its options as single-character keys in
parentheses and "Answer: ("; the answer is the probability of each key as the model's next
token (right after the parenthesis, so no tokenizer puts a space first).

- A model without a chat template reads the question as plain text, the messages' contents
  joined by blank lines (`completion_prompt`), and each key is scored as its continuation, as
  lm-evaluation-harness scores a multiple-choice option (with `target_delimiter` "").
- A server that returns only the top-k next tokens (`top_logprobs`) may leave a key out;
  that key gets the floor, the smallest probability the server did return (it can be no more
  likely than that), and is listed in `floored`. Tokens that differ only by surrounding space
  or case (" A", "A", "a") count for the same key, and so does a token that writes the
  opening parenthesis again before the key ("(A"): chat models answering in a turn of their
  own often start it that way (Qwen2.5-Coder 1.5B put 0.85 of its first token's mass on
  "(B", "(C", ... for a question whose prompt ended in "Answer: ("), and reading only the bare
  keys would score what is left, mostly noise.
- A chat model whose server continues a final assistant message (llama.cpp's, vLLM's) is asked
  with the answer's opening in its own turn (`prefilled`): the question in the user's turn,
  "Answer: (" as the start of the assistant's, so the next token is the key itself rather than
  whatever a reply usually starts with.

The probabilities are renormalised over the keys, so they sum to 1.
"""

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
    latency_s: float = 0.0,
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
        latency_s=latency_s,
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
