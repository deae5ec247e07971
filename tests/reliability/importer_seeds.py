"""Small, valid corpora in each importer's own file format: the seeds the fuzz tests mutate.

Each case names the importer (with options that make it read just the seeded files), the files
a source folder holds, and which of them is mutated. Texts are invented; shapes follow each
corpus's SOURCE.md.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from attunebench.data.importers import (
    CsvImporter,
    DailyDialogImporter,
    EmpathyMentalHealthImporter,
    ESConvImporter,
    GoEmotionsImporter,
    Importer,
    MELDImporter,
    USSImporter,
)


@dataclass(frozen=True)
class Case:
    name: str
    make: Callable[[], Importer]
    files: dict[str, bytes]  # path inside the source folder -> content
    fuzzed: str  # the file whose bytes are mutated
    source_is_file: bool = False  # the importer reads one file (csv), not a folder

    def write(self, folder: Path, fuzzed: bytes) -> Path:
        """Lay the corpus out under `folder` with the fuzzed file's bytes; returns the source."""
        for name, content in self.files.items():
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(fuzzed if name == self.fuzzed else content)
        return folder / self.fuzzed if self.source_is_file else folder


def _jsonl(*records: object) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


_ESCONV_META = {
    "experience_type": "Current Experience",
    "emotion_type": "anxiety",
    "problem_type": "job crisis",
    "situation": "I may lose my job.",
    "survey_score": {
        "seeker": {
            "initial_emotion_intensity": "4",
            "empathy": "5",
            "relevance": "4",
            "final_emotion_intensity": "2",
        },
        "supporter": {"relevance": "5"},
    },
}
_HF_DIALOGUES = [
    {
        **_ESCONV_META,
        "dialog": [
            {"text": "Hi, are you there?", "speaker": "sys", "strategy": "Question"},
            {"text": "I'm scared I will lose my job.", "speaker": "usr"},
            {
                "text": "That sounds frightening.",
                "speaker": "sys",
                "strategy": "Reflection of feelings",
            },
            {"text": "It is. Thank you.", "speaker": "usr"},
            {"text": "What makes you think so?", "speaker": "sys", "strategy": "Question"},
        ],
    },
    {
        **_ESCONV_META,
        "emotion_type": "sadness",
        "situation": "My dog died.",
        "dialog": [
            {"text": "My dog died last week.", "speaker": "usr"},
            {"text": "I'm so sorry.", "speaker": "sys", "strategy": "Affirmation and Reassurance"},
        ],
    },
]
_MULTIESC = [
    {
        "situation": d["situation"],
        "dialog": [
            {"speaker": run, "feedback": 4 if run == "usr" else None}
            for i, run in enumerate(u["speaker"] for u in d["dialog"])  # type: ignore[index]
            if i == 0 or d["dialog"][i - 1]["speaker"] != run  # type: ignore[index]
        ],
    }
    for d in _HF_DIALOGUES
]
_FAILED = [
    {
        **_ESCONV_META,
        "dialog": [
            {"speaker": "speaker", "annotation": {}, "content": "Hey there\n"},
            {
                "speaker": "listener",
                "annotation": {"strategy": "Questions"},
                "content": "Hi, how are you?",
            },
            {"speaker": "speaker", "annotation": {"feedback": "4"}, "content": "Not great.\n"},
            {
                "speaker": "listener",
                "annotation": {"strategy": "Other"},
                "content": "I am with you.",
            },
        ],
    },
]

_SLEEPLESS = "I can't sleep, everything feels pointless."


def _empathy(levels: str, rationale: str) -> bytes:
    """One mechanism's file: the same three (post, reply) rows, with this mechanism's levels."""
    rows = [
        ("sp_id", "rp_id", "seeker_post", "response_post", "level", "rationales"),
        ("p1", "r1", _SLEEPLESS, "I'm so sorry, that sounds awful.", levels[0], rationale),
        ("p1", "r2", _SLEEPLESS, "Have you tried melatonin?", levels[1], ""),
        ("p2", "r3", "My exam went badly.", "What happened in the exam?", levels[2], ""),
    ]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode()


CASES = (
    Case(
        "esconv-hf",
        lambda: ESConvImporter(variant="hf", split="train"),
        {"train.jsonl": _jsonl(*_HF_DIALOGUES)},
        "train.jsonl",
    ),
    Case(
        "esconv-failed",
        lambda: ESConvImporter(variant="failed"),
        {"FailedESConv.json": json.dumps(_FAILED, indent=1).encode()},
        "FailedESConv.json",
    ),
    Case(
        "esconv-multiesc",
        lambda: ESConvImporter(variant="multiesc", split="valid"),
        {"valid.jsonl": _jsonl(*_HF_DIALOGUES), "multiesc/valid.jsonl": _jsonl(*_MULTIESC)},
        "multiesc/valid.jsonl",
    ),
    Case(
        "dailydialog",
        lambda: DailyDialogImporter(split="valid"),
        {
            "en_dev_human.txt": (
                b"Can you manage chopsticks ? __eou__ Why not ? See . __eou__"
                b" Good mastery . __eou__\t1\t2 1 2\t0 0 4\n"
                b"Mike's Mechanics . Can I help ? __eou__ Yes , please . __eou__\t8\t2 2\t0 4\n"
            )
        },
        "en_dev_human.txt",
    ),
    Case(
        "meld",
        lambda: MELDImporter(split="valid"),
        {
            "dev_sent_emo.csv": (
                "Sr No.,Utterance,Speaker,Emotion,Sentiment,Dialogue_ID,Utterance_ID\n"
                '1,"Oh my God, he\u2019s lost it.",Phoebe,sadness,negative,0,0\n'
                "2,What?,Monica,surprise,negative,0,1\n"
                "3,I said so.,Phoebe,anger,negative,0,2\n"
                '4,"Or, we could go.",Ross,neutral,neutral,1,0\n'
                "5,Fine.,Rachel,joy,positive,1,1\n"
            ).encode()
        },
        "dev_sent_emo.csv",
    ),
    Case(
        "uss",
        lambda: USSImporter(part="mwoz"),
        {
            "MWOZ.txt": (
                b"USER\tI want a cheap restaurant.\tRestaurant-Inform\t3,3,3\n"
                b"SYSTEM\tThe Missing Sock is cheap.\tRestaurant-Inform\t\n"
                b"USER\tWhat is the address?\tRestaurant-Request\t4,3,4\n"
                b"SYSTEM\tFinders Corner.\tgeneral-reqmore\t\n"
                b"USER\tOVERALL\t\t4,4,5\n"
                b"\n"
                b"USER\tA taxi please.\tTaxi-Inform\t3,3,3\n"
                b"SYSTEM\tBooked.\tTaxi-Inform\t\n"
                b"USER\tOVERALL\t\t5,5,5\n"
            )
        },
        "MWOZ.txt",
    ),
    Case(
        "goemotions",
        lambda: GoEmotionsImporter(split="valid"),
        {
            "emotions.txt": b"admiration\namusement\nanger\nsadness\nneutral\n",
            "dev.tsv": (
                b"Is this in New Orleans?? I really feel like it is.\t4\tedgurhb\n"
                b'"You know the answer, man"\t2,3\tee84bjg\n'
                b"I've never been this sad in my life!\t3\tedcu99z\n"
            ),
        },
        "dev.tsv",
    ),
    Case(
        "empathy_mental_health",
        EmpathyMentalHealthImporter,
        {
            "emotional-reactions-reddit.csv": _empathy("102", "I'm so sorry|"),
            "interpretations-reddit.csv": _empathy("201", "that sounds awful|"),
            "explorations-reddit.csv": _empathy("010", ""),
        },
        "interpretations-reddit.csv",
    ),
    Case(
        "csv-own-labels",
        lambda: CsvImporter(
            conversation_col=["season", "scene"],
            speaker_col="who",
            text_col="text",
            emotion_col="emotion",
            behavior_col="code",
            order_col="pos",
            annotator_col="coder",
            context_col=["topic=genre", "quality"],
            taxonomy_from_data=True,
        ),
        {
            "scenes.csv": (
                b"season,scene,pos,coder,who,text,emotion,code,genre,quality\n"
                b"1,1,1,a,me,My cat is missing.,worried,,pets,good\n"
                b'1,1,1,b,me,My cat is missing.,"worried,sad",,,good\n'
                b"1,1,2,a,you,When did you last see her?,,OQ,,\n"
                b"1,1,2,b,you,When did you last see her?,,OQ,,\n"
                b"1,2,1,a,me,She came back!,Relieved,,,\n"
                b"2,1,1,a,me,New season.,calm,,,\n"
            )
        },
        "scenes.csv",
        source_is_file=True,
    ),
    Case(
        "csv",
        lambda: CsvImporter(
            conversation_col=["conv"],
            speaker_col="who",
            text_col="text",
            emotion_col="emotion",
            behavior_col="behavior",
            rating_col="rating",
            rating_low=1,
            rating_high=5,
            provenance="first-person",
        ),
        {
            "chats.csv": (
                b"conv,who,text,emotion,behavior,rating\n"
                b"a,me,I failed my exam.,sadness,,\n"
                b'a,bot,"That is hard, I\'m sorry.",,validation,4\n'
                b"a,me,Thanks.,gratitude,,\n"
                b"b,me,I got the job!,joy,,\n"
                b"b,bot,Congratulations!,,affirmation,5\n"
            )
        },
        "chats.csv",
        source_is_file=True,
    ),
)
