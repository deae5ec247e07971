"""Coverage-guided fuzzing (atheris/libFuzzer) of the validator and every importer.

`python atheris_fuzz.py WORKDIR CORPUS [libFuzzer flags]`: each input's first byte picks the
target (the validator, or one importer's corpus), the rest is the file's bytes. CORPUS starts
from the valid seeds (the sample dataset and each importer's seed file) and gathers the inputs
libFuzzer finds new coverage with. Anything but a
located, typed error, or a failure that leaves a file behind, raises and stops the fuzzer with
a non-zero status and the input that did it.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import atheris

with atheris.instrument_imports(include=["attunebench"]):
    from importer_seeds import CASES

    from attunebench.data.importers import ImportFormatError, ImportOptionError, import_to_file
    from attunebench.data.sample import sample_path
    from attunebench.data.validate import DatasetError, load_validated

VALIDATOR = len(CASES)  # the target byte after the importers'


def _reset(folder: Path) -> Path:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def _validator(work: Path, content: bytes) -> None:
    path = _reset(work / "data") / "data.jsonl"
    path.write_bytes(content)
    try:
        load_validated(path, max_line_bytes=4096)
    except DatasetError as error:
        assert error.problems and all(str(p).startswith(str(path)) for p in error.problems)


def _importer(work: Path, index: int, content: bytes) -> None:
    case = CASES[index]
    source = case.write(_reset(work / "src"), content)
    out_dir = _reset(work / "out")
    try:
        import_to_file(case.make(), source, out_dir / "out.jsonl")
    except (ImportFormatError, ImportOptionError) as error:
        assert str(work / "src") in str(error), f"no corpus file named in {error}"
        assert not any(out_dir.iterdir()), "a failed import left a file behind"


def _seed(corpus: Path) -> None:
    corpus.mkdir(parents=True, exist_ok=True)
    (corpus / "validator").write_bytes(bytes([VALIDATOR]) + sample_path().read_bytes())
    for index, case in enumerate(CASES):
        (corpus / case.name).write_bytes(bytes([index]) + case.files[case.fuzzed])


def main() -> None:
    work, corpus = Path(sys.argv[1]), Path(sys.argv[2])
    _seed(corpus)

    def target(data: bytes) -> None:
        if not data:
            return
        if data[0] % (len(CASES) + 1) == VALIDATOR:
            _validator(work, data[1:])
        else:
            _importer(work, data[0] % (len(CASES) + 1), data[1:])

    atheris.Setup([sys.argv[0], str(corpus), *sys.argv[3:]], target)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
