"""What a benchmark script needs that a machine may lack, and how it says so.

A script that lacks something (the shared corpora, a PostgreSQL server it may restart,
llama.cpp's server, a model file) prints one line naming it on stderr and exits with `SKIPPED`
(77, the "skipped" status of automake's test harness). tests/benchmarks reads that as a skip
with the line as its reason, and as a failure where the thing is required (`required`):
`.ci/run` sets ATTUNEBENCH_REQUIRE_SHARED_DATA for the corpora, as for every test that reads
them, and `REQUIRE_VARIABLE` for the rest.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from attunebench.models.embeddings import SentenceEncoder
    from attunebench.models.local_models import LocalModel

SKIPPED = 77
# Under CI a missing prerequisite is a failure: the shared corpora by the tests' own variable,
# everything else by this one.
REQUIRE_VARIABLE = "ATTUNEBENCH_REQUIRE_PREREQUISITES"
SHARED_DATA_VARIABLE = "ATTUNEBENCH_REQUIRE_SHARED_DATA"
MISSING, MISSING_DATA = "missing prerequisite: ", "missing shared data: "


def missing(what: str, kind: str = MISSING) -> NoReturn:
    """Stop the script: `what` is missing (one line, on stderr)."""
    sys.stderr.write(f"{kind}{what}\n")
    sys.stderr.flush()
    raise SystemExit(SKIPPED)


def required(line: str) -> bool:
    """Whether the missing thing a script's last line names is required here (CI)."""
    variable = SHARED_DATA_VARIABLE if line.startswith(MISSING_DATA) else REQUIRE_VARIABLE
    return os.environ.get(variable) == "1"


def shared_data(path: Path) -> Path:
    """The shared corpora folder, or stop."""
    if not path.is_dir():
        missing(f"the corpora at {path} (set ATTUNEBENCH_DATA_DIR)", MISSING_DATA)
    return path


def postgres_url(url: str | None) -> str:
    """A PostgreSQL server's URL, or stop."""
    if not url:
        missing("a PostgreSQL server (set ATTUNEBENCH_TEST_POSTGRES_URL or --postgres-url)")
    return url


def local_postgres_admin() -> None:
    """Debian's cluster tools, run by root or postgres (to restart the server), or stop."""
    if shutil.which("pg_ctlcluster") is None or shutil.which("pg_lsclusters") is None:
        missing("Debian's PostgreSQL cluster tools (pg_ctlcluster, pg_lsclusters)")
    if os.geteuid() != 0 and os.environ.get("USER") != "postgres":
        missing("the right to restart PostgreSQL (run as root or postgres)")


def llama_server() -> Path:
    """llama.cpp's `llama-server`, or stop."""
    from attunebench.models.llamacpp_server import cpp_server

    found = cpp_server()
    if found is None:
        missing("llama.cpp's llama-server (make llama-server, or set ATTUNEBENCH_LLAMA_SERVER)")
    return found


def local_model(model: LocalModel) -> Path:
    """A local model's verified GGUF file, or stop."""
    from attunebench.models.local_models import LocalModelError

    try:
        return model.path()
    except LocalModelError as error:
        missing(f"the {model.name} model file: {error}")


def encoder(name: str | None = None) -> SentenceEncoder:
    """A sentence encoder (default all-MiniLM-L6-v2's packaged copy), or stop."""
    from attunebench.models.embeddings import EncoderUnavailableError, load_encoder

    try:
        return load_encoder(name)
    except EncoderUnavailableError as error:
        missing(f"the sentence encoder {name or 'all-MiniLM-L6-v2'}: {error}")


def encoder_files(name: str | None = None) -> Path:
    """A sentence encoder's local folder (not loaded: a script whose subprocesses load it),
    or stop."""
    from attunebench.models.embeddings import resolve_encoder_path

    found = Path(resolve_encoder_path(name))
    if not found.is_dir():
        missing(
            f"the sentence encoder {name or 'all-MiniLM-L6-v2'} (pip install 'attunebench[ml]')"
        )
    return found
