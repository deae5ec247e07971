"""The type of the `validated` fixture, importable by name (a test cannot import `conftest`:
every test folder has one, and the first one loaded takes the name)."""

from __future__ import annotations

from collections.abc import Callable

from attunebench.simulators import SimulatorsReport

Validate = Callable[..., SimulatorsReport]
