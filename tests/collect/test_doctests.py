"""The examples in the collection modules' docstrings hold."""

from __future__ import annotations

import doctest
from types import ModuleType

import pytest

from attunebench.collect import (
    anonymity,
    assignment,
    htmlpage,
    persona,
    security,
    study,
    templating,
    wording,
)


@pytest.mark.parametrize(
    "module", [anonymity, assignment, htmlpage, persona, security, study, templating, wording]
)
def test_docstring_examples(module: ModuleType) -> None:
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
