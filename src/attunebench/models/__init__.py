"""Model providers behind one async protocol, addressed as `provider/model`.

Importing this package registers every provider prefix with `PROVIDERS`; each provider imports
its SDK only when a model of that prefix is made."""

from attunebench.models import anthropic as _anthropic  # noqa: F401  (registers anthropic/)
from attunebench.models import baselines as _baselines  # noqa: F401  (registers baseline/)
from attunebench.models import hf as _huggingface  # noqa: F401  (registers hf/)
from attunebench.models import llamacpp_server as _local  # noqa: F401  (registers local/)
from attunebench.models import mock as _mock  # noqa: F401  (registers mock/)
from attunebench.models import openai_compat as _openai  # noqa: F401  (registers openai/)
from attunebench.models import proxy as _proxy  # noqa: F401  (registers proxy/)
from attunebench.models import sim as _sim  # noqa: F401  (registers sim/)
from attunebench.models.base import GenerateParams, Message, ModelOutput, ProviderError
from attunebench.models.mock import MockProvider
from attunebench.models.registry import (
    PROVIDERS,
    ProviderConfigError,
    SpecError,
    make_provider,
    parse_spec,
    spec_kind,
)

__all__ = [
    "PROVIDERS",
    "GenerateParams",
    "Message",
    "MockProvider",
    "ModelOutput",
    "ProviderConfigError",
    "ProviderError",
    "SpecError",
    "make_provider",
    "parse_spec",
    "spec_kind",
]
