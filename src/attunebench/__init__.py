"""AttuneBench: emotional intelligence of language models, measured against first-person gold."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("attunebench")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
