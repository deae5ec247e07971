"""Suites: fixed, versioned item sets over the corpora, so numbers from different labs compare.

`load_manifest(name)` reads a shipped manifest; `build.load_suite(name)` builds its data from
the corpora in `ATTUNEBENCH_DATA_DIR`, and `build.write_suite_data` writes it after checking
every digest and item against the manifest.
"""

from attunebench.suite.manifest import (
    Manifest,
    SuiteError,
    load_manifest,
    suite_digest,
    suite_names,
)

__all__ = ["Manifest", "SuiteError", "load_manifest", "suite_digest", "suite_names"]
