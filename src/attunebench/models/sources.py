"""Where a per-model fact was read: a documentation page (or an SDK file) and the day. Every
entry of the fallback tables and the stand-ins' rules names its sources, and a test refuses a
fact with none (`tests/models/test_documented.py`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

READ_ON: Final = re.compile(r"\d{4}-\d{2}-\d{2}")
# An address, or an SDK's file named by its package, version and path.
PAGE: Final = re.compile(r"(https?://|[a-z][\w.-]*\.[a-z]{2,}/)\S+|[\w-]+ SDK [\d.]+ \S+\.py")


@dataclass(frozen=True, slots=True)
class Citation:
    """A page (or an SDK file) and the day it was read, `YYYY-MM-DD`."""

    page: str
    read: str

    def problem(self) -> str | None:
        """What makes this no citation (no page, no date), or None."""
        if not PAGE.fullmatch(self.page):
            return f"{self.page!r} is not a page or an SDK file"
        if not READ_ON.fullmatch(self.read):
            return f"{self.read!r} is not a date read (YYYY-MM-DD)"
        return None
