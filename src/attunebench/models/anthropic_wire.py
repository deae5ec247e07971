"""A Messages API reply read into a `ModelOutput` (live, or a batch's result): the answer, the
thinking kept apart, and the tokens: thinking (`output_tokens_details.thinking_tokens`),
input read from the prompt cache (`cache_read_input_tokens`) and written to it
(`cache_creation_input_tokens`, of which `cache_creation.ephemeral_1h_input_tokens` are kept
an hour), all three caches' tokens counted as input, which `usage.input_tokens` leaves out.
"""

from __future__ import annotations

from typing import Any

from attunebench.models.base import ModelOutput


def message_output(reply: Any, latency_s: float, *, batched: bool = False) -> ModelOutput:
    """A ModelOutput from a Messages API reply: the text blocks are the answer; thinking
    blocks are kept apart (a redacted one as a marker: its content is encrypted; an omitted
    one, `display: "omitted"`, has no text)."""
    text, thinking = [], []
    for block in reply.content:
        if block.type == "text":
            text.append(block.text)
        elif block.type == "thinking" and block.thinking:
            thinking.append(block.thinking)
        elif block.type == "redacted_thinking":
            thinking.append("[redacted thinking]")
    usage = reply.usage
    cached = getattr(usage, "cache_read_input_tokens", None) or 0
    written = getattr(usage, "cache_creation_input_tokens", None) or 0
    creation = getattr(usage, "cache_creation", None)
    hour = int(getattr(creation, "ephemeral_1h_input_tokens", 0) or 0)
    details = getattr(usage, "output_tokens_details", None)
    return ModelOutput(
        text="".join(text),
        input_tokens=usage.input_tokens + cached + written,  # input_tokens leaves the cache out
        output_tokens=usage.output_tokens,
        reasoning_tokens=int(getattr(details, "thinking_tokens", 0) or 0),
        cached_input_tokens=cached,
        cache_write_tokens=written,
        cache_write_1h_tokens=min(hour, written),
        latency_s=latency_s,
        finish_reason=reply.stop_reason,
        raw={"id": reply.id, "model": reply.model},
        thinking="\n\n".join(thinking) or None,
        batched=batched,
    )
