"""Validation throughput and memory on a large generated file (sample conversations, new ids).

Usage: python benchmarks/data_validate.py [MEGABYTES]   (default 100; --quick: 1)
The last line printed is JSON: megabytes, conversations, seconds, MB/s, peak RSS growth in MB.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from attunebench.data.sample import sample_path
from attunebench.data.stats import StatsBuilder
from attunebench.data.validate import validate_file

QUICK_MEGABYTES = 1.0


def generate(path: Path, megabytes: float) -> int:
    lines = sample_path().read_text(encoding="utf-8").splitlines()
    target, written, count = megabytes * 1_000_000, 0, 0
    with open(path, "w", encoding="utf-8") as out:
        while written < target:
            record = json.loads(lines[count % len(lines)])
            record["id"] = f"bench-{count}"
            line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
            out.write(line)
            written += len(line.encode())
            count += 1
    return count


def peak_rss_mb() -> float:
    """This process's own peak (VmHWM): getrusage's ru_maxrss starts at the parent's peak, which
    Linux carries across fork and exec, and would hide the growth under a larger parent."""
    status = Path("/proc/self/status").read_text().splitlines()
    return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("megabytes", type=float, nargs="?", default=100.0)
    parser.add_argument("--quick", action="store_true", help="a 1 MB file")
    args = parser.parse_args()
    megabytes = QUICK_MEGABYTES if args.quick else args.megabytes
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "large.jsonl"
        count = generate(path, megabytes)
        size = path.stat().st_size / 1_000_000
        before = peak_rss_mb()
        start = time.perf_counter()
        builder = StatsBuilder()
        report = validate_file(path, on_valid=builder.add)
        seconds = time.perf_counter() - start
        growth = peak_rss_mb() - before
    assert report.ok and report.conversations == count
    print(f"validated {count} conversations ({size:.1f} MB) in {seconds:.1f} s, with stats")
    print(f"throughput {size / seconds:.1f} MB/s, {count / seconds:.0f} conversations/s")
    print(f"peak RSS grew by {growth:.1f} MB while validating")
    result = {
        "megabytes": round(size, 1),
        "conversations": count,
        "seconds": round(seconds, 2),
        "mb_per_s": round(size / seconds, 2),
        "rss_growth_mb": round(growth, 1),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
