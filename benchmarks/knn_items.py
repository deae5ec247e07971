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
Needs the shared ESConv corpus (`ATTUNEBENCH_DATA_DIR`). `--quick`: 1 test conversation
against the first 3 of valid, once each way.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
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
from testkit import prerequisites

CONVERSATIONS = 20
QUICK_CONVERSATIONS, QUICK_TRAIN = 1, 3


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
        index = self._index(kind)  # (examples, texts, dimension); query: (texts, dimension)
        texts = range(query.shape[0])
        product: npt.NDArray[np.float32] = sum(index[:, t, :] @ query[t] for t in texts)
        return product / query.shape[0]


def split_files(folder: Path, first: int | None = None) -> tuple[Path, Path]:
    """MultiESC's test and valid splits (their `first` conversations, where given)."""
    paths = []
    for split in ("test", "valid"):
        importer = ESConvImporter(variant="multiesc", split=split)
        path = folder / f"{split}.jsonl"
        found = importer.read(prerequisites.shared_data(corpus_dir("esconv")), Counter())
        write_conversations(path, itertools.islice(found, first))
        paths.append(path)
    return paths[0], paths[1]


async def timed(
    provider: KnnBaseline, data: Path, out: Path, cache: Path, limit: int = CONVERSATIONS
) -> tuple[float, RunResult]:
    config = RunConfig(
        data=data,
        out=out,
        models=(ModelEntry.from_spec(provider.spec),),
        limit=limit,
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
    parser.add_argument("--quick", action="store_true", help="1 conversation against 3, once")
    args = parser.parse_args()
    conversations, train = (
        (QUICK_CONVERSATIONS, QUICK_TRAIN) if args.quick else (CONVERSATIONS, None)
    )
    if args.quick:
        args.repeats = 1
    prerequisites.encoder()
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        store = args.store or folder
        test, valid = split_files(folder, train)
        options = KnnOptions(train=valid)
        spec = f"baseline/knn?train={valid}"
        first_s, first = await timed(
            KnnBaseline(spec, options), test, folder / "warm", store, conversations
        )
        times: dict[str, list[float]] = {"before": [], "after": []}
        passes: dict[str, int] = {}
        for repeat in range(args.repeats):
            for way in times:
                provider = Before(spec, options) if way == "before" else KnnBaseline(spec, options)
                out = folder / f"{way}-{repeat}"
                seconds, result = await timed(provider, test, out, store, conversations)
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
                    "conversations": conversations,
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
