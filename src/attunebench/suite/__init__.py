"""Suites: fixed, versioned item sets over the corpora, so numbers from different labs compare
(`manifest` reads them, `build` builds their data from the corpora).
"""

from attunebench.suite.manifest import (
    Manifest,
    SuiteError,
    load_manifest,
    suite_digest,
    suite_names,
)

__all__ = ["Manifest", "SuiteError", "load_manifest", "suite_digest", "suite_names"]
