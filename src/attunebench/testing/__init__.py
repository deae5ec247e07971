"""Test infrastructure that users can run against their own setups: a fault-injecting server
(`FaultServer`), stand-ins as strict as OpenAI's and Anthropic's APIs (`OpenAIStub`,
`AnthropicStub`), valid answers read off a task prompt (`answer_from_prompt`), outputs built to
break parsers (`HOSTILE_OUTPUTS`), run records compared (`diff_records`), and a corpora mirror
(`python -m attunebench.testing.mirror`).
"""

from attunebench.testing.answers import answer_from_prompt, form_of
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
    "run_records",
]
