"""Simulated users, checked against the people they stand in for.

`validate` asks a simulated user (any model) what the real people of a dataset said of
themselves, and writes how far it stands in for them to `simulators.json`: replay fidelity
per task (`replay`), distributional realism (`realism`), ranking fidelity on the models of
other runs (`ranking`), its run-to-run noise (`noise_floor`) and its leaks (`leaks`). See
docs/simulators.md.
"""

from attunebench.simulators.schema import SIMULATORS_FILE, SIMULATORS_FORMAT, SimulatorsReport
from attunebench.simulators.session import Sampling
from attunebench.simulators.validate import Plan, SimulatorError, validate

__all__ = [
    "SIMULATORS_FILE",
    "SIMULATORS_FORMAT",
    "Plan",
    "Sampling",
    "SimulatorError",
    "SimulatorsReport",
    "validate",
]
