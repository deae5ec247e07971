"""Test infrastructure that users can run against their own setups.

- `FaultServer`: a local OpenAI-compatible server that fails a planned share of calls (429s,
  5xx, timeouts, dropped connections, malformed and truncated bodies) and counts successful
  calls per request, to check a client's retries, failures and resume.
- `OpenAIStub`, `AnthropicStub`: local stand-ins for OpenAI's API (chat completions, files,
  batches) and Anthropic's (messages, message batches), as strict as the real ones: each with
  its own table of models (`openai_rules`, `anthropic_rules`), the APIs' error bodies,
  logprobs, the version header, shuffled batch output, and quota, permission and
  enqueued-token failures on demand; they count live calls and batched requests.
- `answer_from_prompt`: valid answers read off a rendered task prompt; `form_of`, the answer
  form of a hint kind, for hints made by hand.
- `HOSTILE_OUTPUTS`: model outputs built to break parsers, record writers and judges.
- `comparable` / `diff_records`: run records without the fields that vary between runs.
- `python -m attunebench.testing.mirror`: a corpora folder served as `data fetch --mirror`
  reads it (see the data docs).
"""

from attunebench.models.batching import request_key
from attunebench.testing.answers import answer_from_prompt, form_of, menu_labels
from attunebench.testing.anthropic_stub import AnthropicStub
from attunebench.testing.fault_server import FaultServer
from attunebench.testing.faults import FAULT_KINDS, FaultCounts, FaultKind, FaultPlan
from attunebench.testing.hostile import HOSTILE_OUTPUTS, INJECTION, Hostile
from attunebench.testing.openai_stub import OpenAIStub
from attunebench.testing.records import comparable, diff_records, run_records

__all__ = [
    "FAULT_KINDS",
    "HOSTILE_OUTPUTS",
    "INJECTION",
    "AnthropicStub",
    "FaultCounts",
    "FaultKind",
    "FaultPlan",
    "FaultServer",
    "Hostile",
    "OpenAIStub",
    "answer_from_prompt",
    "comparable",
    "diff_records",
    "form_of",
    "menu_labels",
    "request_key",
    "run_records",
]
