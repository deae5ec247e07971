"""baseline/knn on the tutorial's run (docs/tutorial.md): ESConv's MultiESC test split, its first
20 conversations, every task, knn fitted on MultiESC's valid split.

First a run that embeds the train split and stores it (`--store DIR` keeps it for the next
invocation; timed as `first_run_s`), as the tutorial's first run does. Then the same run into
fresh run directories, timed, alternately `--repeats` times, with knn's per-item work done as
before this change (`Before`: each query text embedded alone, one forward pass each; every
train example's labels mapped onto the item's label set for every item; the similarities by a
BLAS matrix-vector product) and as now (the texts of concurrent calls embedded together, the
mapping made once per label set, the similarities by einsum). Last line: JSON with the items,
calls, `before_s` and `after_s` (medians), the speed-up and the forward passes each way.
Needs the shared ESConv corpus (`ATTUNEBENCH_DATA_DIR`).
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


class Before(KnnBaseline):
    """knn's per-item work as it was: no batching, no shared mapping, BLAS matrix-vector."""

    passes = 0

    async def _embed(self, text: str) -> npt.NDArray[np.float32]:
        self.passes += 1
        rows = await asyncio.to_thread(self._fitted_encoder().encode, [text])
        return rows[0]

    def _mapped(self, kind: str, labels: tuple[str, ...]) -> list[list[str]]:
        found = super()._mapped(kind, labels)
        self._label_sets.clear()  # worked out again for every item
        return found

    def _similarities(self, kind: str, query: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        index = self._index(kind)
        product: npt.NDArray[np.float32] = index @ query
        return product


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
    parser.add_argument("--store", type=Path, default=None, help="keep the train embeddings here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        store = args.store or folder
        test, valid = split_files(folder)
        options = KnnOptions(train=valid)
        spec = f"baseline/knn?train={valid}"
        first_s, first = await timed(KnnBaseline(spec, options), test, folder / "warm", store)
        times: dict[str, list[float]] = {"before": [], "after": []}
        passes: dict[str, int] = {}
        for repeat in range(args.repeats):
            for way in times:
                provider = Before(spec, options) if way == "before" else KnnBaseline(spec, options)
                seconds, result = await timed(provider, test, folder / f"{way}-{repeat}", store)
                assert result.complete and result.totals.calls == first.totals.calls
                times[way].append(seconds)
                batcher = getattr(provider, "_queries", None)  # made on the first query
                passes[way] = getattr(provider if batcher is None else batcher, "passes", 0)
        median = {way: statistics.median(seconds) for way, seconds in times.items()}
        print(f"first run (embeds the train split unless stored): {first_s:.1f} s")
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
                    "first_run_s": round(first_s, 1),
                    "before_s": round(median["before"], 2),
                    "after_s": round(median["after"], 2),
                    "speedup": round(median["before"] / median["after"], 2),
                    "passes_before": passes["before"],
                    "passes_after": passes["after"],
                }
            )
        )


if __name__ == "__main__":
    asyncio.run(main())
