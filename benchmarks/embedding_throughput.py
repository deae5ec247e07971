"""Sentence-encoder throughput: all-MiniLM-L6-v2 (the packaged copy) on this machine's CPUs.

Embeds the user messages and replies of the shipped sample dataset, repeated to `--sentences`,
in the encoder's batches, after one warm-up batch. Then the same texts through `encode_stored`
(knn's path for a train split: chunks an interrupt can stop, the matrix kept as .npy) twice
into a fresh folder: the first encodes and stores, the second loads. Last line: JSON with
`sentences_per_s`, `stored_first_s` and `stored_again_s`. `--quick`: 32 sentences.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from attunebench.data.jsonl import iter_conversations
from attunebench.data.sample import sample_path
from attunebench.models.embeddings import DEFAULT_BATCH_SIZE, encode_stored
from testkit import prerequisites

QUICK_SENTENCES = 32


def sample_texts() -> list[str]:
    texts = []
    for conversation in iter_conversations(sample_path()):
        for turn in conversation.turns:
            texts.append(turn.user)
            texts.extend(response.text for response in turn.responses)
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sentences", type=int, default=1024)
    parser.add_argument("--encoder", default=None, help="model name or folder")
    parser.add_argument("--quick", action="store_true", help="32 sentences")
    args = parser.parse_args()
    if args.quick:
        args.sentences = QUICK_SENTENCES

    started = time.perf_counter()
    encoder = prerequisites.encoder(args.encoder)
    load_s = time.perf_counter() - started
    base = sample_texts()
    texts = [base[i % len(base)] for i in range(args.sentences)]
    encoder.encode(texts[:DEFAULT_BATCH_SIZE])  # warm-up

    started = time.perf_counter()
    encoder.encode(texts)
    elapsed = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        encode_stored(encoder, texts, Path(folder))
        stored_first_s = time.perf_counter() - started
        started = time.perf_counter()
        encode_stored(encoder, texts, Path(folder))
        stored_again_s = time.perf_counter() - started
    mean_chars = sum(map(len, texts)) / len(texts)
    print(f"encoder {encoder.name}: loaded in {load_s:.1f} s")
    print(f"{len(texts)} sentences (mean {mean_chars:.0f} chars) in {elapsed:.2f} s")
    print(f"stored: encoded in {stored_first_s:.2f} s, loaded again in {stored_again_s:.3f} s")
    print(
        json.dumps(
            {
                "encoder": encoder.name,
                "sentences": len(texts),
                "batch_size": DEFAULT_BATCH_SIZE,
                "mean_chars": round(mean_chars, 1),
                "cpus": os.cpu_count(),
                "load_s": round(load_s, 2),
                "seconds": round(elapsed, 3),
                "sentences_per_s": round(len(texts) / elapsed, 1),
                "stored_first_s": round(stored_first_s, 3),
                "stored_again_s": round(stored_again_s, 4),
            }
        )
    )


if __name__ == "__main__":
    main()
