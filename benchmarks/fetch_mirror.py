"""How long does `attunebench data fetch --suite open-v1` take through a local mirror?

Serves the corpora folder (`ATTUNEBENCH_DATA_DIR`, else ../shared/data) on 127.0.0.1 in the
mirror layout and runs the command as a user would, in a fresh process writing to an empty
folder: the wall time includes start-up, `download_s` is what the command reports for the
downloads and checks. The last line printed is JSON:
{"suite", "files", "bytes", "wall_s", "download_s"}.

    .venv/bin/python benchmarks/fetch_mirror.py [--quick]   (--quick: convai1 alone, 1.7 MB)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from attunebench.data.locations import DATA_DIR_VARIABLE, DEFAULT_DATA_DIR
from testkit import prerequisites
from testkit.servers.mirror import MirrorServer, mirror_layout

SUMMARY = re.compile(r"(\d+) files fetched \(([\d,]+) bytes in ([\d.]+) s\)")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="convai1 alone")
    args = parser.parse_args()
    data = prerequisites.shared_data(Path(os.environ.get(DATA_DIR_VARIABLE) or DEFAULT_DATA_DIR))
    what = ["convai1"] if args.quick else ["--suite", "open-v1", "--accept-license", "esconv"]
    with MirrorServer(mirror_layout(data.resolve())) as mirror, tempfile.TemporaryDirectory() as to:
        cli = "from attunebench.cli import main; main()"
        command = [sys.executable, "-c", cli, "data", "fetch", *what]
        start = time.perf_counter()
        done = subprocess.run(
            [*command, "--mirror", mirror.base_url, "--to", to],
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - start
    print(done.stdout, end="")
    found = SUMMARY.search(done.stdout)
    if done.returncode != 0 or found is None:
        sys.exit(f"data fetch failed: {done.stderr.strip()}")
    files, received, seconds = found.groups()
    figures = {
        "suite": "convai1" if args.quick else "open-v1",
        "files": int(files),
        "bytes": int(received.replace(",", "")),
        "wall_s": round(wall, 2),
        "download_s": float(seconds),
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
