"""Test infrastructure that users can run against their own setups.

- `FaultServer`: a local OpenAI-compatible server that fails a planned share of calls (429s,
  5xx, timeouts, dropped connections, malformed and truncated bodies) and counts successful
  calls per request, to check a client's retries, failures and resume.
- `answer_from_prompt`: valid answers read off a rendered task prompt.
- `HOSTILE_OUTPUTS`: model outputs built to break parsers and judges.
- `comparable` / `diff_records`: run records without the fields that vary between runs.
"""

from attunebench.testing.answers import answer_from_prompt, menu_labels
from attunebench.testing.fault_server import FaultServer
from attunebench.testing.faults import FAULT_KINDS, FaultCounts, FaultKind, FaultPlan, request_key

__all__ = [
    "FAULT_KINDS",
    "FaultCounts",
    "FaultKind",
    "FaultPlan",
    "FaultServer",
    "answer_from_prompt",
    "menu_labels",
    "request_key",
]
