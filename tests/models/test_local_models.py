"""The Qwen GGUF is assembled from its six packaged parts and refused unless its header is Qwen's.

Tiny GGUF files written here with llama.cpp's own writer stand in for real ones, so the checks
run without the 400 MB model.
"""

from __future__ import annotations

from pathlib import Path

import pytest

gguf = pytest.importorskip("gguf", reason="the llm extra (gguf) is not installed")

from attunebench.models.local_models import LocalModelError, check_qwen_header  # noqa: E402


def tiny_gguf(path: Path, *, architecture: str, name: str, chat_template: str | None) -> Path:
    writer = gguf.GGUFWriter(str(path), architecture)
    writer.add_name(name)
    if chat_template is not None:
        writer.add_chat_template(chat_template)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_a_qwen_header_with_a_chat_template_is_accepted(tmp_path: Path) -> None:
    path = tiny_gguf(
        tmp_path / "q.gguf",
        architecture="qwen2",
        name="Qwen2.5 Coder 0.5B Instruct",
        chat_template="{% for m in messages %}{{ m.content }}{% endfor %}",
    )
    check_qwen_header(path)


@pytest.mark.parametrize(
    ("architecture", "name", "template", "says"),
    [
        ("llama", "Qwen2.5 Coder 0.5B Instruct", "t", "architecture 'llama'"),
        ("qwen2", "Qwen2.5 7B", "t", "name 'Qwen2.5 7B'"),
        ("qwen2", "Qwen2.5 Coder 0.5B Instruct", None, "no chat template"),
    ],
)
def test_any_other_file_is_refused_with_the_reason(
    tmp_path: Path, architecture: str, name: str, template: str | None, says: str
) -> None:
    path = tiny_gguf(
        tmp_path / "x.gguf", architecture=architecture, name=name, chat_template=template
    )
    with pytest.raises(LocalModelError, match=says):
        check_qwen_header(path)


def test_a_file_that_is_not_gguf_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "broken.gguf"
    path.write_bytes(b"not a model at all" * 10)
    with pytest.raises(LocalModelError, match="not a readable GGUF"):
        check_qwen_header(path)
