"""Flag replies in which a model names itself or its maker.

Participants see the reply as written (editing it would change what they judged), but a pick
made after a model revealed itself is no longer blind, so the reply is flagged
`reveals-identity` in the data and analyses can drop or separate it. Chatbot Arena came to the
same rule after users learned to ask models who they were.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from attunebench.models.registry import SpecError, parse_spec

REVEALS_IDENTITY = "reveals-identity"

MODEL_NAMES = (
    "ChatGPT",
    "GPT-3.5",
    "GPT-4",
    "GPT-4o",
    "GPT-5",
    "GPT",
    "Claude",
    "Gemini",
    "Bard",
    "Llama",
    "Mistral",
    "Mixtral",
    "Qwen",
    "DeepSeek",
    "Copilot",
    "Grok",
    "Gemma",
    "Phi-3",
    "Command R",
    "Ernie Bot",
    "Falcon",
    "Vicuna",
    "Bing Chat",
)
MAKERS = (
    "OpenAI",
    "Anthropic",
    "Google",
    "DeepMind",
    "Meta",
    "Meta AI",
    "Mistral AI",
    "Alibaba",
    "Microsoft",
    "xAI",
    "Cohere",
    "Baidu",
    "Inflection",
    "Hugging Face",
    "Nvidia",
    "Amazon",
    "Apple",
    "01.AI",
    "TII",
)

_INTRO = r"(?:i\s*(?:am|'m|’m)|i\s+was|as|this\s+is|my\s+name\s+is|call\s+me|me,|i'm\s+called)"
_MADE = r"(?:developed|created|made|built|trained|designed|programmed|released)\s+by"


def _alternatives(names: Iterable[str]) -> str:
    ordered = sorted({n for n in names if n}, key=len, reverse=True)
    return "|".join(re.escape(n).replace(r"\ ", r"\s+") for n in ordered)


@lru_cache(maxsize=64)
def _pattern(extra_names: tuple[str, ...]) -> re.Pattern[str]:
    names = _alternatives((*MODEL_NAMES, *extra_names))
    makers = _alternatives(MAKERS)
    # "I am Claude", "as an AI assistant called Claude", "I'm the ChatGPT model".
    filler_words = "an?|the|ai|assistant|model|language|large|chatbot|called|named|known\\s+as"
    filler = rf"(?:(?:{filler_words})\s+){{0,4}}"
    return re.compile(
        rf"\b{_INTRO}\s+{filler}(?:{names})(?![\w-])"
        rf"|\b{_MADE}\s+(?:the\s+)?(?:{makers})(?![\w-])"
        rf"|\b(?:{makers})(?:'s|’s)\s+(?:[\w-]+\s+){{0,3}}?(?:model|assistant|ai|chatbot)\b",
        re.IGNORECASE,
    )


def pool_names(specs: Iterable[str]) -> tuple[str, ...]:
    """Names a pool's own models might use for themselves: each spec's model part and stem."""
    names: set[str] = set()
    for spec in specs:
        try:
            _, model = parse_spec(spec)
        except SpecError:
            continue
        last = model.rsplit("/", 1)[-1]
        names.add(last)
        stem = re.split(r"[-_:.]", last)[0]
        if len(stem) >= 4:
            names.add(stem)
    return tuple(sorted(names))


def reveals_identity(text: str, pool: Iterable[str] = ()) -> bool:
    """Whether a reply names a model or maker as itself.

    >>> reveals_identity("As ChatGPT, I cannot feel, but I hear you.")
    True
    >>> reveals_identity("I am an AI developed by OpenAI.")
    True
    >>> reveals_identity("That sounds hard. Did you talk to your friend Claude about it?")
    False
    """
    return _pattern(pool_names(pool)).search(text) is not None


def reply_flags(text: str, pool: Iterable[str] = ()) -> list[str]:
    return [REVEALS_IDENTITY] if reveals_identity(text, pool) else []
