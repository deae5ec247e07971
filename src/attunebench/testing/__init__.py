"""Test infrastructure that users can run against their own setups: a fault-injecting server
(`FaultServer`), stand-ins as strict as OpenAI's and Anthropic's APIs (`OpenAIStub`,
`AnthropicStub`), valid answers read off a task prompt (`answer_from_prompt`), and a corpora
mirror (`python -m attunebench.testing.mirror`).
"""

from attunebench.testing.answers import answer_from_prompt, form_of
from attunebench.testing.anthropic_stub import AnthropicStub
from attunebench.testing.fault_server import FAULT_KINDS, FaultPlan, FaultServer
from attunebench.testing.openai_stub import OpenAIStub

__all__ = [
    "FAULT_KINDS",
    "AnthropicStub",
    "FaultPlan",
    "FaultServer",
    "OpenAIStub",
    "answer_from_prompt",
    "form_of",
]
