"""A run in its own process, for the kill -9 test: killable_run.py DATA OUT CACHE CALL_LOG."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from echo_task import EchoTask

from attunebench.engine import RunConfig, run
from attunebench.models import MockProvider
from attunebench.models.modelsfile import ModelEntry

CONCURRENCY = 4


def main() -> None:
    data, out, cache, call_log = (Path(arg) for arg in sys.argv[1:5])
    mock = MockProvider(latency_s=0.02, call_log=call_log)
    config = RunConfig(
        data=data,
        out=out,
        models=(ModelEntry(name="m", spec=mock.spec),),
        cache_path=cache,
        concurrency=CONCURRENCY,
        progress=False,
    )
    asyncio.run(run(config, providers={"m": mock}, tasks=[EchoTask()]))


if __name__ == "__main__":
    main()
