"""baseline/knn on the tutorial's run (docs/tutorial.md): ESConv's MultiESC test split, its first
20 conversations, every task, knn fitted on MultiESC's valid split.

First a run that embeds the train split and stores it in a cache folder, as the tutorial's first
run does (timed as `prepare_s`; a later run loads the stored matrices). Then the same run into
fresh run directories, timed, with knn's per-item work done two ways, alternately `--repeats`
times: each call's query texts embedded on their own, one forward pass per text (how knn
worked before `QueryBatcher`), and the texts of concurrent calls embedded together. Last line:
JSON with the items, calls, `one_at_a_time_s`, `batched_s` (medians), the speed-up and the
forward passes each way. Needs the shared ESConv corpus (`ATTUNEBENCH_DATA_DIR`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
import numpy.typing as npt

from attunebench.data.importers import ESConvImporter
from attunebench.data.jsonl import write_conversations
from attunebench.data.locations import corpus_dir
from attunebench.engine import RunConfig, RunResult, run
from attunebench.models.baselines import KnnBaseline
from attunebench.models.baselines.knn import KnnOptions
from attunebench.models.modelsfile import ModelEntry


class OneAtATime(KnnBaseline):
    """knn as it embedded queries before: each text alone, in a thread, nothing remembered."""

    passes = 0

    async def _embed(self, text: str) -> npt.NDArray[np.float32]:
        self.passes += 1
        rows = await asyncio.to_thread(self._fitted_encoder().encode, [text])
        return rows[0]


def split_files(folder: Path) -> tuple[Path, Path]:
    paths = []
    for split in ("test", "valid"):
        importer = ESConvImporter(variant="multiesc", split=split)
        path = folder / f"{split}.jsonl"
        write_conversations(path, importer.read(corpus_dir("esconv"), Counter()))
        paths.append(path)
    return paths[0], paths[1]


async def timed(
    provider: KnnBaseline, data: Path, out: Path, cache: Path
) -> tuple[float, RunResult]:
    config = RunConfig(
        data=data,
        out=out,
        models=(ModelEntry.from_spec(provider.spec),),
        limit=20,
        cache_path=cache / "cache.sqlite",
        progress=False,
    )
    started = time.perf_counter()
    result = await run(config, providers={provider.spec: provider})
    return time.perf_counter() - started, result


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        test, valid = split_files(folder)
        options = KnnOptions(train=valid)
        spec = f"baseline/knn?train={valid}"
        prepare_s, first = await timed(KnnBaseline(spec, options), test, folder / "warm", folder)
        times: dict[str, list[float]] = {"one_at_a_time": [], "batched": []}
        passes: dict[str, int] = {}
        for repeat in range(args.repeats):
            for way in times:
                made = KnnBaseline if way == "batched" else OneAtATime
                provider = made(spec, options)
                seconds, result = await timed(provider, test, folder / f"{way}-{repeat}", folder)
                assert result.complete and result.totals.calls == first.totals.calls
                times[way].append(seconds)
                batcher = getattr(provider, "_queries", None)  # made on the first query
                passes[way] = getattr(provider if batcher is None else batcher, "passes", 0)
        median = {way: statistics.median(seconds) for way, seconds in times.items()}
        print(f"first run (embeds the train split): {prepare_s:.1f} s")
        for way, seconds in times.items():
            print(
                f"{way}: {', '.join(f'{s:.1f}' for s in seconds)} s; {passes[way]} forward passes"
            )
        print(
            json.dumps(
                {
                    "conversations": 20,
                    "items": first.planned,
                    "calls": first.totals.calls,
                    "first_run_s": round(prepare_s, 1),
                    "one_at_a_time_s": round(median["one_at_a_time"], 2),
                    "batched_s": round(median["batched"], 2),
                    "speedup": round(median["one_at_a_time"] / median["batched"], 2),
                    "passes_one_at_a_time": passes["one_at_a_time"],
                    "passes_batched": passes["batched"],
                }
            )
        )


if __name__ == "__main__":
    asyncio.run(main())
