"""The study's model pool as providers, checked the way `collect init` checks them.

A study that names an option its provider does not take, a key variable that is not set, or a
server that cannot be reached must fail at `init`, in one line naming the file and the model,
not when the first participant is waiting for replies.
"""

from __future__ import annotations

import asyncio
import re

from attunebench.collect.study import Study
from attunebench.models import make_provider
from attunebench.models.base import Provider
from attunebench.models.registry import ProviderConfigError


class PoolError(ValueError):
    """A pool model cannot be made or reached; the message is one line naming file and model."""


async def open_pool(study: Study, file: str = "<study>") -> dict[str, Provider]:
    """One provider per pool model; PoolError (and nothing left open) if any cannot be made."""
    providers: dict[str, Provider] = {}
    try:
        for n, model in enumerate(study.models):
            where = f"{file}: models.{n} ({model.spec})"
            try:
                providers[model.spec] = make_provider(model.spec, **model.options)
            except TypeError as error:
                unknown = re.search(r"unexpected keyword argument '(\w+)'", str(error))
                if unknown is None:
                    raise PoolError(f"{where}: options: {error}") from None
                message = f"{where}: options: unknown option {unknown.group(1)!r}"
                raise PoolError(message) from None
            except ProviderConfigError as error:
                raise PoolError(f"{where}: {error}") from None
    except PoolError:
        await close_pool(providers)
        raise
    return providers


async def close_pool(providers: dict[str, Provider]) -> None:
    await asyncio.gather(*(provider.aclose() for provider in providers.values()))


def verify_pool(study: Study, file: str, reach: bool) -> None:
    """Make every provider and, if `reach`, reach its server (providers that have one); then
    close them all. PoolError on the first failure."""

    async def verify() -> None:
        providers = await open_pool(study, file)
        try:
            for n, model in enumerate(study.models):
                check = getattr(providers[model.spec], "check", None)
                if reach and check is not None:
                    try:
                        await check()
                    except ProviderConfigError as error:
                        raise PoolError(f"{file}: models.{n} ({model.spec}): {error}") from None
        finally:
            await close_pool(providers)

    asyncio.run(verify())
