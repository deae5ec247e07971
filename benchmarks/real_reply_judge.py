"""Whether a judge tracks the person: its rubric score of ConvAI1's real bot replies against the
human's own thumb, as the `response` task's reference row `reference/real-reply` reports it.

Usage: python benchmarks/real_reply_judge.py [--judge proxy/minilm] [--split test]
       [--data-dir DIR] [--work DIR] [--quick]   (--quick: the first 3 conversations)

Imports ConvAI1's human-bot chats (`--split`, default test) with the project's importer, runs
`response` with `mock/a` writing the replies and `--judge` scoring them and the real replies
(`attunebench run`), then `attunebench report`. The JSON line printed last gives the items, the
real replies with a thumb, and the reference row's rubric means by thumb and `real_thumb_auroc`
(0.5: the judge does not track the person), each with its interval, and the seconds taken.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from testkit import prerequisites

REFERENCE = "reference/real-reply"
QUICK_CONVERSATIONS = 3
METRICS = ("score", "rubric", "real_rubric_thumb_up", "real_rubric_thumb_down", "real_thumb_auroc")


def cli(*args: str) -> None:
    command = [sys.executable, "-c", "from attunebench.cli import main; main()", *args]
    subprocess.run(command, check=True, capture_output=True, text=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    default = os.environ.get("ATTUNEBENCH_DATA_DIR", "../shared/data")
    parser.add_argument("--judge", default="proxy/minilm")
    parser.add_argument("--split", default="test", choices=("train", "test", "all"))
    parser.add_argument("--data-dir", type=Path, default=Path(default))
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--quick", action="store_true", help="the first 3 conversations")
    args = parser.parse_args()
    prerequisites.shared_data(args.data_dir)
    if args.judge.startswith("proxy/"):  # the proxy judges embed with the packaged encoder
        prerequisites.encoder_files()
    work = args.work or Path(tempfile.mkdtemp(prefix="attunebench-real-reply-"))
    work.mkdir(parents=True, exist_ok=True)
    data = work / "convai1.jsonl"
    started = time.perf_counter()
    convai1 = str(args.data_dir / "convai1")
    cli("data", "import", "convai1", convai1, "--split", args.split, "--out", str(data))
    run, report = work / "run", work / "report"
    subject = ["--task", "response", "--model", "mock/a", "--judge", args.judge]
    limit = ["--limit", str(QUICK_CONVERSATIONS)] if args.quick else []
    cli("run", "--data", str(data), *subject, *limit, "--out", str(run), "--no-progress")
    cli("report", str(run), "--out", str(report))
    summary = json.loads((report / "summary.json").read_text())
    rows = {r["metric"]: r for r in summary["scores"] if r["model"] == REFERENCE}
    result: dict[str, Any] = {
        "judge": args.judge,
        "split": args.split,
        "items": rows["score"]["n"],
        "conversations": rows["score"]["n_conversations"],
    }
    for metric in METRICS:
        row = rows.get(metric, {})
        result[metric] = [row.get("value"), row.get("ci_low"), row.get("ci_high")]
    result["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
