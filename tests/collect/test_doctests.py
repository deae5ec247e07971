"""The examples in the collection modules' docstrings hold."""

from __future__ import annotations

import doctest
from types import ModuleType

import pytest

from attunebench.collect import anonymity, assignment, study, templating


@pytest.mark.parametrize("module", [anonymity, assignment, study, templating])
def test_docstring_examples(module: ModuleType) -> None:
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
