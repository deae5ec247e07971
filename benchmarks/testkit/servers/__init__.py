"""Local servers that play the outside world for the tests: a fault-injecting server
(`FaultServer`), stand-ins as strict as OpenAI's and Anthropic's APIs (`OpenAIStub`,
`AnthropicStub`), valid answers read off a task prompt (`answer_from_prompt`), and a corpora
mirror (`python -m testkit.servers.mirror`). No command runs them, so they live beside the tests,
not in the package; from a checkout, `PYTHONPATH=benchmarks` makes them importable.
"""

from testkit.servers.answers import answer_from_prompt, form_of
from testkit.servers.anthropic_stub import AnthropicStub
from testkit.servers.fault_server import FAULT_KINDS, FaultPlan, FaultServer
from testkit.servers.openai_stub import OpenAIStub

__all__ = [
    "FAULT_KINDS",
    "AnthropicStub",
    "FaultPlan",
    "FaultServer",
    "OpenAIStub",
    "answer_from_prompt",
    "form_of",
]
