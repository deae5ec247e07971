"""Simulated users, checked against the people they stand in for (`simulators.json`: replay,
realism, ranking, noise floor and leaks); see docs/simulators.md.
"""

from attunebench.simulators.schema import SIMULATORS_FILE, SimulatorsReport
from attunebench.simulators.session import Plan, Sampling
from attunebench.simulators.validate import SimulatorError, validate

__all__ = [
    "SIMULATORS_FILE",
    "Plan",
    "Sampling",
    "SimulatorError",
    "SimulatorsReport",
    "validate",
]
