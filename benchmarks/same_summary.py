"""Does a change leave every figure as it was? summary.json, byte for byte, before and after.

The analysis benchmark's synthetic runs (`analysis_speed.py`: 11 models x 4 tasks x 3,000
items with 2,000 resamples, and its quick run: 3 models in 20 conversations, 200 resamples)
are written once, by this checkout, into one folder (the summary names it); then each run's
`summary.json` is computed twice, each in a process of its own: with this checkout's source
first on the path, and with the source of the commit `--against` names (HEAD by default: the
change not yet committed), taken out of git into a scratch folder. A change meant to make the
analysis faster, or to move its code, must leave both files identical. The last line is JSON;
the status is 1 where a summary differs.

    .venv/bin/python benchmarks/same_summary.py [--against REV] [--quick]

`--quick`: the quick run alone.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from analysis_speed import (
    CONVERSATIONS,
    MODELS,
    QUICK_CONVERSATIONS,
    QUICK_MODELS,
    QUICK_RESAMPLES,
    plan,
)
from planted.synthetic import write_run
from testkit.prerequisites import missing

REPO = Path(__file__).resolve().parents[1]
RESAMPLES = 2000
# Run in a process whose path starts with one source tree: the summary of a run folder.
SUMMARY = """
import sys
from pathlib import Path
from attunebench.analysis import Options, build_summary, load_runs, summary_json
runs = load_runs([Path(sys.argv[1])])
summary = build_summary(runs, Options(seed=0, resamples=int(sys.argv[2])))
Path(sys.argv[3]).write_text(summary_json(summary))
"""


def source_at(revision: str, into: Path) -> Path:
    """The package source of a commit (`src/` out of `git archive`), under `into`."""
    found = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", revision, "src"],
        capture_output=True,
        check=False,
    )
    if found.returncode != 0:
        reason = found.stderr.decode(errors="replace").strip().splitlines()
        missing(f"a git checkout holding {revision} ({reason[-1] if reason else 'git failed'})")
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=found.stdout, check=True)
    return into / "src"


def summary_of(source: Path, run: Path, resamples: int, out: Path) -> bytes:
    """summary.json of `run` as the source at `source` computes it."""
    env = {**os.environ, "PYTHONPATH": str(source)}
    command = [sys.executable, "-c", SUMMARY, str(run), str(resamples), str(out)]
    subprocess.run(command, env=env, check=True)
    return out.read_bytes()


def compared(before: bytes, after: bytes) -> dict[str, Any]:
    """Whether two summaries are identical, their sizes and digests, and the first line that
    differs (None: none)."""
    lines = zip(before.splitlines(), after.splitlines(), strict=False)
    first = next((n for n, (a, b) in enumerate(lines, 1) if a != b), None)
    if first is None and before != after:
        first = min(before.count(b"\n"), after.count(b"\n")) + 1  # one is the other cut short
    return {
        "identical": before == after,
        "bytes": [len(before), len(after)],
        "sha256": [hashlib.sha256(text).hexdigest()[:16] for text in (before, after)],
        "first_differing_line": first,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--against", default="HEAD", help="the commit to compare with")
    parser.add_argument("--quick", action="store_true", help="the quick run alone")
    args = parser.parse_args()
    runs = {"quick": (QUICK_MODELS, QUICK_CONVERSATIONS, QUICK_RESAMPLES)}
    if not args.quick:
        runs["full"] = (MODELS, CONVERSATIONS, RESAMPLES)
    result: dict[str, Any] = {"against": args.against}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        before = source_at(args.against, folder / "before")
        for name, (models, conversations, resamples) in runs.items():
            run = write_run(folder / name, plan(models, conversations))
            texts = [
                summary_of(source, run, resamples, folder / f"{name}-{side}.json")
                for side, source in (("before", before), ("after", REPO / "src"))
            ]
            result[name] = compared(*texts)
    print(json.dumps(result))
    if not all(result[name]["identical"] for name in runs):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
