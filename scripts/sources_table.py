"""Write the sources table `attunebench data fetch` reads (src/attunebench/data/sources.json).

The upstream locations (repository, pinned commit, path) are those each corpus's SOURCE.md
records in the corpora folder; the licences are those the importers state; the citations are
SOURCE.md's. Each file's size and SHA-256 is taken from the suites' manifests where they hold
the file (and checked against the local copy), else computed from the local copy, which is a
byte-for-byte upstream file. Nothing of the corpora is written but their digests.

    python scripts/sources_table.py [--data DIR]     # DIR: default ../shared/data
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from attunebench.rundir import sha256_file
from attunebench.suite.manifest import load_manifest, suite_names

TABLE = Path(__file__).resolve().parents[1] / "src" / "attunebench" / "data" / "sources.json"
RAW = "https://raw.githubusercontent.com"

# corpus -> (licence, non-commercial or research only, citation, [(local file, repo, commit,
# upstream path)]), transcribed from SOURCE.md.
DANTORO = ("Dantoro/project_therapy", "72f2ccd4670a83c00611b90febbdf941be38516d")
ESCONV = ("thu-coai/Emotional-Support-Conversation", "f262d062ad74cb39b17ea476facc81568ddcba24")
MULTIESC = ("lwgkzl/MultiESC", "46834e134320253e51920a2f5d34f166335bd965")
TURING = ("deepmipt/turing-data", "958dd6706a989cb3f06265f78a64b032cfdd7e7d")
CONVAI = ("DeepPavlov/convai", "54d921f99606960941ece4865a396925dfc264f4")
TOPICAL = ("alexa/Topical-Chat", "7c939229cbcf6f55f6977b341a5a2f2fe982d53f")
EMPATHY = ("behavioral-data/Empathy-Mental-Health", "0e11f98901527550885dbf253bd2af92dbcec43b")
XDAILY = ("liuzeming01/XDailyDialog", "6e7ecf54c9f169215b4b8c18995c7aac74117127")
MELD = ("declare-lab/MELD", "2d2011b409d3ca2d7e94460cd007d434b1d0a102")
USS = ("sunnweiwei/user-satisfaction-simulation", "8ba06bd92570fd94d3ec0cb828aad45172be71b2")

Spec = tuple[str, tuple[str, str], str]  # (local file, (repo, commit), upstream path)


def _each(names: tuple[str, ...], local: str, source: tuple[str, str], upstream: str) -> list[Spec]:
    """One file spec per name: `local` and `upstream` with the name in their `{}`."""
    return [(local.format(name), source, upstream.format(name)) for name in names]


CORPORA: dict[str, tuple[str, bool, str, list[Spec]]] = {
    "esconv": (
        "CC BY-NC 4.0 (academic research use only)",
        True,
        "Liu, Zheng, Demasi, Sabour, Li, Yu, Jiang, Huang. Towards Emotional Support Dialog "
        "Systems. ACL 2021. MultiESC: Cheng et al. Improving Multi-turn Emotional Support "
        "Dialogue Generation with Lookahead Strategy Planning. EMNLP 2022.",
        [
            *_each(
                ("train", "valid", "test"),
                "{}.jsonl",
                DANTORO,
                "datasets/custom_corpus/esconv_data/{}.json",
            ),
            ("FailedESConv.json", ESCONV, "FailedESConv.json"),
            ("strategy.json", ESCONV, "strategy.json"),
            *_each(("valid", "test"), "multiesc/{}.jsonl", MULTIESC, "MultiESC/data/{}.txt"),
        ],
    ),
    "convai1": (
        "Apache-2.0",
        False,
        "The Conversational Intelligence Challenge: Human Evaluation Round (dataset "
        "description, 2017). Logacheva, Burtsev, Malykh et al., in The NIPS '17 Competition: "
        "Building Intelligent Systems, Springer 2018.",
        [
            ("data_1501534800.tar.gz", TURING, "data_1501534800.tar.gz"),
            ("dataset_description.pdf", TURING, "dataset_description.pdf"),
            ("LICENSE", TURING, "LICENSE"),
            ("upstream_README.md", TURING, "README.md"),
            ("upstream_eval_howto.md", CONVAI, "2017/eval_howto/index.md"),
        ],
    ),
    "topical_chat": (
        "CDLA-Sharing-1.0",
        False,
        "Gopalakrishnan, Hedayatnia, Chen, Gottardi, Kwatra, Venkatesh, Gabriel, Hakkani-Tur. "
        "Topical-Chat: Towards Knowledge-Grounded Open-Domain Conversations. Interspeech 2019. "
        "doi:10.21437/Interspeech.2019-3079",
        [
            *_each(
                ("valid_freq", "valid_rare", "test_freq", "test_rare"),
                "{}.json",
                TOPICAL,
                "conversations/{}.json",
            ),
            ("upstream_README.md", TOPICAL, "README.md"),
            ("DATALICENSE", TOPICAL, "DATALICENSE"),
            ("VERSION", TOPICAL, "VERSION"),
        ],
    ),
    "empathy_mental_health": (
        "non-commercial academic research (Althoff academic license)",
        True,
        "Sharma, Miner, Atkins, Althoff. A Computational Approach to Understanding Empathy "
        "Expressed in Text-Based Mental Health Support. EMNLP 2020.",
        _each(
            ("emotional-reactions", "interpretations", "explorations"),
            "{}-reddit.csv",
            EMPATHY,
            "dataset/{}-reddit.csv",
        ),
    ),
    "dailydialog": (
        "CC BY-NC-SA 4.0 (non-commercial, share-alike)",
        True,
        "Li, Su, Shen, Li, Cao, Niu. DailyDialog: A Manually Labelled Multi-turn Dialogue "
        "Dataset. IJCNLP 2017. Liu, Nie, Cai, Wang, Niu, Zhang, Sachan, Peng. XDailyDialog: A "
        "Multilingual Parallel Dialogue Corpus. ACL 2023.",
        _each(("dev", "test"), "en_{}_human.txt", XDAILY, "data/en_{}_human.txt"),
    ),
    "meld": (
        "GPL-3.0 (repository licence; the text is Friends dialogue, research use)",
        True,
        "Poria, Hazarika, Majumder, Naik, Cambria, Mihalcea. MELD: A Multimodal Multi-Party "
        "Dataset for Emotion Recognition in Conversation. ACL 2019.",
        _each(("train", "dev", "test"), "{}_sent_emo.csv", MELD, "data/MELD/{}_sent_emo.csv"),
    ),
    "uss": (
        "none stated (satisfaction annotations: research use; MultiWOZ MIT, ReDial CC BY 4.0)",
        True,
        "Sun, Zhang, Balog, Ren, Ren, Chen, de Rijke. Simulating User Satisfaction for the "
        "Evaluation of Task-oriented Dialogue Systems. SIGIR 2021.",
        _each(("MWOZ", "ReDial"), "{}.txt", USS, "dataset/{}.txt"),
    ),
    "goemotions": (
        "Apache-2.0 (comments are Reddit content; names masked as [NAME])",
        False,
        "Demszky, Movshovitz-Attias, Ko, Cowen, Nemade, Ravi. GoEmotions: A Dataset of "
        "Fine-Grained Emotions. ACL 2020.",
        _each(
            ("dev.tsv", "test.tsv", "emotions.txt", "ekman_mapping.json", "sentiment_mapping.json"),
            "{}",
            DANTORO,
            "datasets/GoEmotions/{}",
        ),
    ),
}


def manifest_digests() -> dict[tuple[str, str], str]:
    """(corpus, file) -> SHA-256, from every shipped suite manifest."""
    digests: dict[tuple[str, str], str] = {}
    for suite in suite_names():
        for part in load_manifest(suite).parts:
            for name, digest in part.files.items():
                digests[(part.corpus, name)] = digest
    return digests


def file_entry(
    data: Path,
    corpus: str,
    spec: Spec,
    known: dict[tuple[str, str], str],
) -> dict[str, object]:
    name, (repo, commit), upstream = spec
    local = data / corpus / name
    digest = sha256_file(local)
    expected = known.get((corpus, name), digest)
    if digest != expected:
        sys.exit(f"{local}: SHA-256 {digest}, the suites' manifests {expected}")
    return {
        "file": name,
        "url": f"{RAW}/{repo}/{commit}/{upstream}",
        "repo": repo,
        "commit": commit,
        "path": upstream,
        "size": local.stat().st_size,
        "sha256": expected,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("..") / "shared" / "data")
    data = parser.parse_args().data
    known = manifest_digests()
    count = sum(len(files) for *_, files in CORPORA.values())
    table = {
        corpus: {
            "license": license,
            "non_commercial": non_commercial,
            "citation": citation,
            "files": [file_entry(data, corpus, spec, known) for spec in files],
        }
        for corpus, (license, non_commercial, citation, files) in sorted(CORPORA.items())
    }
    document = {"format": "attunebench-sources/v1", "corpora": table}
    TABLE.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    sys.stdout.write(f"wrote {TABLE}: {count} files\n")


if __name__ == "__main__":
    main()
