"""How long does importing each shared corpus take (read, map, write JSON Lines)?

Target: ESConv train (4 MB) in a couple of seconds at most. Reads the corpora from
`ATTUNEBENCH_DATA_DIR` (default ../shared/data); the last line printed is JSON:
{corpus: {"conversations": n, "seconds": s}}.

    .venv/bin/python benchmarks/import_speed.py [--quick]   (--quick: FailedESConv alone)
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from attunebench.data.importers import (
    ConvAI1Importer,
    DailyDialogImporter,
    ESConvImporter,
    GoEmotionsImporter,
    Importer,
    MELDImporter,
    TopicalChatImporter,
    USSImporter,
    import_to_file,
)
from attunebench.data.locations import corpus_dir, data_dir
from testkit import prerequisites

CASES: dict[str, tuple[str, Importer]] = {
    "esconv-train": ("esconv", ESConvImporter(variant="hf", split="train")),
    "esconv-all": ("esconv", ESConvImporter(variant="hf")),
    "esconv-failed": ("esconv", ESConvImporter(variant="failed")),
    "esconv-multiesc": ("esconv", ESConvImporter(variant="multiesc")),
    "dailydialog": ("dailydialog", DailyDialogImporter()),
    "meld": ("meld", MELDImporter()),
    "uss": ("uss", USSImporter()),
    "goemotions": ("goemotions", GoEmotionsImporter()),
    "convai1": ("convai1", ConvAI1Importer()),
    "convai1-hh": ("convai1", ConvAI1Importer(variant="human-human")),
    "topical-chat": ("topical_chat", TopicalChatImporter()),
}


QUICK_CASES = ("esconv-failed",)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="FailedESConv alone")
    args = parser.parse_args()
    prerequisites.shared_data(data_dir())
    cases = {name: CASES[name] for name in QUICK_CASES} if args.quick else CASES
    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for name, (corpus, importer) in cases.items():
            start = time.perf_counter()
            result = import_to_file(importer, corpus_dir(corpus), Path(folder) / f"{name}.jsonl")
            seconds = time.perf_counter() - start
            figures[name] = {"conversations": result.written, "seconds": round(seconds, 3)}
            print(f"{name:16} {result.written:6} conversations  {seconds:6.2f} s")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
